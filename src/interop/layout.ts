// The layout rules from netc's conventions (TF.js: channels last, NHWC images, kernels [in, out]) to
// PyTorch's and ONNX's (NCHW images, Linear [out, in], Conv2d [out, in, kh, kw]), in one place for both
// formats: every weight the exporters write and every padding they apply comes from here.
import { samePadding } from '../core/padding.js';

/** How a value's axes lie in the exported model, per example. */
export type Layout =
  /** a netc [H, W, C] image as [C, H, W] */
  | 'nchw'
  /** a flat [F] vector; its features may be reordered (Feature order below) */
  | 'flat'
  /** any other rank, kept as netc has it, channels last */
  | 'last';

export const layoutOf = (shape: readonly number[]): Layout => (shape.length === 3 ? 'nchw' : shape.length === 1 ? 'flat' : 'last');

/** The exported per-example shape of a netc shape. */
export const exportedShape = (shape: readonly number[]): number[] => (shape.length === 3 ? [shape[2], shape[0], shape[1]] : [...shape]);

/** The axis netc's last axis (channels, features) is in the exported [B, ...] tensor: 1 for NCHW, else -1. */
export const channelAxis = (shape: readonly number[]): number => (layoutOf(shape) === 'nchw' ? 1 : -1);

/**
 * The order of a flat vector's features in the exported model: `order[j]` is the netc feature at exported
 * position j; undefined is netc's own order. A flatten of an NCHW image lists channel after channel.
 */
export type FeatureOrder = Int32Array | undefined;

/** The netc index (row-major [H, W, C]) of each position of the NCHW-flattened [C, H, W] image. */
export function nchwFlattenOrder([h, w, c]: readonly number[]): Int32Array {
  const order = new Int32Array(h * w * c);
  let j = 0;
  for (let ch = 0; ch < c; ch++) for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) order[j++] = (y * w + x) * c + ch;
  return order;
}

/** Two feature orders that put the same feature at every position. */
export function sameOrder(a: FeatureOrder, b: FeatureOrder): boolean {
  if (!a || !b) return !a && !b;
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The feature order of a concatenation: each part's order, shifted by the widths before it. */
export function concatOrder(parts: { order: FeatureOrder; width: number }[]): FeatureOrder {
  if (parts.every((p) => !p.order)) return undefined;
  const out = new Int32Array(parts.reduce((n, p) => n + p.width, 0));
  let at = 0;
  for (const p of parts) {
    for (let j = 0; j < p.width; j++) out[at + j] = at + (p.order ? p.order[j] : j);
    at += p.width;
  }
  return out;
}

/** A per-feature vector (bias-free: gamma, beta, running statistics) in the exported feature order. */
export function reorderVector(v: Float32Array, order: FeatureOrder): Float32Array {
  return order ? Float32Array.from(order, (i) => v[i]) : v;
}

/**
 * A dense kernel, netc [in, out], as a Linear weight [out, in]: column j of the weight is the netc input
 * feature order[j], so the first Linear after a flatten reads the NCHW-flattened features.
 */
export function linearWeight(kernel: Float32Array, inputs: number, outputs: number, order: FeatureOrder): Float32Array {
  const w = new Float32Array(inputs * outputs);
  for (let o = 0; o < outputs; o++) for (let j = 0; j < inputs; j++) w[o * inputs + j] = kernel[(order ? order[j] : j) * outputs + o];
  return w;
}

/** A conv kernel, netc [kh, kw, in, out], as a Conv2d weight [out, in, kh, kw]. */
export function convWeight(kernel: Float32Array, [kh, kw, cin, cout]: readonly number[]): Float32Array {
  const w = new Float32Array(kernel.length);
  for (let o = 0; o < cout; o++)
    for (let i = 0; i < cin; i++)
      for (let y = 0; y < kh; y++) for (let x = 0; x < kw; x++) w[((o * cin + i) * kh + y) * kw + x] = kernel[((y * kw + x) * cin + i) * cout + o];
  return w;
}

/** Padding of a window op as [top, bottom, left, right]: TF's `same` puts the odd one at the bottom and right. */
export type Pads = [number, number, number, number];

export function windowPads([h, w]: readonly number[], window: readonly number[], stride: readonly number[], padding: string): Pads {
  if (padding !== 'same') return [0, 0, 0, 0];
  const [t, b] = samePadding(h, window[0], stride[0]);
  const [l, r] = samePadding(w, window[1], stride[1]);
  return [t, b, l, r];
}

export const isSymmetric = ([t, b, l, r]: Pads): boolean => t === b && l === r;
export const isPadded = (p: Pads): boolean => p.some((v) => v > 0);

/** Keras' batchnorm momentum (the share of the running statistic kept) as PyTorch's (the share moved). */
export const torchMomentum = (kerasMomentum: number): number => 1 - kerasMomentum;

// The inverse rules, for a PyTorch state_dict coming back in (netc import).

/** A Linear weight [out, in] (columns in `order`) as a netc dense kernel [in, out]. */
export function denseKernel(weight: Float32Array, inputs: number, outputs: number, order: FeatureOrder): Float32Array {
  const k = new Float32Array(inputs * outputs);
  for (let o = 0; o < outputs; o++) for (let j = 0; j < inputs; j++) k[(order ? order[j] : j) * outputs + o] = weight[o * inputs + j];
  return k;
}

/** A Conv2d weight [out, in, kh, kw] as a netc conv kernel [kh, kw, in, out]. */
export function convKernel(weight: Float32Array, [kh, kw, cin, cout]: readonly number[]): Float32Array {
  const k = new Float32Array(weight.length);
  for (let o = 0; o < cout; o++)
    for (let i = 0; i < cin; i++)
      for (let y = 0; y < kh; y++) for (let x = 0; x < kw; x++) k[((y * kw + x) * cin + i) * cout + o] = weight[((o * cin + i) * kh + y) * kw + x];
  return k;
}

/** A per-feature vector in the exported order back in netc's. */
export function netcVector(v: Float32Array, order: FeatureOrder): Float32Array {
  if (!order) return v;
  const out = new Float32Array(v.length);
  order.forEach((i, j) => (out[i] = v[j]));
  return out;
}

/**
 * A recurrent layer's kernel, netc (Keras) [in, gates * units], its gate blocks side by side on the columns,
 * as PyTorch's and ONNX's weight [gates * units, in], its gate blocks stacked on the rows in another order:
 * row block b is netc's column block `order[b]` (PyTorch's LSTM keeps Keras' i, f, c(g), o; its GRU is r, z,
 * n where Keras is z, r, h; ONNX's LSTM is i, o, f, c).
 */
export function gateWeight(kernel: Float32Array, inputs: number, units: number, order: readonly number[]): Float32Array {
  const width = order.length * units;
  const w = new Float32Array(inputs * width);
  order.forEach((from, b) => {
    for (let j = 0; j < units; j++) for (let i = 0; i < inputs; i++) w[(b * units + j) * inputs + i] = kernel[i * width + from * units + j];
  });
  return w;
}

/** netc import: gateWeight's inverse, the weight [gates * units, in] back as netc's [in, gates * units]. */
export function gateKernel(weight: Float32Array, inputs: number, units: number, order: readonly number[]): Float32Array {
  const width = order.length * units;
  const kernel = new Float32Array(inputs * width);
  order.forEach((from, b) => {
    for (let j = 0; j < units; j++) for (let i = 0; i < inputs; i++) kernel[i * width + from * units + j] = weight[(b * units + j) * inputs + i];
  });
  return kernel;
}

/** A recurrent layer's bias [gates * units] with its gate blocks in `order` (block b is netc's block order[b]). */
export function gateVector(bias: Float32Array, units: number, order: readonly number[]): Float32Array {
  const out = new Float32Array(order.length * units);
  order.forEach((from, b) => out.set(bias.subarray(from * units, (from + 1) * units), b * units));
  return out;
}

/** netc import: gateVector's inverse. */
export function netcGateVector(v: Float32Array, units: number, order: readonly number[]): Float32Array {
  const out = new Float32Array(order.length * units);
  order.forEach((from, b) => out.set(v.subarray(b * units, (b + 1) * units), from * units));
  return out;
}
