// lstm(units, sequences:): Keras' LSTM over a [T, F] sequence, tanh with sigmoid gates, its last state [units]
// or every step's [T, units]. Gates i, f, c, o in Keras' order: z = x · kernel + h · recurrent_kernel + bias,
// c = f * c + i * tanh(z_c), h = o * tanh(c); the forget gate's bias starts at 1 (Keras' unit_forget_bias).
import type { Initializer } from '../vocabulary/initializers.js';
import type { LayerKind } from './layer-kind.js';
import { matMul } from '../kernels/matmul.js';
import { initializerConfig } from './reference-rule.js';
import { selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { gateKernel, gateVector, gateWeight } from '../interop/layout.js';
import type { WasmBackwardContext, WasmContext, WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import { denseGradWeights, forRows, rowOf, SUM_BLOCK, transposedParam, type Mat, type ParamMat } from '../wasm/blocks.js';
import { addColumnSums, product, tiledGradWeights } from '../wasm/tiles.js';
import type { Lanes } from '../wasm/lanes.js';
import { addFloats, copyFloats, rowColumns, stepColumns, timeStep, transposeSteps, zeroMat } from '../wasm/sequence.js';
import { activation, activationGrad } from '../wasm/activations.js';
import { kernelInits, onnxBias, onnxRecurrent, lastStateOut, recurrentDims, recurrentForward, startCarry, stateFloats, zeroGrads, recurrentShape, sequencesArg, unitsArg, type Cell, type RecurrentDims } from './recurrent.js';

const cell: Cell = {
  states: 2,
  // in tfjs-layers' LSTMCell's order: the two products added, then the bias
  step(tf, x, [h, c], p) {
    const z = tf.add(tf.add(matMul(tf, x, p.kernel), matMul(tf, h, p.recurrent)), p.bias[0]);
    const [zi, zf, zc, zo] = tf.split(z, 4, -1);
    const next = tf.add(tf.mul(tf.sigmoid(zf), c), tf.mul(tf.sigmoid(zi), tf.tanh(zc)));
    return [tf.mul(tf.sigmoid(zo), tf.tanh(next)), next];
  },
};

export const lstm: LayerKind = {
  name: 'lstm',
  summary: 'long short-term memory over a [time, features] sequence: its last state, or every step\'s with sequences: true',
  args: [unitsArg, sequencesArg],
  reads: 'previous',
  shape: (ctx) => recurrentShape('lstm', ctx),
  params(args, [input]) {
    const u = args.units as number;
    return [
      { name: 'kernel', shape: [input[1], 4 * u], init: kernelInits.kernel, trainable: true },
      { name: 'recurrent_kernel', shape: [u, 4 * u], init: kernelInits.recurrent, trainable: true },
      { name: 'bias', shape: [4 * u], init: 'unit_forget_bias' satisfies Initializer, trainable: true },
    ];
  },
  widen: { keepsShared: false },
  forward: recurrentForward(cell),
  wasm: lstmWasm(),
  wgsl: { unsupported: 'no WGSL kernel backpropagates through time yet' },
  reference: {
    layers: (ctx) => [
      ctx.tf.layers.lstm({
        units: ctx.args.units as number,
        returnSequences: !!ctx.args.sequences,
        activation: 'tanh',
        recurrentActivation: 'sigmoid',
        unitForgetBias: true,
        ...initializerConfig(ctx, ['kernelInitializer', 'recurrentInitializer', 'biasInitializer']),
        name: ctx.name,
      }),
    ],
  },
  export: { node: exportNode },
};

// PyTorch's LSTM keeps Keras' gate order (i, f, g, o); ONNX's is i, o, f, c
const TORCH = [0, 1, 2, 3];
const ONNX = [0, 3, 1, 2];

/**
 * PyTorch's nn.LSTM (batch_first) and ONNX's LSTM: the kernels transposed to [4u, in], Keras' one bias as
 * bias_ih and zeros as bias_hh (their sum is the bias); `sequences: false` takes the last step's output.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [steps, features] = ctx.inputs[0].shape;
  const units = ctx.args.units as number;
  const sequences = !!ctx.args.sequences;
  const [kernel, recurrent, bias] = [ctx.param(0), ctx.param(1), ctx.param(2)];
  const self = selfOf(ctx);
  return {
    ...ctx.base,
    tensors: [
      { name: 'weight_ih_l0', shape: [4 * units, features], data: gateWeight(kernel, features, units, TORCH) },
      { name: 'weight_hh_l0', shape: [4 * units, units], data: gateWeight(recurrent, units, units, TORCH) },
      { name: 'bias_ih_l0', shape: [4 * units], data: bias },
      { name: 'bias_hh_l0', shape: [4 * units], data: new Float32Array(4 * units) },
    ],
    torch: {
      init: [`${self} = nn.LSTM(${features}, ${units}, batch_first=True)`],
      forward: ([v]) => `${self}(${v})[0]${sequences ? '' : '[:, -1]'}`,
    },
    onnx: (o) =>
      onnxRecurrent(
        o,
        'LSTM',
        { w: gateWeight(kernel, features, units, ONNX), r: gateWeight(recurrent, units, units, ONNX), b: onnxBias(gateVector(bias, units, ONNX), new Float32Array(4 * units)) },
        { steps, features, units, sequences },
        [],
      ),
    // a bias trained in PyTorch is the sum of its two
    params: (t) => [gateKernel(t('weight_ih_l0'), features, units, TORCH), gateKernel(t('weight_hh_l0'), units, units, TORCH), t('bias_ih_l0').map((b, i) => b + t('bias_hh_l0')[i])],
  };
}

/**
 * The generated step's lstm, per member, backpropagating through time. Its buffers are time-major ([T, B, W],
 * src/wasm/sequence.ts): the input's copy, the gates (x_t · kernel for every step at once, then each step's
 * activations in place), the states h and c with a zero slot before the first step, and tanh(c). Backward,
 * from the last step down: the gates' gradient dz from dh (the output's share of the step and the next
 * step's) and dc, then each parameter's share of the step added to its gradient (the op path's autodiff adds
 * the steps' products in that order), dh for the step before, dz · recurrent_kernelᵀ, and dx, dz · kernelᵀ.
 */
function lstmWasm(): WasmRule {
  return {
    // a shared lstm's op path sums each step's products over every member's rows at once, then over the steps:
    // member after member cannot add up in that order
    whyNotShared: "a shared lstm (the op path sums each step's gradient over every member's rows before the next step's)",
    forward(k) {
      const d = dimsOf(k);
      const { code: c, batch } = k;
      const kernel = k.params.kernel as ParamMat;
      const b = buffersOf(k, d);
      transposeSteps(c, batch, d.steps, d.features, k.inputs[0], b.x);
      // x_t · kernel of every step in one product: the time-major rows are T * B rows of [F]
      const rows = c.local('i32');
      c.get(batch).i32(d.steps).i32Mul().set(rows);
      product(c, rows, b.x, kernel, b.gates);
      const slot = stateFloats(k, d);
      zeroMat(c, slot, b.h);
      zeroMat(c, slot, b.c);
      const t = c.local('i32');
      c.for(t, () => c.i32(0), () => c.i32(d.steps), () => {
        const at = (m: Mat, width: number, next = 0) => timeStep(c, m, () => (c.get(t), next && c.i32(next).i32Add()), batch, width);
        const [hPrev, h] = [at(b.h, d.units), at(b.h, d.units, 1)];
        product(c, batch, hPrev, k.params.recurrent_kernel as ParamMat, b.zh);
        const out = d.sequences ? stepColumns(c, k.output, () => c.get(t), d.units, d.steps) : undefined;
        const cell = { gates: at(b.gates, 4 * d.units), zh: b.zh, cPrev: at(b.c, d.units), c: at(b.c, d.units, 1), tanhC: at(b.tanhC, d.units), h, ...(out ? { out } : {}) };
        c.outlined(() => cellForward(c, batch, d.units, cell, k.params.bias as Local));
      });
      lastStateOut(k, d, b.h);
    },
    backward(k) {
      const d = dimsOf(k);
      const { code: c, batch } = k;
      const b = buffersOf(k, d);
      const g = backwardBuffersOf(k, d);
      const slot = stateFloats(k, d);
      // dh starts as the last state's gradient (the output's, where it is the last state alone), dc at zero
      startCarry(k, d, g.dh);
      zeroMat(c, slot, g.dc);
      zeroGrads(k, d);
      // from the last step down: t = T - 1 - s
      const [s, t] = [c.local('i32'), c.local('i32')];
      c.for(s, () => c.i32(0), () => c.i32(d.steps), () => {
        c.i32(d.steps - 1).get(s).i32Sub().set(t);
        const at = (m: Mat, width: number, next = 0) => timeStep(c, m, () => (c.get(t), next && c.i32(next).i32Add()), batch, width);
        const dOut = d.sequences ? stepColumns(c, k.dOutput, () => c.get(t), d.units, d.steps) : undefined;
        const cell = { gates: at(b.gates, 4 * d.units), cPrev: at(b.c, d.units), tanhC: at(b.tanhC, d.units), dh: g.dh, dc: g.dc, dz: g.dz, ...(dOut ? { dOut } : {}) };
        c.outlined(() => cellBackward(c, batch, d.units, cell));
        stepGradients(k, d, g, at(b.x, d.features), at(b.h, d.units));
        product(c, batch, g.dz, g.recurrentT, g.dh);
        if (k.dInputs[0]) {
          const dx = stepColumns(c, k.dInputs[0], () => c.get(t), d.features, d.steps);
          product(c, batch, g.dz, g.kernelT!, dx);
        }
      });
    },
  };
}

type LstmDims = RecurrentDims;

const dimsOf = (k: WasmContext): LstmDims => recurrentDims(k, 4);

/** The forward pass's time-major buffers, which the backward pass reads. */
function buffersOf(k: WasmContext, d: LstmDims) {
  const { steps: T, features: F, units: u } = d;
  // [steps, B, width] as one Mat of steps * B rows of `width`
  const timeMajor = (name: string, steps: number, width: number): Mat => ({ ...k.saved(name, steps * width), width });
  return { x: timeMajor('x', T, F), gates: timeMajor('gates', T, 4 * u), zh: k.saved('zh', 4 * u), h: timeMajor('h', T + 1, u), c: timeMajor('c', T + 1, u), tanhC: timeMajor('tanhC', T, u) };
}

type LstmBackward = ReturnType<typeof backwardBuffersOf>;

/** Whether a weight's gradient sums over the batch in blocks of 48 (the op path's batched product, a batch over 48). */
const sumsInBlocks = (k: WasmBackwardContext, w: ParamMat) => !!w.blocked && k.maxBatch > SUM_BLOCK;

/**
 * The backward pass's scratch: the carried dh and dc, a step's dz, the kernels transposed, and where a weight's
 * gradient sums in blocks, its share of a step (summed on its own, then added).
 */
function backwardBuffersOf(k: WasmBackwardContext, d: LstmDims) {
  const { features: F, units: u } = d;
  // a buffer of `floats` floats, whatever the batch (k.saved's are [B, width])
  const scratch = (name: string, floats: number, width: number): Mat => ({ ...k.saved(name, Math.ceil(floats / k.maxBatch)), width });
  const kernel = k.params.kernel as ParamMat;
  const recurrent = k.params.recurrent_kernel as ParamMat;
  return {
    dh: k.saved('dh', u),
    dc: k.saved('dc', u),
    dz: k.saved('dz', 4 * u),
    shares: {
      kernel: sumsInBlocks(k, kernel) ? scratch('dkernel_t', F * 4 * u, 4 * u) : undefined,
      recurrent_kernel: sumsInBlocks(k, recurrent) ? scratch('drecurrent_t', u * 4 * u, 4 * u) : undefined,
    },
    recurrentT: transposedParam(k.code, recurrent, scratch('recurrentT', u * 4 * u, u)),
    kernelT: k.dInputs[0] ? transposedParam(k.code, kernel, scratch('kernelT', F * 4 * u, F)) : undefined,
  };
}

/**
 * Step t's shares of the parameters' gradients added to their totals (autodiff adds each step's product to
 * the sum of the later steps'): x_tᵀ dz, h_{t-1}ᵀ dz, the column sums of dz. Each share is summed from 0 in
 * registers and then added (tiles.ts); a share summed in blocks of 48 goes through its scratch.
 */
function stepGradients(k: WasmBackwardContext, d: LstmDims, g: LstmBackward, x: Mat, hPrev: Mat): void {
  const { code: c, batch } = k;
  const weight = (name: 'kernel' | 'recurrent_kernel', input: Mat) => {
    const total = { ...k.grads[name], width: 4 * d.units };
    const share = g.shares[name];
    // each a function of its own (Code.outlined: V8 compiles small functions better)
    if (!share) return void c.outlined(() => tiledGradWeights(c, batch, input, g.dz, total, true));
    c.outlined(() => {
      denseGradWeights(c, batch, input, g.dz, share, true);
      addFloats(c, d.sizes[name], share, total);
    });
  };
  weight('kernel', x);
  weight('recurrent_kernel', hPrev);
  c.outlined(() => addColumnSums(c, batch, g.dz, { ...k.grads.bias, width: 4 * d.units }));
}

/** Pushes the address of an element: a row's address (a local) + the chunk's offset (a local, or none); the constant offset goes on the load or store. */
const element = (c: Code, row: Local, off: Local | undefined) => (c.get(row), off && c.get(off).i32Add());

/** Sets a local for each Mat to its row b's address. */
function rowPointers<K extends string>(c: Code, mats: Record<K, Mat>): { set(b: Local): void; at: Record<K, Local> } {
  const at = Object.fromEntries(Object.keys(mats).map((name) => [name, c.local('i32')])) as Record<K, Local>;
  return { at, set: (b) => (Object.keys(mats) as K[]).forEach((name) => (rowOf(c, mats[name], b), c.set(at[name]))) };
}

const GATES = ['sigmoid', 'sigmoid', 'tanh', 'sigmoid'] as const;

/**
 * A cell's vocabulary for one chunk of columns: `load` a row's element (plus a constant offset, for a gate's
 * block), `keep` what `push` leaves on the stack in a new local, `store` a local into a row's element.
 */
function cellLanes(c: Code, v: Lanes, off: Local | undefined, col: number) {
  const load = (row: Local, extra = 0) => (element(c, row, off), v.load(col + extra));
  const keep = (push: () => void) => {
    const l = v.floatLocal();
    push();
    c.set(l);
    return l;
  };
  const store = (row: Local, value: Local, extra = 0) => (element(c, row, off), c.get(value), v.store(col + extra));
  return { load, keep, store };
}

/**
 * One step forward, row by row: z = (x_t · kernel + h · recurrent_kernel) + bias, the gates' activations in
 * place of x_t · kernel, c = f * c_prev + i * g; then a second pass of tanh(c), h = o * tanh(c) (and into
 * the output's step). Two passes, not one: tanh(c) waits on all four gates, and its own long chain overlaps
 * the next elements' better in a loop of its own (the same operations on each element).
 */
function cellForward(c: Code, batch: Local, u: number, m: { gates: Mat; zh: Mat; cPrev: Mat; c: Mat; tanhC: Mat; h: Mat; out?: Mat }, bias: Local): void {
  const rows = rowPointers(c, m as Record<keyof typeof m, Mat>);
  const p = rows.at;
  forRows(c, batch, (b) => {
    rows.set(b);
    rowColumns(c, u, (v, off, col) => {
      const { load, keep, store } = cellLanes(c, v, off, col);
      const a = GATES.map((act, gate) => {
        const z = keep(() => (load(p.gates, gate * u * 4), load(p.zh, gate * u * 4), v.add(), load(bias, gate * u * 4), v.add()));
        const value = keep(() => activation(v, act, z));
        store(p.gates, value, gate * u * 4);
        return value;
      });
      store(p.c, keep(() => (c.get(a[1]), load(p.cPrev), v.mul(), c.get(a[0]), c.get(a[2]), v.mul(), v.add())));
    });
  });
  forRows(c, batch, (b) => {
    rows.set(b);
    rowColumns(c, u, (v, off, col) => {
      const { load, keep, store } = cellLanes(c, v, off, col);
      const cell = keep(() => load(p.c));
      const tc = keep(() => activation(v, 'tanh', cell));
      store(p.tanhC, tc);
      const h = keep(() => (load(p.gates, 3 * u * 4), c.get(tc), v.mul()));
      store(p.h, h);
      if (p.out) store(p.out, h);
    });
  });
}

/**
 * One step backward, row by row, as autodiff of the forward's operations: dh = (the output's share) + the
 * carried dh; do = dh tanh(c), dc = dh o (1 - tanh(c)^2) + the carried dc; the carried dc becomes dc f; the
 * gates' dz through their activations' gradients from df = dc c_prev, di = dc g, dg = dc i.
 */
function cellBackward(c: Code, batch: Local, u: number, m: { gates: Mat; cPrev: Mat; tanhC: Mat; dh: Mat; dc: Mat; dz: Mat; dOut?: Mat }): void {
  const rows = rowPointers(c, m as Record<keyof typeof m, Mat>);
  const p = rows.at;
  forRows(c, batch, (b) => {
    rows.set(b);
    rowColumns(c, u, (v, off, col) => {
      const { load, keep, store } = cellLanes(c, v, off, col);
      const [i, f, g, o] = [0, 1, 2, 3].map((gate) => keep(() => load(p.gates, gate * u * 4)));
      const tc = keep(() => load(p.tanhC));
      const dh = keep(() => (load(p.dh), p.dOut && (load(p.dOut), v.add())));
      const dOut = keep(() => (c.get(dh), c.get(tc), v.mul()));
      const dtc = keep(() => (c.get(dh), c.get(o), v.mul()));
      const dc = keep(() => (activationGrad(v, 'tanh', tc, tc, dtc), load(p.dc), v.add()));
      const prev = keep(() => load(p.cPrev));
      store(p.dc, keep(() => (c.get(dc), c.get(f), v.mul())));
      const times = (x: Local, y: Local) => keep(() => (c.get(x), c.get(y), v.mul()));
      const dz = [
        keep(() => activationGrad(v, 'sigmoid', i, i, times(dc, g))),
        keep(() => activationGrad(v, 'sigmoid', f, f, times(dc, prev))),
        keep(() => activationGrad(v, 'tanh', g, g, times(dc, i))),
        keep(() => activationGrad(v, 'sigmoid', o, o, dOut)),
      ];
      dz.forEach((value, gate) => store(p.dz, value, gate * u * 4));
    });
  });
}
