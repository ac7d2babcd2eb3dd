// Members as ONNX graphs, encoded with protobufjs from the ONNX schema (onnx-schema.ts). A member is one
// NCHW input and one output, with inference semantics (batchnorm on its running statistics, dropout
// off); an ensemble is every member's graph side by side on one input, with outputs `members` [N, B, ...],
// `mean` and, for classifiers, `vote`. Initializers carry the PyTorch state_dict's names.
import { onnxType } from './onnx-schema.js';
import { channelAxis, exportedShape, type Pads } from './layout.js';
import type { Act, ExportNode, ExportPlan } from './plan.js';
import { NETC_VERSION } from '../version.js';

/** 17: the first opset with LayerNormalization. */
export const ONNX_OPSET = 17;
const IR_VERSION = 8; // the IR version of opset 17
const FLOAT = 1;
const INT64 = 7;

type Attr = { name: string; type: string; i?: number; f?: number; ints?: number[] };
const int = (name: string, i: number): Attr => ({ name, type: 'INT', i });
const ints = (name: string, v: number[]): Attr => ({ name, type: 'INTS', ints: v });
const float = (name: string, f: number): Attr => ({ name, type: 'FLOAT', f });

/** ONNX's pads for [top, bottom, left, right]: the begins, then the ends. */
const onnxPads = ([t, b, l, r]: Pads) => [t, l, b, r];

/** A graph being built: nodes in order, initializers, and names made unique. */
class Graph {
  nodes: object[] = [];
  initializers: object[] = [];
  private constants = new Map<string, string>();
  private count = 0;

  op(type: string, inputs: string[], attrs: Attr[] = [], output = `t${this.count++}`): string {
    this.nodes.push({ op_type: type, input: inputs, output: [output], name: `${output}:${type}`, attribute: attrs });
    return output;
  }

  tensor(name: string, shape: number[], data: Float32Array | BigInt64Array): string {
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.initializers.push({ name, dims: shape, data_type: data instanceof Float32Array ? FLOAT : INT64, raw_data: raw });
    return name;
  }

  /** A float32 or int64 constant, once per value. */
  constant(values: number[], kind: 'float' | 'int64' = 'float', shape = values.length === 1 ? [] : [values.length]): string {
    const key = `${kind}:${shape.join('x')}:${values.join(',')}`;
    let name = this.constants.get(key);
    if (!name) {
      name = `const_${this.constants.size}`;
      this.tensor(name, shape, kind === 'float' ? Float32Array.from(values) : BigInt64Array.from(values.map(BigInt)));
      this.constants.set(key, name);
    }
    return name;
  }
}

function activation(g: Graph, act: Act, x: string, shape: number[], out?: string): string {
  switch (act.name) {
    case 'linear':
      return out ? g.op('Identity', [x], [], out) : x;
    case 'relu':
      return g.op('Relu', [x], [], out);
    case 'sigmoid':
      return g.op('Sigmoid', [x], [], out);
    case 'tanh':
      return g.op('Tanh', [x], [], out);
    case 'softmax':
      return g.op('Softmax', [x], [int('axis', channelAxis(shape))], out);
    case 'elu':
      return g.op('Elu', [x], [float('alpha', 1)], out);
    case 'leaky_relu':
      return g.op('LeakyRelu', [x], [float('alpha', act.alpha!)], out);
    case 'swish':
      return g.op('Mul', [x, g.op('Sigmoid', [x])], [], out);
    case 'gelu': {
      // the exact form, as netc computes it: x * 0.5 * (1 + erf(x / sqrt 2)) (Gelu itself is opset 20)
      const phi = g.op('Add', [g.op('Erf', [g.op('Mul', [x, g.constant([Math.SQRT1_2])])]), g.constant([1])]);
      return g.op('Mul', [g.op('Mul', [x, phi]), g.constant([0.5])], [], out);
    }
    default:
      throw new Error(`internal error: no ONNX form of the ${act.name} activation`);
  }
}

/** A weighted layer's op, `make`, then its `activation:`, the last of them named `out`. */
function activated(g: Graph, act: Act, shape: number[], out: string, make: (name?: string) => string): string {
  return act.name === 'linear' ? make(out) : activation(g, act, make(), shape, out);
}

const toChannelsLast = (rank: number) => [0, ...Array.from({ length: rank - 2 }, (_, i) => i + 2), 1];
const toChannelsFirst = (rank: number) => [0, rank - 1, ...Array.from({ length: rank - 2 }, (_, i) => i + 1)];

/** The node's ONNX ops on its inputs' names; returns the name of its output. */
function emitNode(g: Graph, n: ExportNode, xs: string[], prefix: string): string {
  const out = `${prefix}${n.name}`;
  const w = (name: string) => `${prefix}${n.name}.${name}`;
  const tensors = () => n.tensors.filter((t) => t.name !== 'num_batches_tracked').map((t) => g.tensor(w(t.name), t.shape, t.data));
  const [x] = xs;
  const rank = n.shape.length + 1;
  switch (n.kind) {
    case 'linear':
      return activated(g, n.act, n.shape, out, (name) => g.op('Gemm', [x, ...tensors()], [int('transB', 1)], name));
    case 'conv2d': {
      const attrs = [ints('kernel_shape', n.kernel), ints('strides', n.stride), ints('pads', onnxPads(n.pads))];
      return activated(g, n.act, n.shape, out, (name) => g.op('Conv', [x, ...tensors()], attrs, name));
    }
    case 'maxpool2d':
      return g.op('MaxPool', [x], [ints('kernel_shape', n.size), ints('strides', n.stride), ints('pads', onnxPads(n.pads))], out);
    case 'avgpool2d':
      return g.op('AveragePool', [x], [ints('kernel_shape', n.size), ints('strides', n.stride), ints('pads', onnxPads(n.pads)), int('count_include_pad', 0)], out);
    case 'global_avg_pool':
    case 'global_max_pool':
      return g.op('Flatten', [g.op(n.kind === 'global_avg_pool' ? 'GlobalAveragePool' : 'GlobalMaxPool', [x])], [int('axis', 1)], out);
    case 'flatten':
      return g.op('Flatten', [n.channelsLast ? g.op('Transpose', [x], [ints('perm', [0, 2, 3, 1])]) : x], [int('axis', 1)], out);
    case 'dropout':
      return g.op('Identity', [x], [], out);
    case 'batchnorm': {
      const attrs = [float('epsilon', n.epsilon), float('momentum', n.momentum)];
      if (n.layout !== 'last') return g.op('BatchNormalization', [x, ...tensors()], attrs, out);
      const first = g.op('Transpose', [x], [ints('perm', toChannelsFirst(rank))]);
      return g.op('Transpose', [g.op('BatchNormalization', [first, ...tensors()], attrs)], [ints('perm', toChannelsLast(rank))], out);
    }
    case 'layernorm': {
      const attrs = [int('axis', -1), float('epsilon', n.epsilon)];
      if (n.layout !== 'nchw') return g.op('LayerNormalization', [x, ...tensors()], attrs, out);
      const last = g.op('Transpose', [x], [ints('perm', [0, 2, 3, 1])]);
      return g.op('Transpose', [g.op('LayerNormalization', [last, ...tensors()], attrs)], [ints('perm', [0, 3, 1, 2])], out);
    }
    case 'add':
      return g.op('Sum', xs, [], out);
    case 'concat':
      return g.op('Concat', xs, [int('axis', channelAxis(n.shape))], out);
    case 'activation':
      return activation(g, n.act, x, n.shape, out);
    case 'input':
      throw new Error('internal error: the input is no node');
  }
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
