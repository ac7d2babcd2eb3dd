// How a layer computes, for one member and widened to N members. Each layer kind gives three rules:
//  - single:    one member, activations [B, ...shape]; the `loop` lowering runs it once per member.
//  - grouped:   activations [N, B, ...shape], parameters [N, ...shape] (a leading member axis).
//  - blockdiag: members folded into the last axis, [B, ..., N*C]; kernels block-diagonal [N*in, N*out].
// In the widened forms an input may still be shared: [B, ...shape], the same for every member (the
// model input, and whatever a parameter-free layer computes from it). Layers keep it shared when they
// can and otherwise use one wider op rather than copying it N times (JAX's three batching cases).
import type { BoundValue, Shape } from '../core/arg-spec.js';
import type { TF, Tensor } from '../kernels/tf.js';

export type Lowering = 'grouped' | 'blockdiag' | 'loop';
export const lowerings: readonly Lowering[] = ['grouped', 'blockdiag', 'loop'];

/** A widened activation: `shared` when every member would compute the same value. */
export interface Act {
  t: Tensor;
  shared: boolean;
  /**
   * a shared value computed from the model input alone, with no parameter upstream: nothing needs its
   * gradient, so a layer reading it may use the cheaper data-only ops (a shared layer's output is shared
   * but not data: the layers after it must pass the gradient back to it)
   */
  data?: boolean;
}

export interface ForwardContext {
  tf: TF;
  lowering: Lowering;
  /** members in this population (1 for `single`) */
  members: number;
  training: boolean;
  attrs: Record<string, BoundValue>;
  /** per-member shapes of the inputs and of the output */
  inputShapes: Shape[];
  outShape: Shape;
  /** per-member values of a numeric layer argument, in population order (varied or not) */
  hyper(arg: string): number[];
  /** the members' uniform [0, 1) draws for this op and step, member-first: [N, ...shape] */
  draws(shape: Shape): Tensor;
  /** a new value for a non-trainable parameter (batchnorm's running statistics), applied after the step */
  update(param: string, value: Tensor): void;
  /**
   * in training, where a member's batch holds padding (a short member under kfold): each row's weight, 1
   * for a real row and 0 for padding, [N, B] in population order ([B] for `single`). A layer that
   * computes over the batch (batchnorm's statistics) counts the real rows only; absent, every row is real
   */
  rowWeights?: Tensor;
}

export type Params = Record<string, Tensor>;

export interface ForwardRules {
  single(ctx: ForwardContext, inputs: Tensor[], params: Params): Tensor;
  grouped(ctx: ForwardContext, inputs: Act[], params: Params): Act;
  blockdiag(ctx: ForwardContext, inputs: Act[], params: Params): Act;
  /**
   * A `shared` layer under grouped and blockdiag: one set of parameters, without a member axis, applied
   * to every member's activations (or once to a shared input, which then stays shared). Only the kinds
   * with parameters have it, and only they can be shared.
   */
  shared?(ctx: ForwardContext, inputs: Act[], params: Params): Act;
}

export interface WidenRule {
  /** with only shared inputs, is the output still shared? (no parameters and no randomness) */
  keepsShared: boolean;
  /** parameters whose last two axes are (input features, output features): block-diagonal in blockdiag */
  kernels?: string[];
}
