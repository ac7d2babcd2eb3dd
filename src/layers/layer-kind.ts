// What every layer kind provides, in its own file: its arguments, its shape rule and its parameters, and
// one rule per target (the op path, the generated step, the tfjs-layers reference, the export), each there
// or stated unsupported with a reason, the way JAX keeps a primitive's shape rule and batching rule together.
import type { Span } from '../diagnostics/diagnostic.js';
import type { MessageDef } from '../diagnostics/messages.js';
import type { ArgSpec, BoundArgs, Shape } from '../core/arg-spec.js';
import type { Initializer } from '../vocabulary/initializers.js';
import type { ForwardRules, WidenRule } from './forward.js';
import type { WasmRule } from './wasm-rule.js';
import type { WgslRule } from '../wgsl/rule.js';
import type { ReferenceRule } from './reference-rule.js';
import type { ExportRule } from '../interop/export-node.js';

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
  /** this layer reads its input as integer token ids in [0, n): n from its arguments (embedding's vocab) */
  tokenIds?(args: BoundArgs['values']): number;
  /** how the layer widens to N members */
  widen: WidenRule;
  /** how it computes on TF.js ops, alone and widened (the op path) */
  forward: ForwardRules;
  /** its code in the generated training step (wasm); without one, a model using it trains on TF.js ops */
  wasm: Rule<WasmRule>;
  /** its kernels in the WGSL step (src/wgsl/rule.ts); without one, a model using it trains on TF.js ops on webgpu */
  wgsl: Rule<WgslRule>;
  /** one member's layer as tfjs-layers layers: the reference the equivalence tests hold the rest to, and `netc extract`'s model */
  reference: Rule<ReferenceRule>;
  /** one member's layer in PyTorch's and ONNX's conventions: its export-plan node, its module code and its ONNX nodes */
  export: Rule<ExportRule>;
}

/** Why a target has no rule for a kind: said, never left out (test/conformance.test.ts holds every kind to it). */
export interface Unsupported {
  unsupported: string;
}

/** A kind's rule for one target, or the reason it has none. */
export type Rule<R> = R | Unsupported;

export const hasRule = <R extends object>(r: Rule<R>): r is R => !('unsupported' in r);

export const fmtShape = (s: Shape): string => `[${s.join(', ')}]`;
