// One member as an export plan: its layers in PyTorch's and ONNX's conventions, with their weights laid out
// by layout.ts, the member's own layer arguments and the padding each window op needs. model.py, the
// safetensors files and the ONNX graphs are all written from a plan, so the two formats cannot disagree.
import type { IrOp, ModelIR } from '../ir/model-ir.js';
import { memberArgs, type MemberHyperparameters } from '../runtime/hyper.js';
import { layerKind } from '../layers/registry.js';
import { LEAKY_RELU_ALPHA } from '../kernels/activations.js';
import { activations } from '../vocabulary/activations.js';
import {
  concatOrder,
  convWeight,
  layoutOf,
  linearWeight,
  nchwFlattenOrder,
  reorderVector,
  sameOrder,
  windowPads,
  type FeatureOrder,
  type Layout,
  type Pads,
} from './layout.js';

/** A layer that the export formats cannot express. */
export class UnsupportedExportError extends Error {
  override name = 'UnsupportedExportError';
}

/** An activation with netc's constants: leaky_relu's slope; softmax over the channel axis. */
export interface Act {
  name: string;
  alpha?: number;
}

/** A state_dict entry under the layer's name: `weight`, `bias`, `running_mean`, `num_batches_tracked`. */
export interface ExportTensor {
  name: string;
  shape: number[];
  data: Float32Array | BigInt64Array;
}

interface NodeBase {
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

export type ExportNode = NodeBase &
  (
    | { kind: 'input' }
    | { kind: 'linear'; inFeatures: number; outFeatures: number; bias: boolean; act: Act }
    | { kind: 'conv2d'; inChannels: number; outChannels: number; kernel: number[]; stride: number[]; pads: Pads; bias: boolean; act: Act }
    | { kind: 'maxpool2d' | 'avgpool2d'; size: number[]; stride: number[]; pads: Pads }
    | { kind: 'global_avg_pool' | 'global_max_pool' }
    | { kind: 'flatten'; channelsLast: boolean }
    | { kind: 'dropout'; rate: number }
    | { kind: 'batchnorm'; features: number; momentum: number; epsilon: number }
    | { kind: 'layernorm'; features: number; epsilon: number }
    | { kind: 'add' }
    | { kind: 'concat' }
    | { kind: 'activation'; act: Act }
  );

export interface ExportPlan {
  name: string;
  nodes: ExportNode[];
  output: number;
}

const activationLayer = (op: string) => op !== 'linear' && (activations as readonly string[]).includes(op);

/** A layer's `activation:` argument with its constants (leaky_relu's 0.2, as netc computes it). */
function actOf(name: unknown): Act {
  const a = String(name ?? 'linear');
  return a === 'leaky_relu' ? { name: a, alpha: LEAKY_RELU_ALPHA } : { name: a };
}

/** The member's values of the op's `hyper` arguments. */
function hyperOf(op: IrOp, args: Record<string, unknown>): Record<string, number> {
  return Object.fromEntries((layerKind(op.op)?.args ?? []).filter((a) => a.hyper).map((a) => [a.name, args[a.name] as number]));
}

interface Built {
  nodes: ExportNode[];
  /** whether a flatten's feature order reaches somewhere it cannot be absorbed */
  conflict: boolean;
}

/**
 * The plan of one member: `weights` by IR parameter name (memberParams' map), `hyperparameters` its row of
 * the checkpoint. A flatten of an image emits NCHW order, absorbed by the Linear, batchnorm or layernorm
 * weights after it; where that order would reach the output or meet another order in an add, every flatten
 * flattens channels last instead (a permute before it), which needs no reordering at all.
 */
export function exportPlan(ir: ModelIR, weights: Map<string, Float32Array>, hyperparameters: MemberHyperparameters): ExportPlan {
  let built = build(ir, weights, hyperparameters, false);
  if (built.conflict) built = build(ir, weights, hyperparameters, true);
  return { name: ir.name, nodes: built.nodes, output: ir.output };
}

function build(ir: ModelIR, weights: Map<string, Float32Array>, hyper: MemberHyperparameters, channelsLast: boolean): Built {
  const nodes: ExportNode[] = [];
  let conflict = false;
  const param = (op: IrOp, i: number) => {
    const w = weights.get(op.params[i]);
    if (!w) throw new UnsupportedExportError(`${op.name}: the member has no weights for '${op.params[i]}'`);
    return w;
  };
  for (const op of ir.ops) {
    const ins = op.inputs.map((i) => nodes[i]);
    const base: NodeBase = { id: op.id, name: op.name, label: op.label, inputs: op.inputs, shape: op.shape, layout: layoutOf(op.shape), order: undefined, tensors: [], hyper: {}, shared: op.params.length > 0 && op.params.every((p) => ir.params.find((q) => q.name === p)?.shared) };
    if (op.op === 'input') {
      nodes.push({ ...base, kind: 'input' });
      continue;
    }
    const a = memberArgs(op, hyper);
    base.hyper = hyperOf(op, a);
    const x = ins[0];
    const node = nodeOf(op, a, base, x, ins, (i) => param(op, i), channelsLast);
    if (node.kind === 'add' && ins.some((v) => !sameOrder(v.order, x.order))) conflict = true;
    nodes.push(node);
  }
  if (nodes[ir.output].order) conflict = true;
  return { nodes, conflict };
}

function nodeOf(op: IrOp, a: Record<string, unknown>, base: NodeBase, x: NodeBase, ins: NodeBase[], param: (i: number) => Float32Array, channelsLast: boolean): ExportNode {
  const bias = (i: number): ExportTensor[] => (a.bias ? [{ name: 'bias', shape: [op.shape[op.shape.length - 1]], data: param(i) }] : []);
  switch (op.op) {
    case 'dense': {
      const [inFeatures] = x.shape;
      const outFeatures = a.units as number;
      const weight = { name: 'weight', shape: [outFeatures, inFeatures], data: linearWeight(param(0), inFeatures, outFeatures, x.order) };
      return { ...base, kind: 'linear', inFeatures, outFeatures, bias: !!a.bias, act: actOf(a.activation), tensors: [weight, ...bias(1)] };
    }
    case 'conv2d': {
      const kernel = a.kernel as number[];
      const shape = [kernel[0], kernel[1], x.shape[2], a.filters as number];
      const weight = { name: 'weight', shape: [shape[3], shape[2], shape[0], shape[1]], data: convWeight(param(0), shape) };
      const stride = a.stride as number[];
      const pads = windowPads(x.shape, kernel, stride, a.padding as string);
      return { ...base, kind: 'conv2d', inChannels: shape[2], outChannels: shape[3], kernel, stride, pads, bias: !!a.bias, act: actOf(a.activation), tensors: [weight, ...bias(1)] };
    }
    case 'maxpool2d':
    case 'avgpool2d': {
      const size = a.size as number[];
      const stride = (a.stride as number[] | undefined) ?? size;
      return { ...base, kind: op.op, size, stride, pads: windowPads(x.shape, size, stride, a.padding as string) };
    }
    case 'global_avg_pool':
    case 'global_max_pool':
      return { ...base, kind: op.op };
    case 'flatten': {
      const image = x.layout === 'nchw';
      const order = image && !channelsLast ? nchwFlattenOrder(x.shape) : x.order;
      return { ...base, kind: 'flatten', channelsLast: image && channelsLast, order };
    }
    case 'dropout':
      return { ...base, kind: 'dropout', rate: a.rate as number, order: x.order };
    case 'batchnorm': {
      const features = op.shape[op.shape.length - 1];
      const v = (i: number) => reorderVector(param(i), x.order);
      const tensors: ExportTensor[] = [
        { name: 'weight', shape: [features], data: v(0) },
        { name: 'bias', shape: [features], data: v(1) },
        { name: 'running_mean', shape: [features], data: v(2) },
        { name: 'running_var', shape: [features], data: v(3) },
        { name: 'num_batches_tracked', shape: [], data: new BigInt64Array(1) },
      ];
      if (op.shape.length > 4) throw new UnsupportedExportError(`${op.name}: PyTorch has no batchnorm for ${op.shape.length}-axis examples`);
      return { ...base, kind: 'batchnorm', features, momentum: a.momentum as number, epsilon: a.epsilon as number, order: x.order, tensors };
    }
    case 'layernorm': {
      const features = op.shape[op.shape.length - 1];
      const v = (i: number) => reorderVector(param(i), x.order);
      const tensors = [
        { name: 'weight', shape: [features], data: v(0) },
        { name: 'bias', shape: [features], data: v(1) },
      ];
      return { ...base, kind: 'layernorm', features, epsilon: a.epsilon as number, order: x.order, tensors };
    }
    case 'add':
      return { ...base, kind: 'add', order: x.order };
    case 'concat':
      return { ...base, kind: 'concat', order: base.layout === 'flat' ? concatOrder(ins.map((v) => ({ order: v.order, width: v.shape[0] }))) : undefined };
    default:
      if (!activationLayer(op.op)) throw new UnsupportedExportError(`${op.name}: no export for a '${op.op}' layer`);
      return { ...base, kind: 'activation', act: op.op === 'leaky_relu' ? { name: op.op, alpha: a.alpha as number } : { name: op.op }, order: x.order };
  }
}
