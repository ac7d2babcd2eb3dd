// What every layer of the WGSL step's chain is to its kernels: the op it computes (a small structural view
// of the ensemble IR's op, which lies floors above), where its input, values and gradient lie in the
// step's buffers, and what the step needs of it without knowing its kind (its hyperparameter rows, its
// clipping scratch, its draws, the order its operands get their gradients in).
import type { BoundValue, Shape } from '../core/arg-spec.js';
import type { ParamLayout } from '../core/layout.js';

/** The op a layer of the chain computes, as its kernels read it (an ensemble IR op is one). */
export interface WgslOp {
  /** the layer kind, or 'input' */
  op: string;
  name: string;
  shape: Shape;
  attrs: Record<string, BoundValue>;
  /** true while the value is the same for every member: computed once, not N times */
  shared: boolean;
  inputs: number[];
}

/** A parameter as the kernels bind and index it: its fused tensor's name and layout. */
export interface WgslParam {
  name: string;
  layout: ParamLayout;
}

/** Where a layer reads its input: the batch (shared by every member) or a region of `acts`. */
/** (a shared layer's value on the shared input is one for every member, [B, width]: `shared`) */
export type LayerInput = { buffer: 'x' } | { buffer: 'acts'; at: number; shared?: true };

/** What the step lays out for every layer before its kind's rule builds it: its op, widths, input and regions. */
export interface ChainBase {
  op: WgslOp;
  inWidth: number;
  width: number;
  /** where its input is: the batch (`x`, shared by every member), or a region of `acts` */
  input: LayerInput;
  /** its values a_l and their gradient dL/da_l in `acts`, [N, B, width] each */
  valuesAt: number;
  gradAt: number;
}

/** Which helpers' kernels a layer's are, set by its kind's rule (src/layers/): the tag its layer type is told by. */
export type Family = 'dense' | 'activation' | 'spatial' | 'norm' | 'merge';

/** What every layer of the WGSL step's chain is to its kernels: a dense or activation layer, a conv or pool, a norm, a merge. */
export interface ChainValues extends ChainBase {
  family: Family;
  activation: string;
  kernel?: WgslParam;
  bias?: WgslParam;
  /** the pre-activation z in `acts`, [N, B, width], where the activation's gradient reads z (gelu, swish) */
  zAt?: number;
  /** leaky_relu's slope: TF's fixed one for a dense or conv activation, a leaky_relu layer's per-member hyperparameter key */
  alpha?: { key: string } | { value: number };
  /** its per-member hyperparameter keys, each a row of `hyper` (`dropout_1.rate`, `leaky_relu_1.alpha`, ...) */
  keys: string[];
  /** the floats per member of the clipping scratch its parameters' gradients need (the largest one's) */
  clipFloats: number;
  /** its uniform draws [N, B, width] in the `draws` buffer, which the host writes each step (dropout) */
  drawsAt?: number;
  /** the operands in the order the op path's autodiff hands them their gradients (one for most layers) */
  order: number[];
}

export const u = (v: number): string => `${v}u`;

export const size = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);
