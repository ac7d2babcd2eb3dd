// What lstm and gru share: their arguments and shape rule, the loop over a sequence's steps on TF.js ops
// (autodiff takes the gradient back through time), how it widens, and their ONNX nodes.
//
// A recurrent layer reads [T, F] (steps, features) and gives its last state [units], or every step's state
// [T, units] with `sequences: true`. The state starts at zero. Its parameters are Keras': `kernel` [F, G*u]
// and `recurrent_kernel` [u, G*u], the G gates' blocks side by side on the last axis, and `bias`.
//
// Widened, the members' steps run together: every member's [B, F] step times its own kernel in one batched
// matMul ([N, B, F] x [N, F, G*u]), in a JS loop over the T steps. The blockdiag lowering computes the same
// way, member-first: its parameters come as columns ([F, N*G*u]), the gates of each member side by side,
// which are viewed member-first rather than folded block-diagonally: a block-diagonal recurrent product
// [B, N*u] x [N*u, N*G*u] costs N times the multiply-adds of the batched one, and each member's gates would
// still have to be cut out of it to apply their activations. A `shared` layer folds the members' examples
// into one batch (its examples do not interact).
import { Messages } from '../diagnostics/messages.js';
import type { ArgSpec } from '../core/arg-spec.js';
import { fmtShape, type ShapeContext } from './layer-kind.js';
import type { TF, Tensor } from '../kernels/tf.js';
import type { ForwardContext, ForwardRules, Params } from './forward.js';
import { fromMembersFirst, membersFirst, sharedByFolding } from './widened.js';
import type { WasmBackwardContext, WasmContext } from './wasm-rule.js';
import type { Mat } from '../wasm/blocks.js';
import { copyFloats, timeStep, zeroMat } from '../wasm/sequence.js';
import type { OnnxContext } from '../interop/export-node.js';
import { int, ints, type Attr } from '../interop/onnx-graph.js';

export const unitsArg: ArgSpec = { name: 'units', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true };
export const sequencesArg: ArgSpec = { name: 'sequences', type: { kind: 'bool' }, default: false, shapeAffecting: true };

/** [T, F] -> [units], or [T, units] with `sequences: true`. */
export function recurrentShape(name: string, ctx: ShapeContext): number[] | undefined {
  const input = ctx.inputs[0];
  if (input.length !== 2) {
    const hint = input.length === 1 ? '; a sequence is [time, features]; add embedding(...) before it, or give input: [T, F]' : '; a sequence is [time, features]';
    ctx.error(Messages.InputRank, undefined, name, 'a sequence [time, features]', fmtShape(input), hint);
    return undefined;
  }
  const units = ctx.args.values.units as number;
  return ctx.args.values.sequences ? [input[0], units] : [units];
}

/** A cell's parameters, each broadcasting against a step's [..., B, F] and [..., B, u] values. */
export interface CellParams {
  kernel: Tensor;
  recurrent: Tensor;
  /** the bias's rows (one, or gru's input and recurrent biases), each [G*u] or [N, 1, G*u] */
  bias: Tensor[];
}

export interface Cell {
  /** the states carried from step to step, the output first (lstm: h and c; gru: h) */
  states: number;
  /** the states after one step, from the step's input [..., B, F] and the states before it */
  step(tf: TF, x: Tensor, state: Tensor[], p: CellParams, units: number): Tensor[];
}

/** The bias's rows: [G*u] or [2, G*u] alone; [N, G*u] or [N, 2, G*u] member-first, each as [N, 1, G*u]. */
function biasRows(tf: TF, bias: Tensor, members: boolean): Tensor[] {
  const own = members ? bias.rank - 1 : bias.rank;
  const rows = own === 1 ? [bias] : tf.unstack(bias, members ? 1 : 0);
  return members ? rows.map((b) => tf.expandDims(b, 1)) : rows;
}

/** The cell over x [..., B, T, F] from zero states: the last output [..., B, u], or every step's [..., B, T, u]. */
function runCell(tf: TF, cell: Cell, x: Tensor, p: CellParams, units: number, sequences: boolean): Tensor {
  const axis = x.rank - 2;
  const zeros = tf.zeros([...x.shape.slice(0, axis), units]);
  let state: Tensor[] = new Array(cell.states).fill(zeros);
  const outputs: Tensor[] = [];
  for (const xt of tf.unstack(x, axis)) {
    state = cell.step(tf, xt, state, p, units);
    outputs.push(state[0]);
  }
  return sequences ? tf.stack(outputs, axis) : state[0];
}

/** blockdiag's columns [..., N*C] viewed member-first, [N, ..., C]. */
function columnsToStacked(tf: TF, t: Tensor, n: number): Tensor {
  const r = t.rank;
  const split = tf.reshape(t, [...t.shape.slice(0, -1), n, t.shape[r - 1] / n]);
  return tf.transpose(split, [r - 1, ...Array.from({ length: r - 1 }, (_, i) => i), r]);
}

/** The op path of a recurrent kind: alone, member-first for grouped and blockdiag, and shared. */
export function recurrentForward(cell: Cell): ForwardRules {
  const single = (ctx: ForwardContext, [x]: Tensor[], p: Params) =>
    runCell(ctx.tf, cell, x, { kernel: p.kernel, recurrent: p.recurrent_kernel, bias: biasRows(ctx.tf, p.bias, false) }, ctx.attrs.units as number, !!ctx.attrs.sequences);
  const widened: ForwardRules['grouped'] = (ctx, [a], p) => {
    const { tf, members: n } = ctx;
    const stacked = (t: Tensor) => (ctx.lowering === 'blockdiag' ? columnsToStacked(tf, t, n) : t);
    const params = { kernel: stacked(p.kernel), recurrent: stacked(p.recurrent_kernel), bias: biasRows(tf, stacked(p.bias), true) };
    return fromMembersFirst(ctx, runCell(tf, cell, membersFirst(ctx, a), params, ctx.attrs.units as number, !!ctx.attrs.sequences));
  };
  return { single, grouped: widened, blockdiag: widened, shared: sharedByFolding((ctx, x, p) => single(ctx, x, p)) };
}

/**
 * The kernels' initialisers, Keras' defaults: glorot_uniform and orthogonal (tfjs-layers' LSTM and GRU default to
 * glorotNormal kernels; netc follows Keras, as dense's glorot_uniform does, and tells the reference which it drew).
 */
export const kernelInits = { kernel: 'glorot_uniform', recurrent: 'orthogonal' } as const;

/** An ONNX recurrent op's weights: W [1, G*u, F], R [1, G*u, u], B [1, 2*G*u] (input bias, then recurrent). */
export interface OnnxWeights {
  w: Float32Array;
  r: Float32Array;
  b: Float32Array;
}

/**
 * The ONNX LSTM or GRU on the node's [B, T, F] input: moved to ONNX's [T, B, F], its Y [T, 1, B, u] taken
 * back to [B, T, u], or its last step [B, u].
 */
export function onnxRecurrent(o: OnnxContext, op: 'LSTM' | 'GRU', weights: OnnxWeights, shape: { steps: number; features: number; units: number; sequences: boolean }, attrs: Attr[]): string {
  const { g, xs, out } = o;
  const { steps, features, units } = shape;
  const gates = weights.w.length / (features * units);
  const w = g.tensor(`${out}.W`, [1, gates * units, features], weights.w);
  const r = g.tensor(`${out}.R`, [1, gates * units, units], weights.r);
  const b = g.tensor(`${out}.B`, [1, 2 * gates * units], weights.b);
  const stepsFirst = g.op('Transpose', [xs[0]], [ints('perm', [1, 0, 2])]);
  const y = g.op(op, [stepsFirst, w, r, b], [int('hidden_size', units), ...attrs]);
  if (shape.sequences) return g.op('Transpose', [g.op('Squeeze', [y, g.constant([1], 'int64', [1])])], [ints('perm', [1, 0, 2])], out);
  const last = g.op('Gather', [y, g.constant([steps - 1], 'int64')], [int('axis', 0)]);
  return g.op('Squeeze', [last, g.constant([0], 'int64', [1])], [], out);
}

/** The input and recurrent biases of an ONNX op, [1, 2*G*u]. */
export function onnxBias(input: Float32Array, recurrent: Float32Array): Float32Array {
  const b = new Float32Array(input.length + recurrent.length);
  b.set(input);
  b.set(recurrent, input.length);
  return b;
}

/** A recurrent layer's sizes in the generated step (lstm.ts's and gru.ts's wasm rules). */
export interface RecurrentDims {
  steps: number;
  features: number;
  units: number;
  sequences: boolean;
  /** each parameter's floats, by short name */
  sizes: Record<string, number>;
}

/** The sizes of a layer of `gates` gates whose bias is `biasRows` rows of them (gru's reset_after keeps two). */
export function recurrentDims(k: { inputShapes: number[][]; attrs: Record<string, unknown> }, gates: number, biasRows = 1): RecurrentDims {
  const [steps, features] = k.inputShapes[0];
  const units = k.attrs.units as number;
  const width = gates * units;
  return { steps, features, units, sequences: !!k.attrs.sequences, sizes: { kernel: features * width, recurrent_kernel: units * width, bias: biasRows * width } };
}

/** Pushes a state's floats for the whole batch, batch * units: the size of every [B, units] buffer of the step. */
export const stateFloats = (k: WasmContext, d: RecurrentDims) => () => k.code.get(k.batch).i32(d.units).i32Mul();

/** Where the layer returns its last state alone: h's slot after the last step (h is [T + 1, B, units]) to the output. */
export function lastStateOut(k: WasmContext, d: RecurrentDims, h: Mat): void {
  if (!d.sequences) copyFloats(k.code, stateFloats(k, d), timeStep(k.code, h, () => k.code.i32(d.steps), k.batch, d.units), k.output);
}

/**
 * The carried dh before the last step's backward pass: the output's gradient where the output is the last
 * state alone, else zero (each step's share of the output's gradient is added as the step is reached).
 */
export function startCarry(k: WasmBackwardContext, d: RecurrentDims, dh: Mat): void {
  if (d.sequences) zeroMat(k.code, stateFloats(k, d), dh);
  else copyFloats(k.code, stateFloats(k, d), k.dOutput, dh);
}

/** Every parameter's gradient at zero: the steps' shares are added to it from the last step down. */
export function zeroGrads(k: WasmBackwardContext, d: RecurrentDims): void {
  for (const [name, m] of Object.entries(k.grads)) zeroMat(k.code, () => k.code.i32(d.sizes[name]), m);
}
