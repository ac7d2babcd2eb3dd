// One member's layer in PyTorch's and ONNX's conventions: a node of an export plan (export/plan.ts), made
// by its layer kind's export rule, with its weights laid out by layout.ts and what model.py and the ONNX
// graph write for it. The plan reads nothing of a node but these fields, so the kind's export math is all
// in its own file.
import type { FeatureOrder, Layout } from './layout.js';
import type { Act } from './activation-forms.js';
import type { OnnxGraph } from './onnx-graph.js';

/** A layer that the export formats cannot express. */
export class UnsupportedExportError extends Error {
  override name = 'UnsupportedExportError';
}

/** A state_dict entry under the layer's name: `weight`, `bias`, `running_mean`, `num_batches_tracked`. */
export interface ExportTensor {
  name: string;
  shape: number[];
  data: Float32Array | BigInt64Array;
}

/** What every node has, whatever its kind. */
export interface NodeBase {
  id: number;
  /** the netc layer name (`dense_1`), the module's attribute and the state_dict prefix */
  name: string;
  label?: string;
  inputs: number[];
  /** the netc shape of one example, and how it lies in the exported tensor */
  shape: number[];
  layout: Layout;
  order: FeatureOrder;
  tensors: ExportTensor[];
  /** the member's values of the layer's arguments that `vary` may change, by argument name */
  hyper: Record<string, number>;
  /** a `shared` layer's: its weights are every member's */
  shared: boolean;
}

/** The node's part of model.py. */
export interface TorchCode {
  /** its lines in the constructor, unindented (`self.dense_1 = nn.Linear(4, 2)`) */
  init: string[];
  /** the expression that computes it from its inputs' variables */
  forward(vars: string[]): string;
  /** a module-level function its expression calls, written once in model.py */
  helper?: string;
}

/** Where a node writes its ONNX nodes. */
export interface OnnxContext {
  g: OnnxGraph;
  /** its inputs' names */
  xs: string[];
  /** the name its output must have */
  out: string;
  /** its tensors (num_batches_tracked left out) as initializers, under their full names, in their order */
  tensors(): string[];
}

export interface ExportNode extends NodeBase {
  /** the activation its output ends in (a weighted layer's `activation:`, an activation layer's own), for model.py's docstring */
  act?: Act;
  torch: TorchCode;
  /** writes its ONNX nodes; returns the name of its output */
  onnx(o: OnnxContext): string;
  /** netc import: its netc parameters, in the kind's order, from its PyTorch tensors; `input` is the node it reads */
  params?(tensor: (name: string) => Float32Array, input: ExportNode): Float32Array[];
}

/** What a kind's export rule is given for one layer of one member. */
export interface ExportContext {
  /** the node's fields that every kind has (its order undefined, no tensors) */
  base: NodeBase;
  /** the member's values of the layer's arguments */
  args: Record<string, unknown>;
  /** the nodes it reads */
  inputs: ExportNode[];
  /** the member's weights of the layer's i-th parameter */
  param(i: number): Float32Array;
  /** every flatten of an image flattens channels last (a permute first), so that no feature order needs absorbing */
  channelsLast: boolean;
  /** the inputs' feature orders meet where they cannot be absorbed (an add): the plan is made again channels last */
  conflict(): void;
}

/** A layer kind's rule for the export formats. */
export interface ExportRule {
  node(ctx: ExportContext): ExportNode;
}
