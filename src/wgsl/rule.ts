// A layer kind's rule for the WGSL step (the `wgsl` rule of src/layers/layer-kind.ts): why it does not
// cover an op, the chain layer it builds (its family's helpers' view of it), and its forward and backward
// kernels, written with the family helpers (dense.ts, conv.ts, norm.ts, graph.ts, shared.ts) and the
// writers the step hands it (src/step/wgsl.ts: the kernel text, the activations', losses' and optimizers'
// text, hyperparameters and clipping). The step walks the ensemble's ops and calls the rule of each op's
// kind; it knows no kind by name.
import type { ChainBase, ChainValues, LayerInput, WgslOp, WgslParam } from './chain.js';
import type { WgslKernel } from './kernel-text.js';
import type { SpatialLayer, SpatialWriter } from './conv.js';
import type { NormLayer, NormWriter, Regions } from './norm.js';
import type { GraphWriter, MergeLayer } from './graph.js';
import type { SharedWriter } from './shared.js';
import type { DenseWriter } from './dense.js';

/** A dense layer or a weightless activation layer (src/wgsl/dense.ts). */
export interface DenseLayer extends ChainValues {
  family: 'dense' | 'activation';
  /** a dense layer's steps per example on a sequence [T, F] (its kernels see B*T rows of F), else 1 */
  cells?: number;
}

/** A layer of the chain, told apart by the family its rule set. */
export type ChainLayer = DenseLayer | SpatialLayer | NormLayer | MergeLayer;

/** Where a reader's operand's gradient goes: the value's own gradient region, or one of its extra ones (a value read twice). */
export type Target = ChainLayer;

/** What the step knows of an op's place in the graph, for a rule's refusal. */
export interface WhyNotContext {
  /** the ops it reads, as they are (a flatten's, not the value under it) */
  inputs: WgslOp[];
  /** whether its first operand's value is the shared input itself (through flattens) */
  onInput: boolean;
  /** the activations the step's kernels write */
  activations: ReadonlySet<string>;
}

/** What the step hands a rule to build its chain layer: the laid-out part, its own parameters, its operands, and its own regions. */
export interface LayerBuild extends Regions {
  base: ChainBase;
  /** its parameters, by the part after `layer/` (kernel, bias, gamma, ...) */
  param(name: string): WgslParam | undefined;
  /** each operand's values and its shape */
  inputs: { input: LayerInput; shape: number[] }[];
  /** the members its value is computed for: one for a shared layer's value on the shared input, else N */
  members: number;
  batch: number;
}

/** The step's kernel writers, for N members of B rows (each family's writer in one). */
export type StepWriter = SpatialWriter<WgslKernel> & NormWriter<WgslKernel> & DenseWriter<WgslKernel> & GraphWriter<WgslKernel>;

/** What the step hands a rule to write its kernels with. */
export interface Writers {
  /** for N members, of B rows, or of B*cells rows (an image's norm or concat: rows of its channels) */
  all(cells?: number): StepWriter;
  /** for the members the layer's value is computed for: one for a shared layer's value on the shared input (computed once), else N */
  of(l: ChainValues, cells?: number): StepWriter;
  /** a shared layer's parameters' kernels: its gradient over every member's rows and one step with the file's hyperparameters */
  shared: SharedWriter<WgslKernel>;
}

interface RuleBase {
  /** why the step does not cover this op of the kind (its attributes, its operands), or undefined where it does */
  whyNot?(op: WgslOp, c: WhyNotContext): string | undefined;
  /** as the first layer, it reads the batch's images [H, W, C] as they lie (else the step takes flat inputs only) */
  readsImages?: true;
  /** its parameters may be a `shared` layer's (one copy for every member) */
  sharedParams?: true;
  /**
   * as a member's layer on a shared layer's value (computed once on the shared input): 'sums' (its input's
   * gradient sums every member's: a dense or conv), 'flat' (each member's gradient of a flat value, summed
   * after it; the op path broadcasts an image with a Tile of rank 5, which has no gradient) or 'never'
   */
  onShared: 'sums' | 'flat' | 'never';
}

/** A reshape: no layer of the chain; its value is its input's, as it lies (flatten). */
export interface WgslAliasRule extends RuleBase {
  alias: true;
}

/** A kind's layer of the chain and its kernels; `forward` and `backward` are handed the layer its `layer` built. */
export interface WgslLayerRule<L extends ChainLayer = ChainLayer> extends RuleBase {
  alias?: undefined;
  /** its layer of the chain: `b.base` with its family, activation, parameters and own regions */
  layer(b: LayerBuild): L;
  /** its forward kernels (`training` false: an evaluation's, dropout passing its input and batchnorm by its running statistics) */
  forward(w: Writers, l: L, training: boolean): WgslKernel[];
  /** its backward kernels: its operands' gradients (into `into`, by operand; none where undefined), then its parameters' updates */
  backward(w: Writers, l: L, into: (Target | undefined)[]): WgslKernel[];
}

export type WgslRule = WgslAliasRule | WgslLayerRule;
