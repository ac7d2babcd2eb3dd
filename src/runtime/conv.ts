// A trainable conv2d whose gradients are themselves forward convolutions. The wasm backend has no
// Conv2DBackpropFilter kernel and a slow conv2dTranspose, but a fast forward Conv2D (XNNPACK); routing
// both gradients through forward convs trains on every backend (see shared/PERF-NOTES.md). One
// implementation everywhere keeps the lowerings and backends computing the same thing.
import type { TF, Tensor, Tensor4D } from './tf.js';

type GradFunc = Parameters<TF['customGrad']>[0];
const as4d = (t: Tensor) => t as Tensor4D;

export type Padding = 'valid' | 'same';

/** TF's padding rule: [before, after] rows for one spatial axis. */
export function samePadding(size: number, kernel: number, stride: number): [number, number] {
  const out = Math.ceil(size / stride);
  const total = Math.max((out - 1) * stride + kernel - size, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}

/** Inserts stride-1 zeros between the rows and columns of dy: [B, H, W, F] -> [B, (H-1)s+1, (W-1)s+1, F]. */
function dilate(tf: TF, dy: Tensor, [sh, sw]: number[]): Tensor {
  if (sh === 1 && sw === 1) return dy;
  const [b, h, w, f] = dy.shape;
  const spread = tf.pad(tf.reshape(dy, [b, h, 1, w, 1, f]), [[0, 0], [0, 0], [0, sh - 1], [0, 0], [0, sw - 1], [0, 0]]);
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

/** conv2d(x, w) differentiable in both x and w. x: [B, H, W, C], w: [kh, kw, C, F]. */
export function conv2d(tf: TF, x: Tensor, w: Tensor, stride: number[], padding: Padding): Tensor {
  const g = geometry(x, w, stride, padding);
  const f = tf.customGrad(((xi: Tensor, wi: Tensor, save: (ts: Tensor[]) => void) => {
    const xpad = padInput(tf, xi, g);
    save([xi, wi, xpad]);
    return {
      value: tf.conv2d(as4d(xpad), as4d(wi), stride as [number, number], 'valid'),
      gradFunc: (dy: Tensor, saved: Tensor[]) => [inputGrad(tf, saved[0], dy, saved[1], stride, g), filterGrad(tf, saved[2], dy, saved[1], stride)],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (a: Tensor, b: Tensor) => Tensor)(x, w);
}

/** conv2d(x, w) differentiable in w only: for a layer whose input is data, whose gradient nobody needs. */
export function conv2dOfData(tf: TF, x: Tensor, w: Tensor, stride: number[], padding: Padding): Tensor {
  const g = geometry(x, w, stride, padding);
  const f = tf.customGrad(((wi: Tensor, save: (ts: Tensor[]) => void) => {
    // the padded input is made and saved inside, so that it lives until the backward pass
    const xpad = padInput(tf, x, g);
    save([wi, xpad]);
    return {
      value: tf.conv2d(as4d(xpad), as4d(wi), stride as [number, number], 'valid'),
      gradFunc: (dy: Tensor, saved: Tensor[]) => [filterGrad(tf, saved[1], dy, saved[0], stride)],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (a: Tensor) => Tensor)(w);
}
