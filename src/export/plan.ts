// One member as an export plan: its layers in PyTorch's and ONNX's conventions, each node made by its layer
// kind's export rule (src/interop/export-node.ts says what a node holds), with the member's own layer
// arguments. model.py, the safetensors files and the ONNX graphs are all written from a plan, so the two
// formats cannot disagree.
import type { IrOp, ModelIR } from '../ir/model-ir.js';
import { memberArgs, type MemberHyperparameters } from '../runtime/hyper.js';
import { layerKind } from '../layers/registry.js';
import { hasRule } from '../layers/layer-kind.js';
import { layoutOf } from '../interop/layout.js';
import { UnsupportedExportError, type ExportNode, type NodeBase } from '../interop/export-node.js';

export { UnsupportedExportError };
export type { ExportNode } from '../interop/export-node.js';

export interface ExportPlan {
  name: string;
  nodes: ExportNode[];
  output: number;
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

const inputNode = (base: NodeBase): ExportNode => ({
  ...base,
  torch: {
    init: [],
    forward: () => {
      throw new Error('internal error: the input has no expression');
    },
  },
  onnx: () => {
    throw new Error('internal error: the input is no node');
  },
});

function build(ir: ModelIR, weights: Map<string, Float32Array>, hyper: MemberHyperparameters, channelsLast: boolean): Built {
  const nodes: ExportNode[] = [];
  let conflict = false;
  for (const op of ir.ops) {
    const base: NodeBase = { id: op.id, name: op.name, label: op.label, inputs: op.inputs, shape: op.shape, layout: layoutOf(op.shape), order: undefined, tensors: [], hyper: {}, shared: op.params.length > 0 && op.params.every((p) => ir.params.find((q) => q.name === p)?.shared) };
    if (op.op === 'input') {
      nodes.push(inputNode(base));
      continue;
    }
    const rule = layerKind(op.op)!.export;
    if (!hasRule(rule)) throw new UnsupportedExportError(`${op.name}: no export for a '${op.op}' layer: ${rule.unsupported}`);
    const args = memberArgs(op, hyper);
    base.hyper = hyperOf(op, args);
    const param = (i: number) => {
      const w = weights.get(op.params[i]);
      if (!w) throw new UnsupportedExportError(`${op.name}: the member has no weights for '${op.params[i]}'`);
      return w;
    };
    nodes.push(rule.node({ base, args, inputs: op.inputs.map((i) => nodes[i]), param, channelsLast, conflict: () => (conflict = true) }));
  }
  if (nodes[ir.output].order) conflict = true;
  return { nodes, conflict };
}
