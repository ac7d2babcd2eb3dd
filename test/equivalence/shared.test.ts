// Shared layers against plain TF.js. N members whose `shared` layers hold one set of weights must equal
// one ordinary TF.js network with one copy of those layers and N heads (tfjs-layers layers with the same
// initial weights), trained on the sum of the heads' mean losses, on the same batches: the shared layers'
// weights by tf.train's optimizer with the file's hyperparameters, each head's by its own with its
// member's. A shared layer on the shared input (a trunk) runs once in the reference; one after per-member
// layers is the same layer object applied to each member's activations. Every lowering, sgd and adam
// (with per-member values the shared layers must not take), dense and conv trunks, cpu and wasm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lowerings } from '../../src/layers/forward.js';
import { getWeights } from '../../src/serve/layers-model.js';
import type { ModelIR } from '../../src/ir/model-ir.js';
import { alone, backends, build, expectClose, inputBatch, randomBatch, tf, useBackend, type Built } from './harness.js';

const MEMBERS = 3;
const BATCH = 4;
const STEPS = 3;

const cases: Record<string, { input: number[]; layers: string }> = {
  'dense trunk': { input: [3], layers: 'trunk = shared dense(5, activation: tanh)\ndense(2, activation: sigmoid)' },
  'conv trunk': { input: [6, 6, 1], layers: 'shared conv2d(3, kernel: 3, activation: relu)\nmaxpool2d(2)\nflatten()\ndense(2)' },
  // per-member layers whose input is a shared value that needs its gradient (not data): wide ops on it
  'per-member conv2d and batchnorm on a conv trunk': { input: [6, 6, 1], layers: 'shared conv2d(2, kernel: 3, padding: same, activation: relu)\nconv2d(2, kernel: 3, bias: false)\nbatchnorm()\nflatten()\ndense(2)' },
  'per-member layernorm on a dense trunk': { input: [3], layers: 'shared dense(5, activation: relu)\nlayernorm()\ndense(2)' },
  'two shared layers, then heads': { input: [4], layers: 'shared dense(5, activation: relu)\nshared layernorm()\ndense(2)' },
  'a shared dense after per-member layers': { input: [3], layers: 'dense(4, activation: tanh)\nshared dense(3, activation: relu)\ndense(2)' },
  'a shared conv2d after per-member layers': { input: [5, 5, 2], layers: 'conv2d(2, kernel: 2, padding: same)\nshared conv2d(3, kernel: 3, activation: elu)\nflatten()\ndense(2)' },
  'a shared layernorm between per-member layers': { input: [4], layers: 'dense(5)\nshared layernorm(epsilon: 0.01)\ndense(2)' },
  // the members' sequences folded into one batch for the one lstm
  'a shared lstm after per-member grus': { input: [3, 2], layers: 'gru(3, sequences: true, reset_after: false)\nshared lstm(3)\ndense(2)' },
  // its running statistics too: the reference's trunk, run once per step, updates them once
  // one table for every member (the common case of a shared embedding with per-member heads), on token ids
  'an embedding trunk': { input: [4], layers: 'shared embedding(6, 3)\nflatten()\ndense(2)' },
  'a batchnorm trunk': { input: [4], layers: 'shared dense(5, bias: false)\nshared batchnorm(momentum: 0.9)\nrelu()\ndense(2)' },
};

interface OptimizerCase {
  line: string;
  vary: string;
  make(h: (k: string) => number): tf.Optimizer;
  /** Keras' clipnorm: each variable's gradient clipped by its own norm (the shared ones' with the file's value) */
  clip?: boolean;
}

const optimizers: Record<string, OptimizerCase> = {
  sgd: { line: 'sgd(lr: 0.05)', vary: 'vary lr: [0.1, 0.03, 0.2]', make: (h: (k: string) => number) => tf.train.sgd(h('lr')) },
  'sgd with clipnorm': { line: 'sgd(lr: 0.5, clipnorm: 0.02)', vary: 'vary clipnorm: [0.0, 0.1, 0.01]', make: (h: (k: string) => number) => tf.train.sgd(h('lr')), clip: true },
  adam: {
    line: 'adam(lr: 0.01)',
    vary: 'vary lr: [0.02, 0.05, 0.001]\n  vary beta1: [0.8, 0.85, 0.95]',
    make: (h: (k: string) => number) => tf.train.adam(h('lr'), h('beta1'), h('beta2'), h('epsilon')),
  },
};

const source = (c: { input: number[]; layers: string }, o: OptimizerCase) =>
  `model m(input: [${c.input.join(', ')}]) {\n${c.layers}\n}\nensemble {\n  seed: 3\n  ${o.vary}\n}\ntrain { data: csv("none.csv") loss: mse optimizer: ${o.line} steps: ${STEPS} }\n`;

const isShared = (ir: ModelIR, op: ModelIR['ops'][number]) => op.params.some((name) => ir.params.find((p) => p.name === name)!.shared);

/**
 * The reference network's outputs, one per member: member m's own layers from its model, the shared
 * layers from model 0 (one set of variables). What every member computes alike (the input, and shared
 * or weightless layers of it) is computed once.
 */
function referenceOutputs(ir: ModelIR, models: tf.LayersModel[], x: tf.Tensor): tf.Tensor[] {
  const common = new Map<number, tf.Tensor>([[0, x]]);
  const apply = (model: tf.LayersModel, op: ModelIR['ops'][number], ins: tf.Tensor[]) => model.getLayer(op.name).apply(ins.length === 1 ? ins[0] : ins, { training: true }) as tf.Tensor;
  for (const op of ir.ops.slice(1)) {
    if ((isShared(ir, op) || !op.params.length) && op.inputs.every((i) => common.has(i))) common.set(op.id, apply(models[0], op, op.inputs.map((i) => common.get(i)!)));
  }
  return models.map((model) => {
    const values = new Map(common);
    for (const op of ir.ops.slice(1)) {
      if (!values.has(op.id)) values.set(op.id, apply(isShared(ir, op) ? models[0] : model, op, op.inputs.map((i) => values.get(i)!)));
    }
    return values.get(ir.output)!;
  });
}

/** tf.clip_by_norm(g, c), or g where c = 0 (no clipping). */
function clipByNorm(g: tf.Tensor, clip: number): tf.Tensor {
  if (!(clip > 0)) return g;
  const norm = tf.norm(g).dataSync()[0];
  return norm > clip ? tf.mul(g, clip / norm) : g;
}

const variables = (model: tf.LayersModel, layers: string[]) =>
  layers.flatMap((name) => model.getLayer(name).trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val));

/** Trains the reference on the batches and returns each member's weights, by parameter name. */
function trainReference(b: Built, optimizer: OptimizerCase, data: { x: tf.Tensor; y: tf.Tensor }[]) {
  const models = Array.from({ length: MEMBERS }, (_, m) => alone(b, m));
  const weighted = b.ir.ops.filter((op) => op.params.length);
  const sharedLayers = weighted.filter((op) => isShared(b.ir, op)).map((op) => op.name);
  const ownLayers = weighted.filter((op) => !isShared(b.ir, op)).map((op) => op.name);
  const group = (vars: tf.Variable[], h: (k: string) => number) => ({ vars, opt: optimizer.make(h), clip: optimizer.clip ? h('clipnorm') : 0 });
  const groups = [group(variables(models[0], sharedLayers), (k) => b.hyper.base(k)), ...models.map((model, m) => group(variables(model, ownLayers), (k) => b.pop.hyper(k)[m]))];
  for (const { x, y } of data) {
    const { grads } = tf.variableGrads(() => {
      const outs = referenceOutputs(b.ir, models, x);
      return outs.map((out) => tf.losses.meanSquaredError(y, out)).reduce((a, l) => tf.add(a, l)) as tf.Scalar;
    }, groups.flatMap((g) => g.vars));
    for (const g of groups) g.opt.applyGradients(g.vars.map((v) => ({ name: v.name, tensor: clipByNorm(grads[v.name], g.clip) })));
  }
  const trunk = getWeights(models[0], b.ir);
  const weights = models.map((model) => new Map([...getWeights(model, b.ir)].map(([name, w]) => [name, b.ir.params.find((p) => p.name === name)!.shared ? trunk.get(name)! : w])));
  models.forEach((model) => model.dispose());
  return weights;
}

describe.each(backends)('shared layers against one TF.js network with one trunk and N heads, on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());

  for (const [name, c] of Object.entries(cases)) {
    for (const [optName, optimizer] of Object.entries(optimizers)) {
      it.each(lowerings)(`${name}, ${optName}: %s`, async (lowering) => {
        const b = build(source(c, optimizer), lowering, MEMBERS);
        expect(b.ir.params.some((p) => p.shared)).toBe(true);
        const out = b.ir.ops[b.ir.output].shape;
        const data = Array.from({ length: STEPS }, (_, s) => ({ x: inputBatch(b.ir, 700 + s, [BATCH, ...c.input]), y: randomBatch(800 + s, [BATCH, ...out]) }));
        for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
        const expected = trainReference(b, optimizer, data);
        for (let m = 0; m < MEMBERS; m++) {
          const fused = await b.pop.memberWeights(m);
          for (const [param, values] of expected[m]) expectClose(fused.get(param)!, values, `member ${m} ${param}`);
        }
        // the shared layers really are one tensor: every member reads the same values
        const first = await b.pop.memberWeights(0);
        for (const p of b.ir.params.filter((q) => q.shared)) expect(Array.from((await b.pop.memberWeights(MEMBERS - 1)).get(p.name)!)).toEqual(Array.from(first.get(p.name)!));
        tf.dispose(data.flatMap((d) => [d.x, d.y]));
        b.pop.dispose();
      });
    }
  }
});

// A shared batchnorm after per-member layers normalises each member with its own batch's statistics (as
// the reference's one layer applied to each member's activations does) and moves its one pair of running
// statistics towards the mean of the members' batch statistics, once per step: after a step from
// moving_mean 0, it is (1 - momentum) x the mean over members of their batch means.
describe('a shared batchnorm after per-member layers', () => {
  beforeAll(() => useBackend('cpu'));
  const c = { input: [3], layers: 'dense(4)\nshared batchnorm(momentum: 0.8)\ndense(2)' };

  it.each(lowerings)('trains as the reference, and its running mean moves by the members\' mean: %s', async (lowering) => {
    const b = build(source(c, optimizers.sgd), lowering, MEMBERS);
    const data = [{ x: randomBatch(900, [BATCH, 3]), y: randomBatch(901, [BATCH, 2]) }];
    const models = Array.from({ length: MEMBERS }, (_, m) => alone(b, m));
    const batchMeans = models.map((model) => tf.tidy(() => tf.mean(model.getLayer('dense_1').apply(data[0].x) as tf.Tensor, 0).dataSync() as Float32Array));
    models.forEach((model) => model.dispose());
    b.pop.step({ kind: 'tensors', x: data[0].x, y: data[0].y }).dispose();
    const expected = trainReference(b, optimizers.sgd, data);
    for (let m = 0; m < MEMBERS; m++) {
      const fused = await b.pop.memberWeights(m);
      for (const [param, values] of expected[m]) if (!param.includes('moving')) expectClose(fused.get(param)!, values, `member ${m} ${param}`);
      const mean = batchMeans[0].map((_, ch) => (0.2 * batchMeans.reduce((s, bm) => s + bm[ch], 0)) / MEMBERS);
      expectClose(fused.get('batchnorm_1/moving_mean')!, mean, `member ${m} batchnorm_1/moving_mean`);
    }
    tf.dispose([data[0].x, data[0].y]);
    b.pop.dispose();
  });
});
