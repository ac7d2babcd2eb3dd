// A trainable conv2d whose gradients are themselves forward convolutions. The wasm backend has no
// Conv2DBackpropFilter kernel and a slow conv2dTranspose, but a fast forward Conv2D (XNNPACK); routing
// both gradients through forward convs trains on every backend (see bench/NOTES.md). One
// implementation everywhere keeps the lowerings and backends computing the same thing.
import type { TF, Tensor, Tensor4D } from './tf.js';
import { memberSlices } from './matmul.js';
import { kernel } from './kernel.js';
import { samePadding } from '../core/padding.js';

type GradFunc = Parameters<TF['customGrad']>[0];
const as4d = (t: Tensor) => t as Tensor4D;

export type Padding = 'valid' | 'same';

export { samePadding };

/**
 * Inserts stride-1 zeros between the rows and columns of dy: [B, H, W, F] -> [B, (H-1)s+1, (W-1)s+1, F].
 * Rows, then columns, each a pad of rank 4: TF.js's webgpu backend cannot compile a pad of rank 6 (it
 * logs a WGSL error and returns garbage), which one pad of both at once would need.
 */
function dilate(tf: TF, dy: Tensor, [sh, sw]: number[]): Tensor {
  if (sh === 1 && sw === 1) return dy;
  const [b, h, w, f] = dy.shape;
  const rows = tf.reshape(tf.pad(tf.reshape(dy, [b, h, 1, w * f]), [[0, 0], [0, 0], [0, sh - 1], [0, 0]]), [b * h * sh, w, 1, f]);
  const spread = tf.pad(rows, [[0, 0], [0, 0], [0, sw - 1], [0, 0]]);
  return tf.slice(tf.reshape(spread, [b, h * sh, w * sw, f]), [0, 0, 0, 0], [b, (h - 1) * sh + 1, (w - 1) * sw + 1, f]);
}

interface Geometry {
  pads: [[number, number], [number, number]];
  paddedH: number;
  paddedW: number;
}

function geometry(x: Tensor, w: Tensor, stride: number[], padding: Padding): Geometry {
  const [, h, wd] = x.shape;
  const [kh, kw] = w.shape;
  const pads: Geometry['pads'] = padding === 'same' ? [samePadding(h, kh, stride[0]), samePadding(wd, kw, stride[1])] : [[0, 0], [0, 0]];
  return { pads, paddedH: h + pads[0][0] + pads[0][1], paddedW: wd + pads[1][0] + pads[1][1] };
}

function padInput(tf: TF, x: Tensor, g: Geometry): Tensor {
  const [[pt, pb], [pl, pr]] = g.pads;
  return pt || pb || pl || pr ? tf.pad(x, [[0, 0], [pt, pb], [pl, pr], [0, 0]]) : x;
}

/** dW for an input x (unpadded) and dy, for a kernel of `shape` — also the body of the wasm kernel. */
export function conv2dFilterGrad(tf: TF, x: Tensor, dy: Tensor, shape: number[], stride: number[], padding: Padding): Tensor {
  const w = { shape } as Tensor;
  return filterGrad(tf, padInput(tf, x, geometry(x, w, stride, padding)), dy, w, stride);
}

/** dW[p,q,c,f] = sum over b,i,j of xpad[b, i*s+p, j*s+q, c] dy[b,i,j,f], as one dilated forward conv. */
function filterGrad(tf: TF, xpad: Tensor, dy: Tensor, w: Tensor, stride: number[]): Tensor {
  const [kh, kw, c, f] = w.shape;
  const r = tf.conv2d(as4d(tf.transpose(xpad, [3, 1, 2, 0])), as4d(tf.transpose(dy, [1, 2, 0, 3])), 1, 'valid', 'NHWC', stride as [number, number]);
  return tf.transpose(tf.slice(r, [0, 0, 0, 0], [c, kh, kw, f]), [1, 2, 0, 3]);
}

/** dx: a full correlation of the dilated dy with the flipped kernel, then the padding cropped off. */
function inputGrad(tf: TF, x: Tensor, dy: Tensor, w: Tensor, stride: number[], g: Geometry): Tensor {
  const [kh, kw] = w.shape;
  const [b, h, wd, c] = x.shape;
  const spread = tf.pad(dilate(tf, dy, stride), [[0, 0], [kh - 1, kh - 1], [kw - 1, kw - 1], [0, 0]]);
  const flipped = tf.transpose(tf.reverse(w, [0, 1]), [0, 1, 3, 2]);
  let full: Tensor = tf.conv2d(as4d(spread), as4d(flipped), 1, 'valid');
  const [, fh, fw] = full.shape;
  if (fh < g.paddedH || fw < g.paddedW) full = tf.pad(full, [[0, 0], [0, g.paddedH - fh], [0, g.paddedW - fw], [0, 0]]);
  return tf.slice(full, [0, g.pads[0][0], g.pads[1][0], 0], [b, h, wd, c]);
}

/** A filter gradient: dW from the padded input, dy and the kernel. */
type FilterGrad = (tf: TF, xpad: Tensor, dy: Tensor, w: Tensor, stride: number[]) => Tensor;

/** conv2d(x, w) differentiable in both x and w, its dW by `dW`. x: [B, H, W, C], w: [kh, kw, C, F]. */
function convOfBoth(dW: FilterGrad) {
  return (tf: TF, x: Tensor, w: Tensor, stride: number[], padding: Padding): Tensor => {
    const g = geometry(x, w, stride, padding);
    const f = tf.customGrad(((xi: Tensor, wi: Tensor, save: (ts: Tensor[]) => void) => {
      const xpad = padInput(tf, xi, g);
      save([xi, wi, xpad]);
      return {
        value: tf.conv2d(as4d(xpad), as4d(wi), stride as [number, number], 'valid'),
        gradFunc: (dy: Tensor, saved: Tensor[]) => [inputGrad(tf, saved[0], dy, saved[1], stride, g), dW(tf, saved[2], dy, saved[1], stride)],
      };
    }) as unknown as GradFunc);
    return (f as unknown as (a: Tensor, b: Tensor) => Tensor)(x, w);
  };
}

/** conv2d(x, w) differentiable in both x and w, dW by filterGrad()'s dilated conv. */
const conv2dKernel = convOfBoth((tf, xpad, dy, w, stride) => filterGrad(tf, xpad, dy, w, stride));

/**
 * conv2d(x, w) differentiable in w only: for a layer whose input is data, whose gradient nobody needs.
 * In the widened forms this is the first conv, all members' filters side by side on the shared input
 * ([kh, kw, C, N*F]); its dW is always taken from patches, whatever N, so that a member's dW is summed
 * in the same order in a population of any size (the dilated conv of filterGrad() sums in another).
 */
function conv2dOfDataKernel(tf: TF, x: Tensor, w: Tensor, stride: number[], padding: Padding): Tensor {
  const g = geometry(x, w, stride, padding);
  const f = tf.customGrad(((wi: Tensor, save: (ts: Tensor[]) => void) => {
    // the padded input is made and saved inside, so that it lives until the backward pass
    const xpad = padInput(tf, x, g);
    save([wi, xpad]);
    return {
      value: tf.conv2d(as4d(xpad), as4d(wi), stride as [number, number], 'valid'),
      gradFunc: (dy: Tensor, saved: Tensor[]) => [filterGradByPatches(tf, saved[1], dy, saved[0], stride)],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (a: Tensor) => Tensor)(w);
}

/**
 * conv2d(x, w) differentiable in both, its dW by patches (one product over the rows (b, i, j) in order)
 * rather than filterGrad()'s dilated conv: a `shared` conv2d on per-member inputs, all members' images
 * folded into one batch, so that its gradient sums the members' one after another (member-major rows), the
 * order in which the generated step adds each member's on (src/layers/conv2d.ts).
 */
const conv2dOfRowsKernel = convOfBoth((tf, xpad, dy, w, stride) => filterGradByPatches(tf, xpad, dy, w, stride));

/**
 * dW as one plain matMul of the input's patches with dy: [K, rows] x [rows, F], K = kh*kw*C. The
 * dilated forward conv of filterGrad() has a huge kernel (dy) and a tiny output (kh x kw), which XNNPACK
 * runs at a fraction of its speed: LeNet's first conv at N=30 took 101 ms that way.
 */
function filterGradByPatches(tf: TF, xpad: Tensor, dy: Tensor, w: Tensor, stride: number[]): Tensor {
  const [, , , f] = w.shape;
  const dw = tf.matMul(transposedPatches(tf, xpad, w.shape, stride), tf.reshape(dy, [-1, f]));
  return tf.reshape(dw, w.shape);
}

/**
 * The windows of xpad [B, H, W, C] as columns, [kh*kw*C, B*OH*OW]; row (p*kw + q)*C + ch (W's own
 * order) holds element (p, q, ch) of every window. Copied on the host, so exact; on wasm about twice as
 * fast as a forward conv with an identity kernel followed by a transpose (LeNet's first conv: ~5 ms
 * against ~13 ms).
 */
function transposedPatches(tf: TF, xpad: Tensor, shape: number[], stride: number[]): Tensor {
  // a GPU backend cannot read back synchronously (webgpu in Node throws): there the copy is a conv
  return ['wasm', 'cpu'].includes(tf.getBackend()) ? patchesOnHost(tf, xpad, shape, stride) : patchesByConv(tf, xpad, shape, stride);
}

/** The same patches as one forward conv with an identity kernel (each output channel copies one window element), then a transpose: exact too. */
function patchesByConv(tf: TF, xpad: Tensor, [kh, kw, c]: number[], stride: number[]): Tensor {
  const k = kh * kw * c;
  const eye = new Float32Array(k * k);
  for (let i = 0; i < k; i++) eye[i * k + i] = 1;
  const patches = tf.conv2d(as4d(xpad), as4d(tf.tensor4d(eye, [kh, kw, c, k])), stride as [number, number], 'valid');
  return tf.transpose(tf.reshape(patches, [-1, k]));
}

function patchesOnHost(tf: TF, xpad: Tensor, [kh, kw, c]: number[], stride: number[]): Tensor {
  const x = xpad.dataSync() as Float32Array;
  const [b, h, w] = xpad.shape;
  const [oh, ow] = [Math.floor((h - kh) / stride[0]) + 1, Math.floor((w - kw) / stride[1]) + 1];
  const rows = b * oh * ow;
  const out = new Float32Array(kh * kw * c * rows);
  for (let p = 0; p < kh; p++) {
    for (let q = 0; q < kw; q++) {
      for (let ch = 0; ch < c; ch++) copyWindowElement(x, xpad.shape, [p, q, ch], [oh, ow], stride, out.subarray(((p * kw + q) * c + ch) * rows));
    }
  }
  return tf.tensor2d(out, [kh * kw * c, rows]);
}

/** Element (p, q, ch) of every window of x [B, H, W, C], window after window, into `out`. */
function copyWindowElement(x: Float32Array, [b, h, w, c]: number[], [p, q, ch]: number[], [oh, ow]: number[], [sh, sw]: number[], out: Float32Array): void {
  let at = 0;
  for (let n = 0; n < b; n++) {
    for (let i = 0; i < oh; i++) {
      let from = ((n * h + i * sh + p) * w + q) * c + ch;
      for (let j = 0; j < ow; j++, from += sw * c) out[at++] = x[from];
    }
  }
}

/**
 * The grouped lowering's per-member convolutions as one differentiable op: x [N, B, H, W, C] and
 * w [N, kh, kw, C, F] give [N, B, OH, OW, F], member m convolving its own input with its own kernel.
 * Each member's input and kernel are copied out once (memberSlices) and its padded input kept for the
 * backward pass, which runs the same forward-conv gradients as conv2d() member by member. Stacking
 * per-member conv2d() calls instead costs an Unpack of x, w and dy per step, each of which copies the
 * whole tensor once per member on wasm (Unpack: 131 ms of a 932 ms step at LeNet's N=30).
 */
function groupedConv2dKernel(tf: TF, x: Tensor, w: Tensor, stride: number[], padding: Padding): Tensor {
  const n = x.shape[0];
  const f = tf.customGrad(((xs: Tensor, ws: Tensor, save: (ts: Tensor[]) => void) => {
    const xm = memberSlices(tf, xs);
    const wm = memberSlices(tf, ws);
    const g = geometry(xm[0], wm[0], stride, padding);
    const padded = xm.map((xi) => padInput(tf, xi, g));
    // the input gradient needs only the unpadded input's shape
    const unpadded = { shape: xm[0].shape } as Tensor;
    save([...wm, ...padded]);
    return {
      value: tf.stack(padded.map((xp, i) => tf.conv2d(as4d(xp), as4d(wm[i]), stride as [number, number], 'valid'))),
      gradFunc: (dy: Tensor, saved: Tensor[]) => {
        const dys = memberSlices(tf, dy);
        const dx = dys.map((d, i) => inputGrad(tf, unpadded, d, saved[i], stride, g));
        const dw = dys.map((d, i) => filterGrad(tf, saved[n + i], d, saved[i], stride));
        return [tf.stack(dx), tf.stack(dw)];
      },
    };
  }) as unknown as GradFunc);
  return (f as unknown as (a: Tensor, b: Tensor) => Tensor)(x, w);
}

// kernels: opaque calls in a traced step (src/kernels/kernel.ts)
export const conv2d = kernel('conv2d', conv2dKernel);
export const conv2dOfData = kernel('conv2dOfData', conv2dOfDataKernel);
export const conv2dOfRows = kernel('conv2dOfRows', conv2dOfRowsKernel);
export const groupedConv2d = kernel('groupedConv2d', groupedConv2dKernel);
