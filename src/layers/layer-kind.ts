// What every layer kind provides, in its own file: its arguments, its shape rule and its parameters.
// (Widening and emission rules join them in the same files, the way JAX keeps a primitive's shape
// rule and batching rule together.)
import type { Span } from '../diagnostics/diagnostic.js';
import type { MessageDef } from '../diagnostics/messages.js';
import type { ArgSpec, BoundArgs, Shape } from '../core/arg-spec.js';
import type { Initializer } from '../vocabulary/initializers.js';
import type { ForwardRules, WidenRule } from './forward.js';
import type { KernelRule } from './kernel-rule.js';
import type { WgslRule } from '../wgsl/rule.js';

/** Why a target has no rule for a kind. */
export interface Unsupported {
  unsupported: string;
}

/** A target's rule for a kind, or why it has none. */
export type Rule<R> = R | Unsupported;

export const hasRule = <R extends object>(r: Rule<R>): r is R => !('unsupported' in r);

export interface ParamSpec {
  /** the part after `layer/`: kernel, bias, gamma, beta, moving_mean, moving_variance */
  name: string;
  shape: Shape;
  init: Initializer;
  /** false for running statistics, which are updated but never trained */
  trainable: boolean;
}

export interface ShapeContext {
  args: BoundArgs;
  /** the shapes of the layer's inputs (one for most layers, two or more for add/concat) */
  inputs: Shape[];
  /** report an error at the layer call, or at one of its arguments when `arg` is given */
  error(def: MessageDef, arg: string | undefined, ...args: (string | number)[]): void;
  span: Span;
}

export interface LayerKind {
  name: string;
  /** one line, for `netc help` and the README */
  summary: string;
  args: ArgSpec[];
  /** 'previous': reads the previous statement's output; 'labels': reads labelled outputs (add, concat) */
  reads: 'previous' | 'labels';
  /** the output shape of one example, or undefined after reporting why there is none */
  shape(ctx: ShapeContext): Shape | undefined;
  /** the parameters of one member, in a fixed order */
  params(args: BoundArgs['values'], input: Shape[]): ParamSpec[];
  /** how the layer widens to N members */
  widen: WidenRule;
  /** how it computes, alone and widened */
  forward: ForwardRules;
  /** its code in the generated training step; without one, a model using it trains on TF.js ops */
  kernel?: KernelRule;
  /** its kernels in the WGSL step (src/wgsl/rule.ts); without one, a model using it trains on TF.js ops on webgpu */
  wgsl: Rule<WgslRule>;
}

export const fmtShape = (s: Shape): string => `[${s.join(', ')}]`;
