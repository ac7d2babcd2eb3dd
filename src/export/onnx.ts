// Members as ONNX graphs, encoded with protobufjs from the ONNX schema (onnx-schema.ts). A member is one
// NCHW input and one output, with inference semantics (batchnorm on its running statistics, dropout
// off); an ensemble is every member's graph side by side on one input, with outputs `members` [N, B, ...],
// `mean` and, for classifiers, `vote`. Initializers carry the PyTorch state_dict's names.
import { onnxType } from './onnx-schema.js';
import { exportedShape } from '../interop/layout.js';
import { FLOAT, INT64, int, ints, OnnxGraph as Graph } from '../interop/onnx-graph.js';
import type { ExportNode, ExportPlan } from './plan.js';
import { NETC_VERSION } from '../version.js';

/** 17: the first opset with LayerNormalization. */
export const ONNX_OPSET = 17;
const IR_VERSION = 8; // the IR version of opset 17

/** The node's ONNX ops (its kind's export rule's) on its inputs' names; returns the name of its output. */
function emitNode(g: Graph, n: ExportNode, xs: string[], prefix: string): string {
  const w = (name: string) => `${prefix}${n.name}.${name}`;
  const tensors = () => n.tensors.filter((t) => t.name !== 'num_batches_tracked').map((t) => g.tensor(w(t.name), t.shape, t.data));
  return n.onnx({ g, xs, out: `${prefix}${n.name}`, tensors });
}

/**
 * Emits one member's layers on `input`; returns the name of its output. A node `common` marks (the same in
 * every member) is emitted once, under `shared/`, and its name kept in `done` for the other members.
 */
function emitMember(g: Graph, plan: ExportPlan, input: string, prefix: string, output?: string, common?: { nodes: boolean[]; done: Map<number, string> }): string {
  const names: string[] = [input];
  for (const n of plan.nodes.slice(1)) {
    if (!common?.nodes[n.id]) {
      names.push(emitNode(g, n, n.inputs.map((i) => names[i]), prefix));
      continue;
    }
    if (!common.done.has(n.id)) common.done.set(n.id, emitNode(g, n, n.inputs.map((i) => names[i]), 'shared/'));
    names.push(common.done.get(n.id)!);
  }
  const last = names[plan.output];
  return output ? g.op('Identity', [last], [], output) : last;
}

const dims = (shape: (number | string)[]) => ({ dim: shape.map((d) => (typeof d === 'string' ? { dim_param: d } : { dim_value: d })) });
const valueInfo = (name: string, shape: (number | string)[], elem = FLOAT) => ({ name, type: { tensor_type: { elem_type: elem, shape: dims(shape) } } });

function encode(g: Graph, name: string, inputs: object[], outputs: object[], doc: string): Uint8Array {
  const Model = onnxType('ModelProto');
  const model = Model.fromObject({
    ir_version: IR_VERSION,
    opset_import: [{ domain: '', version: ONNX_OPSET }],
    producer_name: 'netc',
    producer_version: NETC_VERSION,
    doc_string: doc,
    graph: { name, node: g.nodes, initializer: g.initializers, input: inputs, output: outputs },
  });
  return Model.encode(model).finish();
}

/** model.onnx: input `input` [batch, ...NCHW], output `output`. */
export function memberOnnx(plan: ExportPlan, doc: string): Uint8Array {
  const g = new Graph();
  emitMember(g, plan, 'input', '', 'output');
  const inputs = [valueInfo('input', ['batch', ...exportedShape(plan.nodes[0].shape)])];
  const outputs = [valueInfo('output', ['batch', ...exportedShape(plan.nodes[plan.output].shape)])];
  return encode(g, plan.name, inputs, outputs, doc);
}

/**
 * [N, B, K] members' outputs -> [B] int64: the class most members pick (the argmax of K > 1 outputs, or
 * p > 0.5 of one), a tie to the lowest class, as `netc predict --combine vote` decides.
 */
function vote(g: Graph, members: string, k: number): string {
  const classes = k === 1 ? g.op('Cast', [g.op('Greater', [g.op('Squeeze', [members, g.constant([2], 'int64', [1])]), g.constant([0.5])])], [int('to', INT64)]) : g.op('ArgMax', [members], [int('axis', 2), int('keepdims', 0)]);
  const c = Math.max(k, 2);
  const range = g.constant(Array.from({ length: c }, (_, i) => i), 'int64', [c]);
  const picks = g.op('Cast', [g.op('Equal', [g.op('Unsqueeze', [classes, g.constant([2], 'int64', [1])]), range])], [int('to', FLOAT)]);
  const counts = g.op('ReduceSum', [picks, g.constant([0], 'int64', [1])], [int('keepdims', 0)]);
  // count * C + (C - 1 - class): the largest count wins, and among equal counts the lowest class
  const preference = g.constant(Array.from({ length: c }, (_, i) => c - 1 - i), 'float', [c]);
  const score = g.op('Add', [g.op('Mul', [counts, g.constant([c])]), preference]);
  return g.op('ArgMax', [score], [int('axis', 1), int('keepdims', 0)], 'vote');
}

/**
 * The nodes every member computes alike: those on the input or on such nodes alone that are `shared` layers
 * or have no weights, with the same layer arguments in every member (a shared trunk, a pooling on it).
 */
function commonNodes(plans: ExportPlan[]): boolean[] {
  const common: boolean[] = [true];
  for (const n of plans[0].nodes.slice(1)) {
    const same = plans.every((p) => JSON.stringify(p.nodes[n.id].hyper) === JSON.stringify(n.hyper));
    common.push(n.inputs.every((i) => common[i]) && same && (n.shared || n.tensors.length === 0));
  }
  return common;
}

/** ensemble.onnx: every member on one input; `members` [N, B, ...], `mean` [B, ...], `vote` [B] when `classifier`. */
export function ensembleOnnx(plans: { plan: ExportPlan; member: number }[], classifier: boolean, doc: string): Uint8Array {
  const g = new Graph();
  const axis0 = g.constant([0], 'int64', [1]);
  const common = { nodes: commonNodes(plans.map((p) => p.plan)), done: new Map<number, string>() };
  const outs = plans.map(({ plan, member }) => g.op('Unsqueeze', [emitMember(g, plan, 'input', `member_${member}/`, undefined, common), axis0]));
  const members = g.op('Concat', outs, [int('axis', 0)], 'members');
  g.op('ReduceMean', [members], [ints('axes', [0]), int('keepdims', 0)], 'mean');
  const first = plans[0].plan;
  const shape = exportedShape(first.nodes[first.output].shape);
  const outputs = [valueInfo('members', [plans.length, 'batch', ...shape]), valueInfo('mean', ['batch', ...shape])];
  if (classifier && shape.length === 1) {
    vote(g, members, shape[0]);
    outputs.push(valueInfo('vote', ['batch'], INT64));
  }
  return encode(g, `${first.name}_ensemble`, [valueInfo('input', ['batch', ...exportedShape(first.nodes[0].shape)])], outputs, doc);
}
