// Kernels the wasm backend lacks, registered from TF.js ops it has. Conv2DBackpropFilter is missing, so
// a plain tfjs-layers conv model cannot train on wasm; this one computes the filter gradient as a
// forward convolution (see conv.ts), which makes extracted models and the test references train there.
import type { TF, Tensor } from './tf.js';
import { conv2dFilterGrad, type Padding } from './conv.js';

interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}

interface WasmBackend {
  incRef(id: object): void;
  readSync(id: object): Float32Array;
  makeOutput(shape: number[], dtype: string): TensorInfo;
  typedArrayFromHeap(info: TensorInfo): Float32Array;
}

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
      maxPoolGrad(wasm.readSync(input.dataId), input.shape, wasm.readSync(dy.dataId), dy.shape, pair(a.filterSize), pair(a.strides), a.pad, wasm.typedArrayFromHeap(out));
      return out as never;
    },
  });
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
