// Kernels the wasm backend lacks, registered from TF.js ops it has. Conv2DBackpropFilter is missing, so
// a plain tfjs-layers conv model cannot train on wasm; this one computes the filter gradient as a
// forward convolution (see conv.ts), which makes extracted models and the test references train there.
//
// The JavaScript kernels here read and write the wasm heap in place (typedArrayFromHeap views), never
// through readSync, which copies a tensor's whole buffer out of the heap. Views are taken after the
// output is allocated: an allocation may grow the heap, which detaches earlier views.
import type { TF, Tensor } from './tf.js';
import { conv2dFilterGrad, type Padding } from './conv.js';

interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}

interface WasmBackend {
  incRef(id: object): void;
  makeOutput(shape: number[], dtype: string): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array | Int32Array | Uint8Array;
}

type KernelFunc = Parameters<TF['registerKernel']>[0]['kernelFunc'];

let registered = false;

export function registerWasmKernels(tf: TF): void {
  if (registered) return;
  registered = true;
  // TF.js 4.22's wasm MaxPoolGrad drops gradients whose window maximum is negative (it starts from 0,
  // not -inf); this one follows the cpu backend: the first maximum of each window gets the gradient.
  if (tf.getKernel('MaxPoolGrad', 'wasm')) tf.unregisterKernel('MaxPoolGrad', 'wasm');
  tf.registerKernel({
    kernelName: 'MaxPoolGrad',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const wasm = backend as unknown as WasmBackend;
      const { dy, input } = inputs as unknown as { dy: TensorInfo; input: TensorInfo };
      const a = attrs as unknown as { filterSize: number | number[]; strides: number | number[]; pad: unknown };
      const out = wasm.makeOutput(input.shape, 'float32');
      const view = (t: TensorInfo) => wasm.typedArrayFromHeap(t) as Float32Array;
      maxPoolGrad(view(input), input.shape, view(dy), dy.shape, pair(a.filterSize), pair(a.strides), a.pad, view(out));
      return out as never;
    },
  });
  registerSliceKernels(tf);
  registerSegmentSum(tf);
  tf.registerKernel({
    kernelName: 'Conv2DBackpropFilter',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const a = attrs as unknown as { strides: number | number[]; pad: unknown; dataFormat: string; filterShape: number[] };
      if (a.dataFormat !== 'NHWC' || (a.pad !== 'valid' && a.pad !== 'same')) {
        throw new Error(`netc's wasm Conv2DBackpropFilter supports NHWC with 'valid' or 'same' padding, not ${a.dataFormat}/${String(a.pad)}`);
      }
      const engine = tf.engine();
      const strides = typeof a.strides === 'number' ? [a.strides, a.strides] : a.strides;
      const wasm = backend as unknown as { incRef(id: object): void };
      // the backend counts references per buffer: a Tensor made over an input's buffer takes one, which
      // its disposal at the end of the tidy gives back
      const asTensor = (info: TensorInfo) => {
        wasm.incRef(info.dataId);
        return engine.makeTensorFromTensorInfo(info as never) as Tensor;
      };
      const { x, dy } = inputs as unknown as { x: TensorInfo; dy: TensorInfo };
      const result = tf.tidy(() => conv2dFilterGrad(tf, asTensor(x), asTensor(dy), a.filterShape, strides, a.pad as Padding));
      // hand the result's buffer to the kernel's output, as the wasm Identity kernel does
      wasm.incRef(result.dataId);
      const out = { dataId: result.dataId, shape: result.shape, dtype: result.dtype };
      result.dispose();
      return out as never;
    },
  });
}

const pair = (v: number | number[]): [number, number] => (typeof v === 'number' ? [v, v] : [v[0], v[1]]);

/** TF's padding before the first row/column of a pooling window, for 'valid', 'same' or a number. */
function padBefore(pad: unknown, size: number, out: number, window: number, stride: number): number {
  if (typeof pad === 'number') return pad;
  if (pad !== 'same') return 0;
  return Math.floor(Math.max((out - 1) * stride + window - size, 0) / 2);
}

/**
 * dx of a max pool: each window's dy goes to the first maximum of its window (the cpu backend's rule).
 * Windows that do not overlap and lie inside the input (stride = window, no padding before: LeNet's 2x2
 * pools) take a loop without bounds checks, over each window's channels at once; the values are the same.
 */
export function maxPoolGrad(
  x: Float32Array,
  [b, h, w, c]: number[],
  dy: Float32Array,
  [, oh, ow]: number[],
  [kh, kw]: [number, number],
  [sh, sw]: [number, number],
  pad: unknown,
  dx: Float32Array,
): void {
  dx.fill(0);
  const top = padBefore(pad, h, oh, kh, sh);
  const left = padBefore(pad, w, ow, kw, sw);
  if (top === 0 && left === 0 && sh === kh && sw === kw && (oh - 1) * sh + kh <= h && (ow - 1) * sw + kw <= w) {
    const rowStride = w * c;
    if (kh === 2 && kw === 2) {
      for (let n = 0; n < b; n++) {
        for (let i = 0; i < oh; i++) {
          for (let j = 0; j < ow; j++) {
            const p00 = ((n * h + 2 * i) * w + 2 * j) * c;
            const p01 = p00 + c;
            const p10 = p00 + rowStride;
            const p11 = p10 + c;
            const dyAt = ((n * oh + i) * ow + j) * c;
            for (let ch = 0; ch < c; ch++) {
              // the first maximum in the order (0,0), (0,1), (1,0), (1,1), as the general loop takes it
              let at = p00 + ch;
              let best = x[at];
              if (x[p01 + ch] > best) {
                best = x[p01 + ch];
                at = p01 + ch;
              }
              if (x[p10 + ch] > best) {
                best = x[p10 + ch];
                at = p10 + ch;
              }
              if (x[p11 + ch] > best) at = p11 + ch;
              dx[at] = dy[dyAt + ch];
            }
          }
        }
      }
      return;
    }
    for (let n = 0; n < b; n++) {
      for (let i = 0; i < oh; i++) {
        for (let j = 0; j < ow; j++) {
          const corner = ((n * h + i * sh) * w + j * sw) * c;
          const dyAt = ((n * oh + i) * ow + j) * c;
          for (let ch = 0; ch < c; ch++) {
            let at = corner + ch;
            let best = x[at];
            for (let r = 0; r < kh; r++) {
              for (let q = 0; q < kw; q++) {
                const k = corner + r * rowStride + q * c + ch;
                if (x[k] > best) {
                  best = x[k];
                  at = k;
                }
              }
            }
            dx[at] += dy[dyAt + ch];
          }
        }
      }
    }
    return;
  }
  for (let n = 0; n < b; n++) {
    for (let i = 0; i < oh; i++) {
      for (let j = 0; j < ow; j++) {
        for (let ch = 0; ch < c; ch++) {
          let best = -Infinity;
          let at = -1;
          for (let r = i * sh - top; r < i * sh - top + kh; r++) {
            if (r < 0 || r >= h) continue;
            for (let q = j * sw - left; q < j * sw - left + kw; q++) {
              if (q < 0 || q >= w) continue;
              const k = ((n * h + r) * w + q) * c + ch;
              if (x[k] > best || at < 0) {
                best = x[k];
                at = k;
              }
            }
          }
          if (at >= 0) dx[at] += dy[((n * oh + i) * ow + j) * c + ch];
        }
      }
    }
  }
}

// ---- Slice, SplitV, Unpack ------------------------------------------------------------------------------

/**
 * TF.js 4.22's wasm Slice reads its input with readSync, a copy of the whole input, for every slice; its
 * SplitV and Unpack call that Slice once per output, so cutting a tensor in k pieces copies it k times.
 * These copy only what each slice holds, heap to heap: the same values. String tensors go to the
 * backend's own kernels.
 */
/**
 * UnsortedSegmentSum, the gradient TF.js takes of a gather (tf.layers.embedding's): the rows of x summed into
 * the rows their segment ids name, in row order, as the cpu backend sums them. Without it an embedding model
 * of tfjs-layers (an extracted member, the equivalence tests' reference) cannot train on wasm.
 */
function registerSegmentSum(tf: TF): void {
  if (tf.getKernel('UnsortedSegmentSum', 'wasm')) return;
  tf.registerKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const wasm = backend as unknown as WasmBackend;
      const { x, segmentIds } = inputs as unknown as { x: TensorInfo; segmentIds: TensorInfo };
      const segments = (attrs as unknown as { numSegments: number }).numSegments;
      const rows = segmentIds.shape.reduce((a, b) => a * b, 1);
      const inner = x.shape.slice(segmentIds.shape.length);
      const out = wasm.makeOutput([segments, ...inner], 'float32');
      const [xs, ids, sums] = [wasm.typedArrayFromHeap(x), wasm.typedArrayFromHeap(segmentIds), wasm.typedArrayFromHeap(out)];
      const width = inner.reduce((a, b) => a * b, 1);
      sums.fill(0);
      for (let r = 0; r < rows; r++) {
        const id = ids[r];
        if (id < 0 || id >= segments) continue;
        for (let c = 0; c < width; c++) sums[id * width + c] += xs[r * width + c];
      }
      return out as never;
    },
  });
}

function registerSliceKernels(tf: TF): void {
  const original = (name: string) => tf.getKernel(name, 'wasm')?.kernelFunc;
  const slice0 = original('Slice');
  const splitV0 = original('SplitV');
  const unpack0 = original('Unpack');
  if (!slice0 || !splitV0 || !unpack0) return;
  const replace = (name: string, kernelFunc: KernelFunc) => {
    tf.unregisterKernel(name, 'wasm');
    tf.registerKernel({ kernelName: name, backendName: 'wasm', kernelFunc });
  };
  replace('Slice', (args) => {
    const { x } = args.inputs as unknown as { x: TensorInfo };
    if (x.dtype === 'string') return slice0(args);
    const { begin, size } = args.attrs as unknown as { begin: number | number[]; size?: number | number[] };
    const [begin_, size_] = tf.slice_util.parseSliceParams(x as never, begin, size);
    return sliceOf(args.backend as unknown as WasmBackend, x, begin_, size_) as never;
  });
  replace('SplitV', (args) => {
    const { x } = args.inputs as unknown as { x: TensorInfo };
    if (x.dtype === 'string') return splitV0(args);
    const { numOrSizeSplits, axis } = args.attrs as unknown as { numOrSizeSplits: number | number[]; axis: number };
    const ax = tf.util.parseAxisParam(axis, x.shape)[0];
    const sizes = tf.backend_util.prepareSplitSize(x as never, numOrSizeSplits, ax) as number[];
    const begin = new Array<number>(x.shape.length).fill(0);
    return sizes.map((s) => {
      const size = x.shape.slice();
      size[ax] = s;
      const out = sliceOf(args.backend as unknown as WasmBackend, x, begin.slice(), size);
      begin[ax] += s;
      return out;
    }) as never;
  });
  replace('Unpack', (args) => {
    const { value } = args.inputs as unknown as { value: TensorInfo };
    if (value.dtype === 'string') return unpack0(args);
    let { axis } = args.attrs as unknown as { axis: number };
    if (axis < 0) axis += value.shape.length;
    const outShape = value.shape.filter((_, i) => i !== axis);
    const size = value.shape.slice();
    size[axis] = 1;
    return Array.from({ length: value.shape[axis] }, (_, i) => {
      const begin = new Array<number>(value.shape.length).fill(0);
      begin[axis] = i;
      const out = sliceOf(args.backend as unknown as WasmBackend, value, begin, size);
      return { dataId: out.dataId, dtype: out.dtype, shape: outShape };
    }) as never;
  });
}

/** x[begin : begin + size] as a new tensor, copied run by run from x's heap buffer. */
function sliceOf(backend: WasmBackend, x: TensorInfo, begin: number[], size: number[]): TensorInfo {
  const out = backend.makeOutput(size, x.dtype);
  const total = size.reduce((a, b) => a * b, 1);
  if (total === 0) return out;
  const from = backend.typedArrayFromHeap(x);
  const to = backend.typedArrayFromHeap(out);
  const rank = x.shape.length;
  // the innermost axes that the slice takes whole join the last one: one copy per run
  let inner = rank - 1;
  while (inner > 0 && begin[inner] === 0 && size[inner] === x.shape[inner]) inner--;
  const strides = new Array<number>(rank).fill(1);
  for (let i = rank - 2; i >= 0; i--) strides[i] = strides[i + 1] * x.shape[i + 1];
  const run = size.slice(inner).reduce((a, b) => a * b, 1);
  if (inner === 0 || rank === 0) {
    const start = rank === 0 ? 0 : begin[0] * strides[0];
    to.set(from.subarray(start, start + run));
    return out;
  }
  // odometer over the outer axes 0..inner-1
  const index = new Array<number>(inner).fill(0);
  let offset = 0;
  for (let i = 0; i < rank; i++) offset += begin[i] * strides[i];
  for (let written = 0; written < total; written += run) {
    to.set(from.subarray(offset, offset + run), written);
    for (let axis = inner - 1; axis >= 0; axis--) {
      offset += strides[axis];
      if (++index[axis] < size[axis]) break;
      offset -= strides[axis] * size[axis];
      index[axis] = 0;
    }
  }
  return out;
}
