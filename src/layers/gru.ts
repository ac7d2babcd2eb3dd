// gru(units, sequences:, reset_after:): Keras' GRU over a [T, F] sequence, tanh with sigmoid gates, its last
// state [units] or every step's [T, units]. Gates z, r, h in Keras' order; h = z * h + (1 - z) * candidate.
//
// reset_after (the default, Keras' and PyTorch's form): the candidate is tanh(x · W_h + b_h + r * (h · U_h +
// b'_h)), with a bias [2, 3u] (input, recurrent). reset_after: false: tanh(x · W_h + (r * h) · U_h + b_h), the
// reset applied before the recurrent product, with one bias [3u]; it is tfjs-layers' only GRU.
import type { LayerKind } from './layer-kind.js';
import { matMul, PER_MEMBER_MACS } from '../kernels/matmul.js';
import { initializerConfig, UnsupportedLayerError } from './reference-rule.js';
import { selfOf } from './export-rule.js';
import type { ExportContext, ExportNode, ExportTensor } from '../interop/export-node.js';
import { gateKernel, gateVector, gateWeight, netcGateVector } from '../interop/layout.js';
import { int } from '../interop/onnx-graph.js';
import { kernelInits, onnxBias, onnxRecurrent, lastStateOut, recurrentDims, recurrentForward, startCarry, stateFloats, zeroGrads, recurrentShape, sequencesArg, unitsArg, type Cell, type RecurrentDims } from './recurrent.js';
import type { TF, Tensor } from '../kernels/tf.js';
import type { WasmBackwardContext, WasmContext, WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import { columnSums, denseGradWeights, forRows, SUM_BLOCK, transposedParam, type Mat, type ParamMat } from '../wasm/blocks.js';
import type { Lanes } from '../wasm/lanes.js';
import { product } from '../wasm/tiles.js';
import { addColumns, addFloats, cellLanes, copyFloats, offsetBy, rowColumns, rowPointers, stepColumns, timeStep, transposeSteps, zeroMat } from '../wasm/sequence.js';
import { activation, activationGrad } from '../wasm/activations.js';

/** h = z * h + (1 - z) * candidate, as tfjs-layers' GRUCell writes it. */
const mix = (tf: TF, z: Tensor, h: Tensor, candidate: Tensor) => tf.add(tf.mul(z, h), tf.mul(tf.add(1, tf.neg(z)), candidate));

/** reset_after: false, in tfjs-layers' GRUCell's order: the input's product and bias, then the recurrent products. */
const resetBefore: Cell = {
  states: 1,
  step(tf, x, [h], p, units) {
    const [xz, xr, xh] = tf.split(tf.add(matMul(tf, x, p.kernel), p.bias[0]), 3, -1);
    const [uzr, uh] = tf.split(p.recurrent, [2 * units, units], -1);
    const [hz, hr] = tf.split(matMul(tf, h, uzr), 2, -1);
    const z = tf.sigmoid(tf.add(xz, hz));
    const r = tf.sigmoid(tf.add(xr, hr));
    return [mix(tf, z, h, tf.tanh(tf.add(xh, matMul(tf, tf.mul(r, h), uh))))];
  },
};

/** reset_after: true: both products with their biases, the reset applied to the recurrent one's candidate part. */
const resetAfter: Cell = {
  states: 1,
  step(tf, x, [h], p) {
    const [xz, xr, xh] = tf.split(tf.add(matMul(tf, x, p.kernel), p.bias[0]), 3, -1);
    const [hz, hr, hh] = tf.split(tf.add(matMul(tf, h, p.recurrent), p.bias[1]), 3, -1);
    const z = tf.sigmoid(tf.add(xz, hz));
    const r = tf.sigmoid(tf.add(xr, hr));
    return [mix(tf, z, h, tf.tanh(tf.add(xh, tf.mul(r, hh))))];
  },
};

const after = recurrentForward(resetAfter);
const before = recurrentForward(resetBefore);
const chosen = (attrs: Record<string, unknown>) => (attrs.reset_after ? after : before);

export const gru: LayerKind = {
  name: 'gru',
  summary: 'gated recurrent unit over a [time, features] sequence: its last state, or every step\'s with sequences: true',
  args: [unitsArg, sequencesArg, { name: 'reset_after', type: { kind: 'bool' }, default: true, shapeAffecting: true }],
  reads: 'previous',
  shape: (ctx) => recurrentShape('gru', ctx),
  params(args, [input]) {
    const u = args.units as number;
    return [
      { name: 'kernel', shape: [input[1], 3 * u], init: kernelInits.kernel, trainable: true },
      { name: 'recurrent_kernel', shape: [u, 3 * u], init: kernelInits.recurrent, trainable: true },
      { name: 'bias', shape: args.reset_after ? [2, 3 * u] : [3 * u], init: 'zeros', trainable: true },
    ];
  },
  widen: { keepsShared: false },
  forward: {
    single: (ctx, x, p) => chosen(ctx.attrs).single(ctx, x, p),
    grouped: (ctx, x, p) => chosen(ctx.attrs).grouped(ctx, x, p),
    blockdiag: (ctx, x, p) => chosen(ctx.attrs).blockdiag(ctx, x, p),
    shared: (ctx, x, p) => chosen(ctx.attrs).shared!(ctx, x, p),
  },
  wasm: gruWasm(),
  wgsl: { unsupported: 'no WGSL kernel backpropagates through time yet' },
  reference: {
    layers(ctx) {
      // tfjs-layers' GRUCell throws on resetAfter: TF.js has the reset-before form only
      if (ctx.args.reset_after) {
        throw new UnsupportedLayerError(
          `${ctx.name}: TF.js cannot load a gru with reset_after: true (tfjs-layers' GRU has only the reset_after: false form); extract it with --format pytorch or --format onnx, or train gru(..., reset_after: false)`,
        );
      }
      return [
        ctx.tf.layers.gru({
          units: ctx.args.units as number,
          returnSequences: !!ctx.args.sequences,
          activation: 'tanh',
          recurrentActivation: 'sigmoid',
          ...initializerConfig(ctx, ['kernelInitializer', 'recurrentInitializer', 'biasInitializer']),
          name: ctx.name,
        }),
      ];
    },
  },
  export: { node: exportNode },
};

// PyTorch's GRU orders its gates r, z, n where Keras has z, r, h; ONNX's GRU keeps Keras' z, r, h
const TORCH = [1, 0, 2];
const ONNX = [0, 1, 2];

/**
 * ONNX's GRU: linear_before_reset 1 is reset_after, 0 is reset_after: false, the recurrent bias zeros. PyTorch:
 * nn.GRU (batch_first) is the reset_after form, its bias_ih and bias_hh Keras' two rows; reset_after: false
 * is no nn.GRU (its candidate is r * (W_hn h + b_hn), the reset after the product), so model.py defines
 * GRUResetBefore, which computes it step by step on Keras' parameters as they are.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [steps, features] = ctx.inputs[0].shape;
  const units = ctx.args.units as number;
  const sequences = !!ctx.args.sequences;
  const resetAfter = !!ctx.args.reset_after;
  const [kernel, recurrent, bias] = [ctx.param(0), ctx.param(1), ctx.param(2)];
  const g = 3 * units;
  const [biasIn, biasRec] = resetAfter ? [bias.subarray(0, g), bias.subarray(g)] : [bias, new Float32Array(g)];
  const self = selfOf(ctx);
  const onnx: ExportNode['onnx'] = (o) =>
    onnxRecurrent(
      o,
      'GRU',
      { w: gateWeight(kernel, features, units, ONNX), r: gateWeight(recurrent, units, units, ONNX), b: onnxBias(biasIn, biasRec) },
      { steps, features, units, sequences },
      [int('linear_before_reset', resetAfter ? 1 : 0)],
    );
  if (!resetAfter) {
    return {
      ...ctx.base,
      tensors: [
        { name: 'kernel', shape: [features, g], data: kernel },
        { name: 'recurrent_kernel', shape: [units, g], data: recurrent },
        { name: 'bias', shape: [g], data: bias },
      ],
      torch: { init: [`${self} = GRUResetBefore(${features}, ${units}, sequences=${sequences ? 'True' : 'False'})`], forward: ([v]) => `${self}(${v})`, helper: GRU_RESET_BEFORE },
      onnx,
      params: (t) => [t('kernel'), t('recurrent_kernel'), t('bias')],
    };
  }
  const tensors: ExportTensor[] = [
    { name: 'weight_ih_l0', shape: [g, features], data: gateWeight(kernel, features, units, TORCH) },
    { name: 'weight_hh_l0', shape: [g, units], data: gateWeight(recurrent, units, units, TORCH) },
    { name: 'bias_ih_l0', shape: [g], data: gateVector(biasIn, units, TORCH) },
    { name: 'bias_hh_l0', shape: [g], data: gateVector(biasRec, units, TORCH) },
  ];
  return {
    ...ctx.base,
    tensors,
    torch: { init: [`${self} = nn.GRU(${features}, ${units}, batch_first=True)`], forward: ([v]) => `${self}(${v})[0]${sequences ? '' : '[:, -1]'}` },
    onnx,
    params: (t) => {
      const rows = new Float32Array(2 * g);
      rows.set(netcGateVector(t('bias_ih_l0'), units, TORCH));
      rows.set(netcGateVector(t('bias_hh_l0'), units, TORCH), g);
      return [gateKernel(t('weight_ih_l0'), features, units, TORCH), gateKernel(t('weight_hh_l0'), units, units, TORCH), rows];
    },
  };
}

/** model.py's module for gru(reset_after: false), Keras' cell on Keras' parameters. */
const GRU_RESET_BEFORE = `

class GRUResetBefore(nn.Module):
    """Keras' GRU with reset_after=False (the reset gate applied before the recurrent product), which
    nn.GRU cannot express; gates z, r, h in Keras' order, batch first, from a zero state."""

    def __init__(self, features, units, sequences):
        super().__init__()
        self.units = units
        self.sequences = sequences
        self.kernel = nn.Parameter(torch.zeros(features, 3 * units))
        self.recurrent_kernel = nn.Parameter(torch.zeros(units, 3 * units))
        self.bias = nn.Parameter(torch.zeros(3 * units))

    def forward(self, x):
        u = self.units
        h = x.new_zeros(x.shape[0], u)
        xs = x @ self.kernel + self.bias
        outputs = []
        for t in range(x.shape[1]):
            xz, xr, xh = xs[:, t].split(u, dim=-1)
            hz, hr = (h @ self.recurrent_kernel[:, : 2 * u]).split(u, dim=-1)
            z = torch.sigmoid(xz + hz)
            r = torch.sigmoid(xr + hr)
            h = z * h + (1 - z) * torch.tanh(xh + (r * h) @ self.recurrent_kernel[:, 2 * u :])
            outputs.append(h)
        return torch.stack(outputs, dim=1) if self.sequences else h
`;

/**
 * The generated step's gru, per member, backpropagating through time as src/layers/lstm.ts's lstm does. Its
 * buffers are time-major ([T, B, W], src/wasm/sequence.ts): the input's copy; the gates (x_t · kernel +
 * b_i for every step at once, then each step's z, r and candidate in place); the states h with a zero slot
 * before the first step; and each step's `reset` operand: h · U_h + b_rh, which r scales (reset_after), or
 * r * h, the candidate product's input (reset_after false). Each product, activation and sum is the op
 * path's `cell`'s, in its order. Backward, from the last step down: the gates' gradients from dh, each
 * parameter's share of the step added to its gradient (the op path's autodiff adds the steps' products in
 * that order), then dh's shares for the step before and dx, dz · kernelᵀ.
 */
function gruWasm(): WasmRule {
  return {
    // as lstm's: member after member cannot add up in the op path's order
    whyNotShared: "a shared gru (the op path sums each step's gradient over every member's rows before the next step's)",
    forward(k) {
      const d = dimsOf(k);
      const { code: c, batch } = k;
      const b = buffersOf(k, d);
      const bias = biasRows(k, d);
      transposeSteps(c, batch, d.steps, d.features, k.inputs[0], b.x);
      // x_t · kernel + b_i of every step in one product: the time-major rows are T * B rows of [F]
      const rows = c.local('i32');
      c.get(batch).i32(d.steps).i32Mul().set(rows);
      product(c, rows, b.x, k.params.kernel as ParamMat, b.gates, bias[0]);
      const slot = stateFloats(k, d);
      zeroMat(c, slot, b.h);
      const parts = d.after ? undefined : recurrentParts(k, d);
      const t = c.local('i32');
      c.for(t, () => c.i32(0), () => c.i32(d.steps), () => {
        const at = (m: Mat, width: number, next = 0) => timeStep(c, m, () => (c.get(t), next && c.i32(next).i32Add()), batch, width);
        const out = d.sequences ? stepColumns(c, k.output, () => c.get(t), d.units, d.steps) : undefined;
        const step: StepMats = { gates: at(b.gates, 3 * d.units), hPrev: at(b.h, d.units), h: at(b.h, d.units, 1), reset: at(b.reset, d.units), ...(out ? { out } : {}) };
        if (parts) forwardBefore(k, d, b, step, parts);
        else forwardAfter(k, b, step, bias[1]);
      });
      lastStateOut(k, d, b.h);
    },
    backward(k) {
      const d = dimsOf(k);
      const { code: c, batch } = k;
      const b = buffersOf(k, d);
      const g = backwardBuffersOf(k, d);
      const slot = stateFloats(k, d);
      // dh's carried shares start at zero, the z * h share as the output's gradient where it is the last state alone
      startCarry(k, d, g.carry.z);
      zeroMat(c, slot, g.carry.reset);
      zeroMat(c, slot, g.carry.product);
      zeroGrads(k, d);
      // from the last step down: t = T - 1 - s
      const [s, t] = [c.local('i32'), c.local('i32')];
      c.for(s, () => c.i32(0), () => c.i32(d.steps), () => {
        c.i32(d.steps - 1).get(s).i32Sub().set(t);
        const at = (m: Mat, width: number) => timeStep(c, m, () => c.get(t), batch, width);
        const dOut = d.sequences ? stepColumns(c, k.dOutput, () => c.get(t), d.units, d.steps) : undefined;
        const step: BackStepMats = { x: at(b.x, d.features), gates: at(b.gates, 3 * d.units), hPrev: at(b.h, d.units), reset: at(b.reset, d.units), ...(dOut ? { dOut } : {}) };
        if (d.after) backwardAfter(k, d, g, step);
        else backwardBefore(k, d, g, step);
        if (k.dInputs[0]) {
          const dx = stepColumns(c, k.dInputs[0], () => c.get(t), d.features, d.steps);
          product(c, batch, g.dz, g.kernelT!, dx);
        }
      });
    },
  };
}

interface GruDims extends RecurrentDims {
  /** reset_after */
  after: boolean;
}

function dimsOf(k: WasmContext): GruDims {
  const after = !!k.attrs.reset_after;
  return { ...recurrentDims(k, 3, after ? 2 : 1), after };
}

/** The bias's rows' addresses: b_i (and b_rh, reset_after's second row). */
function biasRows(k: WasmContext, d: GruDims): Local[] {
  if (!d.after) return [k.params.bias as Local];
  const bias = k.params.bias as ParamMat;
  const second = k.code.local('i32');
  k.code.get(bias.base).get(bias.rowStride).i32Add().set(second);
  return [bias.base, second];
}

/**
 * reset_after false's two products of the recurrent kernel: h by its z and r columns, r * h by its h
 * columns. The op path's product of a block is batched (its sums in blocks of 48) by the block's own size.
 */
function recurrentParts(k: WasmContext, d: GruDims): { zr: ParamMat; h: ParamMat } {
  const w = k.params.recurrent_kernel as ParamMat;
  const u = d.units;
  const blocked = (width: number) => !!w.blocked || (w.stride !== undefined && k.maxBatch * u * width < PER_MEMBER_MACS);
  return { zr: { ...w, width: 2 * u, blocked: blocked(2 * u) }, h: { ...w, base: offsetBy(k.code, w.base, 2 * u * 4), width: u, blocked: blocked(u) } };
}

/** The forward pass's time-major buffers, which the backward pass reads, and a step's scratch. */
function buffersOf(k: WasmContext, d: GruDims) {
  const { steps: T, features: F, units: u } = d;
  // [steps, B, width] as one Mat of steps * B rows of `width`
  const timeMajor = (name: string, steps: number, width: number): Mat => ({ ...k.saved(name, steps * width), width });
  return {
    x: timeMajor('x', T, F),
    gates: timeMajor('gates', T, 3 * u),
    h: timeMajor('h', T + 1, u),
    reset: timeMajor(d.after ? 'hh' : 'rh', T, u),
    // the step's recurrent product: [B, 3u] (reset_after), or h's z and r columns [B, 2u] and (r * h) · U_h [B, u]
    zh: k.saved('zh', d.after ? 3 * u : 2 * u),
    hh: d.after ? undefined : k.saved('hh_step', u),
  };
}

type GruBuffers = ReturnType<typeof buffersOf>;

/** A step's blocks of the buffers, forward: its gates, the states before and after, its reset operand, the output's step. */
interface StepMats {
  gates: Mat;
  hPrev: Mat;
  h: Mat;
  reset: Mat;
  out?: Mat;
}

function forwardAfter(k: WasmContext, b: GruBuffers, s: StepMats, recurrentBias: Local): void {
  const { code: c, batch } = k;
  const u = k.attrs.units as number;
  product(c, batch, s.hPrev, k.params.recurrent_kernel as ParamMat, b.zh, recurrentBias);
  c.outlined(() => cellAfter(c, batch, u, { ...s, zh: b.zh }));
}

function forwardBefore(k: WasmContext, d: GruDims, b: GruBuffers, s: StepMats, parts: { zr: ParamMat; h: ParamMat }): void {
  const { code: c, batch } = k;
  product(c, batch, s.hPrev, parts.zr, b.zh);
  c.outlined(() => resetGates(c, batch, d.units, { gates: s.gates, zh: b.zh, hPrev: s.hPrev, rh: s.reset }));
  product(c, batch, s.reset, parts.h, b.hh!);
  c.outlined(() => candidateBefore(c, batch, d.units, { gates: s.gates, hh: b.hh!, hPrev: s.hPrev, h: s.h, out: s.out }));
}

/** The columns of a row of a cell, with its Mats' row pointers `p` set: rows of the batch, then columns by rowColumns. */
function cellRows<K extends string>(c: Code, batch: Local, u: number, mats: { [P in K]?: Mat }, body: (p: Record<K, Local>, v: Lanes, cell: ReturnType<typeof cellLanes>) => void): void {
  // an absent Mat (the output's step where it is the last state alone) has no pointer: p's is undefined
  const present = Object.fromEntries(Object.entries(mats).filter(([, m]) => m)) as Record<K, Mat>;
  const rows = rowPointers(c, present);
  forRows(c, batch, (b) => {
    rows.set(b);
    rowColumns(c, u, (v, off, col) => body(rows.at, v, cellLanes(c, v, off, col)));
  });
}

/** z and r: sigmoid of the input's part (with b_i) + the recurrent product's, in place of the input's part. */
function gatesZR(c: Code, v: Lanes, cell: ReturnType<typeof cellLanes>, u: number, gates: Local, zh: Local): Local[] {
  const { load, keep, store } = cell;
  return [0, 1].map((gate) => {
    const z = keep(() => (load(gates, gate * u * 4), load(zh, gate * u * 4), v.add()));
    const a = keep(() => activation(v, 'sigmoid', z));
    store(gates, a, gate * u * 4);
    return a;
  });
}

/** h = z * h_prev + (1 - z) * candidate (tfjs-layers' mix, 1 - z as 1 + (-z): the same float), into h and the output's step. */
function mixForward(c: Code, v: Lanes, cell: ReturnType<typeof cellLanes>, z: Local, hPrev: Local, candidate: Local, h: Local, out: Local | undefined): void {
  const value = cell.keep(() => (c.get(z), c.get(hPrev), v.mul(), v.const(1), c.get(z), v.sub(), c.get(candidate), v.mul(), v.add()));
  cell.store(h, value);
  if (out) cell.store(out, value);
}

/** reset_after, one step row by row: z, r, hh = (h · U + b_rh)'s candidate part (kept), tanh(x_h + r * hh), h. */
function cellAfter(c: Code, batch: Local, u: number, m: StepMats & { zh: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const { load, keep, store } = cell;
    const [z, r] = gatesZR(c, v, cell, u, p.gates, p.zh);
    const hh = keep(() => load(p.zh, 2 * u * 4));
    store(p.reset, hh);
    const pre = keep(() => (load(p.gates, 2 * u * 4), c.get(r), c.get(hh), v.mul(), v.add()));
    const candidate = keep(() => activation(v, 'tanh', pre));
    store(p.gates, candidate, 2 * u * 4);
    mixForward(c, v, cell, z, keep(() => load(p.hPrev)), candidate, p.h, p.out);
  });
}

/** reset_after false, the step's first half row by row: z, r, and r * h_prev, the candidate product's input. */
function resetGates(c: Code, batch: Local, u: number, m: { gates: Mat; zh: Mat; hPrev: Mat; rh: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const [, r] = gatesZR(c, v, cell, u, p.gates, p.zh);
    cell.store(p.rh, cell.keep(() => (c.get(r), cell.load(p.hPrev), v.mul())));
  });
}

/** reset_after false, the step's second half: tanh(x_h + (r * h) · U_h), h. */
function candidateBefore(c: Code, batch: Local, u: number, m: Omit<StepMats, 'reset'> & { hh: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const { load, keep, store } = cell;
    const pre = keep(() => (load(p.gates, 2 * u * 4), load(p.hh), v.add()));
    const candidate = keep(() => activation(v, 'tanh', pre));
    store(p.gates, candidate, 2 * u * 4);
    mixForward(c, v, cell, keep(() => load(p.gates)), keep(() => load(p.hPrev)), candidate, p.h, p.out);
  });
}

/** A step's blocks of the buffers, backward: its input, gates, the state before, its reset operand, the output's gradient's step. */
interface BackStepMats {
  x: Mat;
  gates: Mat;
  hPrev: Mat;
  reset: Mat;
  dOut?: Mat;
}

/**
 * The backward pass's scratch. dh of a step's state before is the sum of its uses' shares in the order
 * autodiff adds them, the last use first: (the output's + z * h's) + (r * h's, reset_after false) + the
 * recurrent product's; each kept apart in `carry` until the next step down adds them. Also: the gates'
 * gradients dz (the input product's: z, r, candidate before their activations) and, reset_after, dzh (the
 * recurrent product's, whose candidate part is r times the candidate's); the parameters' shares of a step;
 * the kernels transposed.
 */
function backwardBuffersOf(k: WasmBackwardContext, d: GruDims) {
  const { features: F, units: u } = d;
  const G = 3 * u;
  // a buffer of `floats` floats, whatever the batch (k.saved's are [B, width])
  const scratch = (name: string, floats: number, width: number): Mat => ({ ...k.saved(name, Math.ceil(floats / k.maxBatch)), width });
  const kernel = k.params.kernel as ParamMat;
  const recurrent = k.params.recurrent_kernel as ParamMat;
  const parts = d.after ? undefined : recurrentParts(k, d);
  return {
    carry: { z: k.saved('dh_z', u), reset: k.saved('dh_reset', u), product: k.saved('dh_product', u) },
    dz: k.saved('dz', G),
    dzh: d.after ? k.saved('dzh', G) : undefined,
    drh: d.after ? undefined : k.saved('drh', u),
    kernel: scratch('dkernel_t', F * G, G),
    bias: scratch('dbias_t', G, G),
    recurrent: d.after ? scratch('drecurrent_t', u * G, G) : undefined,
    parts,
    zr: parts && scratch('dzr_t', u * 2 * u, 2 * u),
    hh: parts && scratch('dhh_t', u * u, u),
    recurrentT: d.after ? transposedParam(k.code, recurrent, scratch('recurrentT', u * G, u)) : undefined,
    zrT: parts && transposedParam(k.code, parts.zr, scratch('zrT', 2 * u * u, u)),
    hT: parts && transposedParam(k.code, parts.h, scratch('hT', u * u, u)),
    kernelT: k.dInputs[0] ? transposedParam(k.code, kernel, scratch('kernelT', F * G, F)) : undefined,
  };
}

type GruBackward = ReturnType<typeof backwardBuffersOf>;

/** The weight products' sums over the batch run in blocks of 48 where the op path's (batched) product sums so. */
const blockedGrad = (k: WasmBackwardContext, w: ParamMat) => !!w.blocked && k.maxBatch > SUM_BLOCK;

function backwardAfter(k: WasmBackwardContext, d: GruDims, g: GruBackward, s: BackStepMats): void {
  const { code: c, batch } = k;
  const u = d.units;
  const G = 3 * u;
  c.outlined(() => cellBackAfter(c, batch, u, { gates: s.gates, hh: s.reset, hPrev: s.hPrev, dOut: s.dOut, dhZ: g.carry.z, dhProduct: g.carry.product, dz: g.dz, dzh: g.dzh! }));
  // the step's shares, each computed alone and added to the total (autodiff adds each step's product to the later steps' sum)
  c.outlined(() => denseGradWeights(c, batch, s.x, g.dz, g.kernel, blockedGrad(k, k.params.kernel as ParamMat)));
  c.outlined(() => denseGradWeights(c, batch, s.hPrev, g.dzh!, g.recurrent!, blockedGrad(k, k.params.recurrent_kernel as ParamMat)));
  c.outlined(() => {
    addFloats(c, d.sizes.kernel, g.kernel, k.grads.kernel);
    addFloats(c, d.sizes.recurrent_kernel, g.recurrent!, k.grads.recurrent_kernel);
    columnSums(c, batch, g.dz, g.bias);
    addFloats(c, G, g.bias, k.grads.bias);
    columnSums(c, batch, g.dzh!, g.bias);
    addFloats(c, G, g.bias, { ...k.grads.bias, offset: k.grads.bias.offset + G * 4 });
  });
  product(c, batch, g.dzh!, g.recurrentT!, g.carry.product);
}

function backwardBefore(k: WasmBackwardContext, d: GruDims, g: GruBackward, s: BackStepMats): void {
  const { code: c, batch } = k;
  const u = d.units;
  // dz's candidate part, and its columns as a Mat of their own (rows of the full dz)
  const dCandidate: Mat = { ...g.dz, offset: g.dz.offset + 2 * u * 4 };
  c.outlined(() => cellBackBefore(c, batch, u, { gates: s.gates, hPrev: s.hPrev, dOut: s.dOut, dhZ: g.carry.z, dhReset: g.carry.reset, dhProduct: g.carry.product, dz: g.dz }));
  product(c, batch, dCandidate, g.hT!, g.drh!);
  c.outlined(() => resetBack(c, batch, u, { gates: s.gates, hPrev: s.hPrev, drh: g.drh!, dhReset: g.carry.reset, dz: g.dz }));
  c.outlined(() => denseGradWeights(c, batch, s.x, g.dz, g.kernel, blockedGrad(k, k.params.kernel as ParamMat)));
  c.outlined(() => denseGradWeights(c, batch, s.hPrev, g.dz, g.zr!, blockedGrad(k, g.parts!.zr)));
  c.outlined(() => denseGradWeights(c, batch, s.reset, dCandidate, g.hh!, blockedGrad(k, g.parts!.h)));
  c.outlined(() => {
    addFloats(c, d.sizes.kernel, g.kernel, k.grads.kernel);
    // the split's gradient is the blocks' concatenation: each added to its columns
    addColumns(c, u, g.zr!, k.grads.recurrent_kernel, 0);
    addColumns(c, u, g.hh!, k.grads.recurrent_kernel, 2 * u);
    columnSums(c, batch, g.dz, g.bias);
    addFloats(c, d.sizes.bias, g.bias, k.grads.bias);
  });
  // dh's share through h · U_zr: dz's z and r columns times U_zrᵀ
  product(c, batch, g.dz, g.zrT!, g.carry.product);
}

/**
 * Through the mix h = z * h_prev + (1 - z) * candidate, as autodiff takes it: dz = -(dh candidate) + dh
 * h_prev (1 - z's share, then z * h's), through the sigmoid; the candidate's dh (1 - z) through the tanh;
 * z * h's share of dh_prev, dh z, into `dhZ`.
 */
function mixBack(c: Code, v: Lanes, cell: ReturnType<typeof cellLanes>, at: { z: Local; candidate: Local; hPrev: Local; dh: Local }, dhZ: Local) {
  const { keep, store } = cell;
  const { z, candidate, hPrev, dh } = at;
  const dzAll = keep(() => (c.get(dh), c.get(candidate), v.mul(), v.neg(), c.get(dh), c.get(hPrev), v.mul(), v.add()));
  const dz = keep(() => activationGrad(v, 'sigmoid', z, z, dzAll));
  store(dhZ, keep(() => (c.get(dh), c.get(z), v.mul())));
  const dCandidate = keep(() => (c.get(dh), v.const(1), c.get(z), v.sub(), v.mul()));
  return { dz, dPre: keep(() => activationGrad(v, 'tanh', candidate, candidate, dCandidate)) };
}

/** reset_after, one step backward row by row: dh from its shares, the mix, r * hh's gradients, dz and dzh. */
function cellBackAfter(c: Code, batch: Local, u: number, m: { gates: Mat; hh: Mat; hPrev: Mat; dOut?: Mat; dhZ: Mat; dhProduct: Mat; dz: Mat; dzh: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const { load, keep, store } = cell;
    const [z, r, candidate] = [0, 1, 2].map((gate) => keep(() => load(p.gates, gate * u * 4)));
    const hh = keep(() => load(p.hh));
    const dh = keep(() => (load(p.dhZ), p.dOut && (load(p.dOut), v.add()), load(p.dhProduct), v.add()));
    const { dz, dPre } = mixBack(c, v, cell, { z, candidate, hPrev: keep(() => load(p.hPrev)), dh }, p.dhZ);
    const dr = keep(() => activationGrad(v, 'sigmoid', r, r, keep(() => (c.get(dPre), c.get(hh), v.mul()))));
    const dhh = keep(() => (c.get(dPre), c.get(r), v.mul()));
    [dz, dr, dPre].forEach((value, gate) => store(p.dz, value, gate * u * 4));
    [dz, dr, dhh].forEach((value, gate) => store(p.dzh, value, gate * u * 4));
  });
}

/** reset_after false, the step's first half backward: dh from its shares, the mix; dz's z and candidate parts. */
function cellBackBefore(c: Code, batch: Local, u: number, m: { gates: Mat; hPrev: Mat; dOut?: Mat; dhZ: Mat; dhReset: Mat; dhProduct: Mat; dz: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const { load, keep, store } = cell;
    const [z, candidate] = [0, 2].map((gate) => keep(() => load(p.gates, gate * u * 4)));
    const dh = keep(() => (load(p.dhZ), p.dOut && (load(p.dOut), v.add()), load(p.dhReset), v.add(), load(p.dhProduct), v.add()));
    const { dz, dPre } = mixBack(c, v, cell, { z, candidate, hPrev: keep(() => load(p.hPrev)), dh }, p.dhZ);
    store(p.dz, dz);
    store(p.dz, dPre, 2 * u * 4);
  });
}

/** reset_after false, the second half: from d(r * h) = dPre · U_hᵀ, r's gradient through its sigmoid, and r * h's share of dh_prev. */
function resetBack(c: Code, batch: Local, u: number, m: { gates: Mat; hPrev: Mat; drh: Mat; dhReset: Mat; dz: Mat }): void {
  cellRows(c, batch, u, m, (p, v, cell) => {
    const { load, keep, store } = cell;
    const r = keep(() => load(p.gates, u * 4));
    const drh = keep(() => load(p.drh));
    store(p.dz, keep(() => activationGrad(v, 'sigmoid', r, r, keep(() => (c.get(drh), load(p.hPrev), v.mul())))), u * 4);
    store(p.dhReset, keep(() => (c.get(drh), c.get(r), v.mul())));
  });
}
