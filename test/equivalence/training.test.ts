// After K training steps, member i of a fused population has exactly the weights of member i trained
// alone by plain TF.js (a tfjs-layers model, tf.train optimizers, the same batches): for every layer
// kind, every lowering, every optimizer, on cpu and wasm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lowerings } from '../../src/layers/forward.js';
import { getWeights } from '../../src/serve/layers-model.js';
import { alone, aloneFused, backends, build, expectClose, hasLayersReference, inputBatch, randomBatch, tf, useBackend, type Built } from './harness.js';
import { layerCases, lossCases, lossSource, OPT_STEPS, optimizerCases, optimizerModels, optimizerSource, source, type LossCase } from './cases.js';
import { Rng } from '../../src/util/rng.js';

const MEMBERS = 3;
const BATCH = 4;
const STEPS = 3;
const LRS = [0.1, 0.03, 0.2];

/** STEPS batches for a model; targets in the model's output shape. */
function batches(input: number[], output: number[], onehot = false, ir?: Built['ir']) {
  return Array.from({ length: STEPS }, (_, s) => {
    const x = ir ? inputBatch(ir, 100 + s, [BATCH, ...input]) : randomBatch(100 + s, [BATCH, ...input]);
    const y = onehot ? tf.oneHot(tf.tensor1d([s % 2, 1, 0, (s + 1) % 2], 'int32'), output[0]).toFloat() : randomBatch(200 + s, [BATCH, ...output]);
    return { x, y };
  });
}

async function expectMembersMatch(b: Built, reference: (m: number) => Promise<Map<string, Float32Array>>) {
  for (let m = 0; m < b.pop.n; m++) {
    const fused = await b.pop.memberWeights(m);
    const expected = await reference(m);
    for (const [name, values] of expected) expectClose(fused.get(name)!, values, `member ${m} ${name}`);
  }
}

const withLrs = (c: { input: number[]; layers: string }) => source(c).replace('ensemble { seed: 5 }', `ensemble { seed: 5 vary lr: [${LRS.join(', ')}] }`);

describe.each(backends)('training on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());

  describe('every layer kind, with sgd and per-member learning rates', () => {
    for (const [name, c] of Object.entries(layerCases)) {
      if (name === 'dropout') continue; // its masks are netc's own: see 'dropout against plain TF.js' below
      it.each(lowerings)(`${name}: %s`, async (lowering) => {
        const b = build(withLrs(c), lowering, MEMBERS, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
        const data = batches(c.input, b.ir.ops[b.ir.output].shape, false, b.ir);
        for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
        await expectMembersMatch(b, async (m) => {
          // a model tfjs-layers cannot express (attention) against a run of the member alone
          if (!hasLayersReference(b)) {
            const one = aloneFused(withLrs(c), m, MEMBERS, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
            for (const { x, y } of data) one.pop.step({ kind: 'tensors', x, y }).dispose();
            const w = await one.pop.memberWeights(0);
            one.pop.dispose();
            return w;
          }
          const model = alone(b, m);
          model.compile({ optimizer: tf.train.sgd(LRS[m]), loss: 'meanSquaredError' });
          for (const { x, y } of data) await model.trainOnBatch(x, y);
          const w = getWeights(model, b.ir);
          model.dispose();
          return w;
        });
        b.pop.dispose();
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Every optimizer against TF.js's own (tf.train.*), or against the formula written out here where TF.js
// has none (adamw, decoupled weight decay), on a dense model and on a small conv net.
//
// clipnorm: tf.train's optimizers have none. netc implements Keras' clipnorm, which clips each variable's
// gradient on its own (tf.clip_by_norm per weight tensor: g * c / max(|g|, c)), not the global norm over
// all of a model's parameters (that is Keras' global_clipnorm). The references below clip each of the
// member's gradient tensors by its own norm before handing them to tf.train's optimizer.

/** Keras' clipnorm for one variable's gradient: tf.clip_by_norm(g, c), or g where c = 0 (no clipping). */
function clipByNorm(g: tf.Tensor, clip: number): tf.Tensor {
  if (!(clip > 0)) return g;
  const norm = tf.norm(g).dataSync()[0];
  return norm > clip ? tf.mul(g, clip / norm) : g;
}

/** Keras' formulas, written out for one model (no fused code involved). */
function manualStep(kind: 'adamw' | 'sgd-decay-clip', vars: tf.Variable[], grads: tf.Tensor[], slots: tf.Tensor[][], acc: number[], h: (key: string) => number) {
  if (kind === 'adamw') {
    // beta^t as tf.train.adam keeps it: float32 products
    acc[0] = Math.fround(acc[0] * Math.fround(h('beta1')));
    acc[1] = Math.fround(acc[1] * Math.fround(h('beta2')));
  }
  vars.forEach((w, i) => {
    const g = grads[i];
    if (kind === 'adamw') {
      const [b1, b2, lr, eps, wd] = [h('beta1'), h('beta2'), h('lr'), h('epsilon'), h('weight_decay')];
      const decayed = tf.sub(w, tf.mul(w, wd * lr));
      slots[i][0] = tf.add(tf.mul(slots[i][0], b1), tf.mul(g, 1 - b1));
      slots[i][1] = tf.add(tf.mul(slots[i][1], b2), tf.mul(tf.square(g), 1 - b2));
      const mHat = tf.div(slots[i][0], tf.sub(1, acc[0]));
      const vHat = tf.div(slots[i][1], tf.sub(1, acc[1]));
      w.assign(tf.add(tf.mul(tf.div(mHat, tf.add(tf.sqrt(vHat), eps)), -lr), decayed));
    } else {
      const [lr, m, wd] = [h('lr'), h('momentum'), h('weight_decay')];
      slots[i][0] = tf.add(tf.mul(slots[i][0], m), clipByNorm(g, h('clipnorm')));
      w.assign(tf.sub(tf.sub(w, tf.mul(w, wd * lr)), tf.mul(slots[i][0], lr)));
    }
  });
}

describe.each(backends)('optimizers on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  describe.each(Object.keys(optimizerModels))('%s model', (modelName) => {
    const { input, layers } = optimizerModels[modelName];
    for (const [name, c] of Object.entries(optimizerCases)) {
      it.each(lowerings)(`${name}: %s`, async (lowering) => {
        const src = optimizerSource({ input, layers }, c);
        const b = build(src, lowering, MEMBERS);
        const data = Array.from({ length: OPT_STEPS }, (_, s) => ({
          x: randomBatch(300 + s, [BATCH, ...input], 2),
          y: tf.oneHot(tf.tensor1d([s % 2, 1, 0, (s + 1) % 2], 'int32'), 2).toFloat(),
        }));
        for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
        await expectMembersMatch(b, async (m) => {
          const h = (key: string) => b.pop.hyper(key)[m];
          const model = alone(b, m);
          const vars = model.trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val);
          const loss = (x: tf.Tensor, y: tf.Tensor) => tf.mean(tf.metrics.categoricalCrossentropy(y, model.apply(x) as tf.Tensor)) as tf.Scalar;
          if (c.tfjs && !c.clip) {
            model.compile({ optimizer: c.tfjs(tf, h), loss: 'categoricalCrossentropy' });
            for (const { x, y } of data) await model.trainOnBatch(x, y);
          } else if (c.tfjs) {
            const optimizer = c.tfjs(tf, h);
            for (const { x, y } of data) {
              const { grads } = tf.variableGrads(() => loss(x, y), vars);
              optimizer.applyGradients(Object.fromEntries(vars.map((v) => [v.name, clipByNorm(grads[v.name], h('clipnorm'))])));
            }
          } else {
            const slots = vars.map((v) => [tf.zerosLike(v), tf.zerosLike(v)]);
            const acc = [1, 1];
            for (const { x, y } of data) {
              const { grads } = tf.variableGrads(() => loss(x, y), vars);
              manualStep(c.manual!, vars, vars.map((v) => grads[v.name]), slots, acc, h);
            }
          }
          const w = getWeights(model, b.ir);
          model.dispose();
          return w;
        });
        b.pop.dispose();
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Dropout against plain TF.js. Its masks are random, but netc's are reproducible: member `id` draws its
// uniforms at step s from Rng.of(seed, 'dropout', op name, id, s), row-major over its own [B, ...]
// activation, whatever the lowering. The reference is the member's tfjs-layers model run layer by layer,
// each dropout replaced by a multiplication with the mask drawn from that stream (1 where u >= rate,
// scaled by 1 / (1 - rate) as Keras does), trained alone by tf.train.adam on the same batches. Dropout
// on the shared input and per-member rates (one of them 0) included; the members' ids are not their
// positions, so a mask drawn by position instead of by id fails.

const DROPOUT_STEPS = 4;
const DROPOUT_SEED = 9;
const DROPOUT_MODEL = `model m(input: [4]) {
  dropout(0.2)
  dense(6, activation: relu)
  drop = dropout(0.4)
  dense(3, activation: softmax)
}
ensemble {
  seed: ${DROPOUT_SEED}
  vary lr: [0.01, 0.003, 0.03]
  vary drop.rate: [0.1, 0.5, 0.0, 0.3, 0.6]
}
train { data: iris() loss: categorical_crossentropy optimizer: adam steps: ${DROPOUT_STEPS} }
`;

/** The mask member `id` draws for dropout op `name` at `step`, over an activation of `shape` [B, ...]. */
function dropoutMask(name: string, id: number, step: number, shape: number[], rate: number): tf.Tensor {
  const rng = Rng.of(DROPOUT_SEED, 'dropout', name, id, step);
  const keep = Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (Math.fround(rng.uniform()) >= Math.fround(rate) ? 1 : 0));
  return tf.mul(tf.tensor(keep, shape), 1 / (1 - rate));
}

describe.each(backends)('dropout against plain TF.js on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  it.each(lowerings)('%s', async (lowering) => {
    const ids = [1, 4, 2];
    const b = build(DROPOUT_MODEL, lowering, ids.length, { memberIds: ids });
    const data = Array.from({ length: DROPOUT_STEPS }, (_, s) => ({ x: randomBatch(500 + s, [BATCH, 4], 2), y: tf.oneHot(tf.tensor1d([0, 1, 2, s % 3], 'int32'), 3).toFloat() }));
    for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
    await expectMembersMatch(b, async (m) => {
      const h = (key: string) => b.pop.hyper(key)[m];
      const model = alone(b, ids[m]);
      const vars = model.trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val);
      const forward = (x: tf.Tensor, step: number) => {
        const values: tf.Tensor[] = [x];
        for (const op of b.ir.ops.slice(1)) {
          const [input] = op.inputs.map((i) => values[i]);
          values[op.id] = op.op === 'dropout' ? tf.mul(input, dropoutMask(op.name, ids[m], step, input.shape, h(`${op.name}.rate`))) : (model.getLayer(op.name).apply(input) as tf.Tensor);
        }
        return values[b.ir.output];
      };
      const optimizer = tf.train.adam(h('lr'), h('beta1'), h('beta2'), h('epsilon'));
      data.forEach(({ x, y }, step) => optimizer.minimize(() => tf.mean(tf.metrics.categoricalCrossentropy(y, forward(x, step))) as tf.Scalar, false, vars));
      const w = getWeights(model, b.ir);
      model.dispose();
      return w;
    });
    b.pop.dispose();
  });
});

// ---------------------------------------------------------------------------------------------------
// Member i in a population computes what member i computes alone (a population of one), dropout masks
// included: its random streams depend on (seed, member) only.

describe.each(backends)('a member alone on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  const src = `model m(input: [4]) {\n  dense(6, activation: relu)\n  drop = dropout(0.4)\n  dense(3, activation: softmax)\n}\nensemble {\n  seed: 9\n  vary lr: loguniform(0.001, 0.1)\n  vary drop.rate: [0.1, 0.5, 0.3, 0.2, 0.6]\n}\ntrain { data: iris() loss: categorical_crossentropy optimizer: adam steps: 4 }\n`;
  it.each(lowerings)('%s', async (lowering) => {
    const steps = Array.from({ length: 4 }, (_, s) => ({ x: randomBatch(400 + s, [BATCH, 4]), y: tf.oneHot(tf.tensor1d([0, 1, 2, s % 3], 'int32'), 3).toFloat() }));
    const all = build(src, lowering, 5);
    for (const { x, y } of steps) all.pop.step({ kind: 'tensors', x, y }).dispose();
    for (const id of [0, 3]) {
      const one = build(src, lowering, 1, { memberIds: [id] });
      for (const { x, y } of steps) one.pop.step({ kind: 'tensors', x, y }).dispose();
      const fused = await all.pop.memberWeights(id);
      for (const [name, values] of await one.pop.memberWeights(0)) expectClose(fused.get(name)!, values, `member ${id} ${name}`);
      one.pop.dispose();
    }
    all.pop.dispose();
  });

  it('draws a different dropout mask for each member', () => {
    const b = build(src.replace('vary drop.rate: [0.1, 0.5, 0.3, 0.2, 0.6]', ''), 'grouped', 3);
    const out = b.pop.forward(tf.ones([8, 4]), true);
    const rows = [0, 1, 2].map((m) => Array.from(tf.slice(out, m, 1).dataSync()).join());
    expect(new Set(rows).size).toBe(3);
    out.dispose();
    b.pop.dispose();
  });
});

describe('per-member learning rates', () => {
  beforeAll(() => useBackend('cpu'));
  it('each member steps by its own lr: w1 - w0 = -lr_i * g_i', async () => {
    const lrs = [1, 0.1, 0.01];
    const src = `model m(input: [3]) {\n  dense(2)\n}\nensemble { seed: 4 vary lr: [${lrs.join(', ')}] }\ntrain { data: csv("none.csv") loss: mse optimizer: sgd steps: 1 }\n`;
    const b = build(src, 'grouped', 3);
    const x = randomBatch(1, [4, 3]);
    const y = randomBatch(2, [4, 2]);
    const before = await Promise.all([0, 1, 2].map((m) => b.pop.memberWeights(m)));
    b.pop.step({ kind: 'tensors', x, y }).dispose();
    const ratios = [];
    for (let m = 0; m < 3; m++) {
      const model = alone(b, m);
      const vars = model.trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val);
      const { grads } = tf.variableGrads(() => tf.losses.meanSquaredError(y, model.apply(x) as tf.Tensor) as tf.Scalar, vars);
      const g = grads[vars[0].name].dataSync();
      const w0 = before[m].get('dense_1/kernel')!;
      const w1 = (await b.pop.memberWeights(m)).get('dense_1/kernel')!;
      ratios.push((w0[0] - w1[0]) / g[0]);
      model.dispose();
    }
    ratios.forEach((r, m) => expect(r).toBeCloseTo(lrs[m], 5));
    b.pop.dispose();
  });
});

// ---------------------------------------------------------------------------------------------------
// Binary cross-entropy (netc's is one op with its gradient written out, src/kernels/losses.ts) against a
// tfjs-layers model compiled with loss 'binaryCrossentropy' and tf.train.adam, as the forum MLP trains:
// soft and hard labels, and inputs large enough that some outputs saturate, where both clip the
// probabilities to [1e-7, 1 - 1e-7] and the clipped ones pass no gradient.

const BCE_MODEL = (scale: number) => `model m(input: [2]) {
  dense(${scale > 1 ? 3 : 6}, activation: ${scale > 1 ? 'linear' : 'sigmoid'})
  dense(1, activation: sigmoid)
}
ensemble { seed: 4 vary lr: [0.02, 0.1, 0.005] }
train { data: xor() loss: binary_crossentropy optimizer: adam steps: 4 }
`;

describe.each(backends)('binary cross-entropy against tfjs-layers on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  for (const [name, scale, soft] of [['hard labels', 1, false], ['soft labels', 1, true], ['saturated outputs', 40, false]] as const) {
    it.each(lowerings)(`${name}: %s`, async (lowering) => {
      const b = build(BCE_MODEL(scale), lowering, MEMBERS);
      const data = Array.from({ length: 4 }, (_, s) => ({
        x: randomBatch(400 + s, [BATCH, 2], scale),
        y: soft ? tf.add(tf.mul(randomBatch(500 + s, [BATCH, 1]), 0.5), 0.5) : tf.tensor([[1], [0], [s % 2], [1]]),
      }));
      if (scale > 1) {
        // the inputs do saturate some member's outputs beyond the clip range
        const out = tf.tidy(() => b.pop.forward(data[0].x, false));
        const p = await out.data();
        out.dispose();
        expect(p.some((v) => v > 1 - 1e-7 || v < 1e-7)).toBe(true);
      }
      for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
      await expectMembersMatch(b, async (m) => {
        const model = alone(b, m);
        model.compile({ optimizer: tf.train.adam(b.pop.hyper('lr')[m]), loss: 'binaryCrossentropy' });
        for (const { x, y } of data) await model.trainOnBatch(x, y);
        const w = getWeights(model, b.ir);
        model.dispose();
        return w;
      });
      b.pop.dispose();
    });
  }
});

// ---------------------------------------------------------------------------------------------------
// Every loss against tfjs-layers' (Keras') own, or tf.losses' huber: members trained by sgd on it, with
// per-member learning rates, on labels of the kind the loss expects (cases.ts lists them).

/** STEPS batches of labels as the loss expects them: targets, one-hot rows, class indices [B, 1] or 0/1. */
function lossLabels(labels: LossCase['labels'], width: number, s: number): tf.Tensor {
  const classes = [s % width, 1, 0, (s + 1) % width];
  if (labels === 'onehot') return tf.oneHot(tf.tensor1d(classes, 'int32'), width).toFloat();
  if (labels === 'index') return tf.tensor(classes, [BATCH, 1]);
  if (labels === 'binary') return tf.tensor([[1], [0], [s % 2], [1]]);
  return randomBatch(600 + s, [BATCH, width]);
}

describe.each(backends)('every loss against tfjs-layers on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  for (const [name, c] of Object.entries(lossCases)) {
    it.each(lowerings)(`${name}: %s`, async (lowering) => {
      const b = build(lossSource(c, LRS), lowering, MEMBERS);
      const width = b.ir.ops[b.ir.output].shape[0];
      const data = Array.from({ length: STEPS }, (_, s) => ({ x: randomBatch(700 + s, [BATCH, 3]), y: lossLabels(c.labels, width, s) }));
      for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
      await expectMembersMatch(b, async (m) => {
        const model = alone(b, m);
        model.compile({ optimizer: tf.train.sgd(LRS[m]), loss: c.reference(tf) as never });
        for (const { x, y } of data) await model.trainOnBatch(x, y);
        const w = getWeights(model, b.ir);
        model.dispose();
        return w;
      });
      b.pop.dispose();
    });
  }
});

describe('memory', () => {
  beforeAll(() => useBackend('cpu'));
  it.each(lowerings)('a training run leaks no tensors: %s', (lowering) => {
    const before = tf.memory().numTensors;
    const c = layerCases['batchnorm on images'];
    const b = build(withLrs(c), lowering, MEMBERS, { optimizer: { name: 'adam', args: {} }, loss: 'mse' });
    const x = randomBatch(1, [BATCH, ...c.input]);
    const y = randomBatch(9, [BATCH, 2]);
    for (let s = 0; s < 3; s++) {
      b.pop.step({ kind: 'tensors', x, y }).dispose();
      tf.dispose(Object.values(b.pop.evaluate(x, y, ['accuracy', 'mse', 'mae'])));
    }
    tf.dispose([x, y]);
    b.pop.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
