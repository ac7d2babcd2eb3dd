// Members on data of their own (`split:`) against plain TF.js. Member i of a fused population trained by
// netc's trainer must end with the weights of member i's tfjs-layers model trained alone by tf.train.adam
// on its own examples, in the order docs/language.md states — computed here from the rule, not by netc:
//  - kfold(k), shuffle off: every example but fold (i mod k), in order; a member with one example fewer
//    than the largest (14 examples in 3 folds: 5, 5, 4) trains alone on exactly its own: its last batch of
//    each epoch is one row shorter (3 rows of 4), with no example repeated;
//  - kfold(k), shuffle on: those examples permuted each epoch by Rng.of(seed, 'member-shuffle', i, epoch);
//  - bootstrap(): n draws Rng.of(seed, 'bootstrap', i).int(n), in the order drawn.
// Its reported metrics must be the reference's: the last epoch's training loss and accuracy, and its loss
// and accuracy on its own held-out fold (or out-of-bag set). A dense and a conv first layer (the layers
// that lose the shared-input fast path) and a batchnorm (whose batch statistics must see the short
// member's real rows only), every lowering on cpu (the op path) and on wasm (grouped: the generated step;
// blockdiag and loop: the op path), grouped on wasm with the op path forced too; sparse labels, so that
// each member's own labels go through the loss and the accuracy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/pipeline.js';
import { lowerings, type Lowering } from '../../src/layers/forward.js';
import { hyperTable } from '../../src/runtime/hyper.js';
import { train } from '../../src/train/trainer.js';
import { getWeights } from '../../src/serve/layers-model.js';
import { Rng } from '../../src/util/rng.js';
import type { Dataset } from '../../src/data/dataset.js';
import type { TF } from '../../src/kernels/tf.js';
import { alone, expectClose, tf, useBackend } from './harness.js';
import { MemberData } from '../../src/runtime/member-data.js';
import { Population } from '../../src/runtime/population.js';
import { initMember } from '../../src/kernels/init.js';

const COUNT = 14;
const CLASSES = 3;
const BATCH = 4;
const EPOCHS = 2;
const SEED = 4;
const LRS = [0.05, 0.01];

const models: Record<string, { input: number[]; layers: string; batch?: number }> = {
  dense: { input: [3], layers: 'dense(5, activation: tanh)\ndense(3, activation: softmax)' },
  conv: { input: [4, 4, 1], layers: 'conv2d(2, kernel: 3, activation: tanh)\nflatten()\ndense(3, activation: softmax)' },
  // batches of 6: a short member's last batch is 3 real rows and 1 of padding. (A one-row batch, which
  // batches of 4 would give, has variance 0: rsqrt(epsilon) then magnifies last-bit differences to ~3e-5.)
  batchnorm: { input: [3], layers: 'dense(5, bias: false)\nbatchnorm()\nrelu()\ndense(3, activation: softmax)', batch: 6 },
};

const source = (model: { input: number[]; layers: string; batch?: number }, split: string, members: number, shuffle: boolean, loss = 'sparse_categorical_crossentropy') => `model m(input: [${model.input.join(', ')}]) {
${model.layers}
}
ensemble { members: ${members} seed: ${SEED} split: ${split} vary lr: [${LRS.join(', ')}] }
train { data: idx(images: "none-images", labels: "none-labels", classes: 3) loss: ${loss} optimizer: adam batch: ${model.batch ?? BATCH} epochs: ${EPOCHS} shuffle: ${shuffle} metrics: [accuracy] }
`;

/** COUNT reproducible examples of the model's input, each with a class label. */
function dataset(input: number[]): Dataset {
  const rng = Rng.of(77, 'split-data');
  const width = input.reduce((a, b) => a * b, 1);
  const x = Float32Array.from({ length: COUNT * width }, () => rng.range(-1, 1));
  const y = Float32Array.from({ length: COUNT }, () => rng.int(CLASSES));
  return { name: 'test', count: COUNT, x, featureShape: input, y, labels: { kind: 'classes', classes: CLASSES } };
}

const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

/** What member i trains and validates on, and its order in an epoch, by the documented rule. */
interface Plan {
  own: number[];
  held: number[];
  /** examples per epoch: the largest member's training set */
  length: number;
  /** the member's own examples of an epoch, in order (fewer than `length` for a short member) */
  order(epoch: number): number[];
}

function kfoldPlan(k: number, shuffle: boolean) {
  return (i: number): Plan => {
    const sizes = range(0, k).map((f) => Math.floor(COUNT / k) + (f < COUNT % k ? 1 : 0));
    const start = sizes.slice(0, i % k).reduce((a, b) => a + b, 0);
    const held = range(start, start + sizes[i % k]);
    const own = range(0, COUNT).filter((e) => !held.includes(e));
    const length = COUNT - Math.min(...sizes);
    // its own examples and nothing more: a member with fewer has a shorter last batch
    const order = (epoch: number) => {
      const perm = shuffle ? Array.from(Rng.of(SEED, 'member-shuffle', i, epoch).permutation(own.length)) : range(0, own.length);
      return range(0, own.length).map((j) => own[perm[j]]);
    };
    return { own, held, length, order };
  };
}

function bootstrapPlan(i: number): Plan {
  const rng = Rng.of(SEED, 'bootstrap', i);
  const own = range(0, COUNT).map(() => rng.int(COUNT));
  return { own, held: range(0, COUNT).filter((e) => !own.includes(e)), length: COUNT, order: () => own };
}

function rows(ds: Dataset, input: number[], at: number[]) {
  const width = input.reduce((a, b) => a * b, 1);
  const x = tf.tensor(Float32Array.from(at.flatMap((e) => Array.from(ds.x.subarray(e * width, (e + 1) * width)))), [at.length, ...input]);
  const y = tf.oneHot(tf.tensor1d(at.map((e) => ds.y[e]), 'int32'), CLASSES).toFloat();
  return { x, y };
}

/** Loss and accuracy of a model on examples, as netc computes them (Keras' categorical crossentropy). */
function evaluate(model: tf.LayersModel, x: tf.Tensor, y: tf.Tensor) {
  return tf.tidy(() => {
    const p = model.predict(x) as tf.Tensor;
    const loss = tf.mean(tf.metrics.categoricalCrossentropy(y, p)).dataSync()[0];
    const accuracy = tf.mean(tf.cast(tf.equal(tf.argMax(p, -1), tf.argMax(y, -1)), 'float32')).dataSync()[0];
    return { loss, accuracy };
  });
}

interface Case {
  split: string;
  members: number;
  shuffle: boolean;
  plan: (i: number) => Plan;
}

const cases: Record<string, Case> = {
  'kfold(3), shuffle off': { split: 'kfold(3)', members: 6, shuffle: false, plan: kfoldPlan(3, false) },
  'kfold(3), shuffle on': { split: 'kfold(3)', members: 6, shuffle: true, plan: kfoldPlan(3, true) },
  'bootstrap(), shuffle off': { split: 'bootstrap()', members: 3, shuffle: false, plan: bootstrapPlan },
};

async function expectSplitMatches(c: Case, modelName: keyof typeof models, lowering: Lowering, forced?: 'ops') {
  // the generated step where it applies, named (NETC_ENGINE=ops, as npm run test:ops sets it, would pick ops): else ops
  const engine = forced ?? (lowering === 'grouped' ? 'fused' : undefined);
  const spec = models[modelName];
  const state = compile(source(spec, c.split, c.members, c.shuffle), 'splits.net', { lowering });
  expect(state.ensemble, state.diagnostics.map((d) => d.message).join('\n')).toBeDefined();
  const program = state.program!;
  const hyper = hyperTable(program, state.ir!);
  const ds = dataset(spec.input);
  const batch = spec.batch ?? BATCH;
  const perEpoch = Math.ceil(c.plan(0).length / batch);
  const result = await train({ tf: tf as unknown as TF, program, model: state.ir!, ensemble: state.ensemble!, hyper, data: { train: ds }, steps: EPOCHS * perEpoch, seed: SEED, ...(engine ? { engine } : {}) });
  // on wasm the grouped lowering trains by the generated step unless ops are forced; the rest on TF.js ops
  if (tf.getBackend() === 'wasm') expect(result.population.engine).toBe(lowering === 'grouped' && !forced ? 'fused' : 'ops');
  for (let i = 0; i < c.members; i++) {
    const plan = c.plan(i);
    const model = alone({ pop: undefined!, program, ir: state.ir!, hyper }, i);
    model.compile({ optimizer: tf.train.adam(hyper.value('lr', i)), loss: 'categoricalCrossentropy' });
    let sums = { loss: 0, count: 0 };
    for (let epoch = 0; epoch < EPOCHS; epoch++) {
      const order = plan.order(epoch);
      sums = { loss: 0, count: 0 };
      for (let s = 0; s < order.length; s += batch) {
        const { x, y } = rows(ds, spec.input, order.slice(s, s + batch));
        const loss = (await model.trainOnBatch(x, y)) as number;
        sums = { loss: sums.loss + loss * x.shape[0], count: sums.count + x.shape[0] };
        tf.dispose([x, y]);
      }
    }
    const fused = await result.population.memberWeights(i);
    for (const [name, values] of getWeights(model, state.ir!)) expectClose(fused.get(name)!, values, `member ${i} ${name}`);
    const held = rows(ds, spec.input, plan.held);
    const val = evaluate(model, held.x, held.y);
    const metrics = result.final[i];
    expectClose([metrics.loss, metrics.val_loss!, metrics.val_accuracy!], [sums.loss / sums.count, val.loss, val.accuracy], `member ${i} loss, val_loss, val_accuracy`);
    tf.dispose([held.x, held.y]);
    model.dispose();
  }
  result.population.dispose();
}

describe('members on their own data, against plain TF.js on cpu', () => {
  beforeAll(() => useBackend('cpu'));
  afterAll(() => tf.disposeVariables());
  for (const [name, c] of Object.entries(cases)) {
    describe(name, () => {
      for (const modelName of Object.keys(models) as (keyof typeof models)[]) {
        it.each(lowerings)(`${modelName}: %s`, (lowering) => expectSplitMatches(c, modelName, lowering));
      }
    });
  }
});

describe('members on their own data, against plain TF.js on wasm', () => {
  beforeAll(() => useBackend('wasm'));
  afterAll(() => tf.disposeVariables());
  it.each(Object.keys(cases))('%s: conv, grouped', (name) => expectSplitMatches(cases[name], 'conv', 'grouped'));
  // the short member's padded last batch, on both engines: the generated step (grouped) and TF.js ops
  it.each(lowerings)('kfold(3), shuffle on: batchnorm, %s', (lowering) => expectSplitMatches(cases['kfold(3), shuffle on'], 'batchnorm', lowering));
  it.each(['dense', 'batchnorm'] as const)('kfold(3), shuffle on: %s, grouped, ops forced', (modelName) => expectSplitMatches(cases['kfold(3), shuffle on'], modelName, 'grouped', 'ops'));
});

// Bootstrapped heads: a shared trunk under bootstrap() sees every member's own batch, and trains on the sum
// of the heads' mean losses, each head on its own draws. The reference is one TF.js network, one trunk
// (model 0's dense_1, tf.train.adam with the file's lr) and a head per member (its own adam and lr), each
// head applied to the trunk's output on that member's batch.
describe('bootstrapped heads on a shared trunk, against one TF.js network', () => {
  beforeAll(() => useBackend('cpu'));
  afterAll(() => tf.disposeVariables());
  const heads = { input: [3], layers: 'trunk = shared dense(5, activation: tanh)\ndense(3, activation: softmax)' };

  it.each(lowerings)('%s', async (lowering) => {
    const state = compile(source(heads, 'bootstrap()', 3, false), 'heads.net', { lowering });
    expect(state.ensemble, state.diagnostics.map((d) => d.message).join('\n')).toBeDefined();
    const program = state.program!;
    const ir = state.ir!;
    const hyper = hyperTable(program, ir);
    const ds = dataset(heads.input);
    const steps = EPOCHS * Math.ceil(COUNT / BATCH);
    const result = await train({ tf: tf as unknown as TF, program, model: ir, ensemble: state.ensemble!, hyper, data: { train: ds }, steps, seed: SEED });

    const models = [0, 1, 2].map((i) => alone({ pop: undefined!, program, ir, hyper }, i));
    const layerVars = (model: tf.LayersModel, name: string) => model.getLayer(name).trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val);
    const groups = [
      { vars: layerVars(models[0], 'dense_1'), opt: tf.train.adam(hyper.base('lr')) },
      ...models.map((model, i) => ({ vars: layerVars(model, 'dense_2'), opt: tf.train.adam(hyper.value('lr', i)) })),
    ];
    const plans = [0, 1, 2].map((i) => bootstrapPlan(i));
    for (let epoch = 0; epoch < EPOCHS; epoch++) {
      for (let s = 0; s < COUNT; s += BATCH) {
        const batches = plans.map((p) => rows(ds, heads.input, p.order(epoch).slice(s, s + BATCH)));
        const { grads } = tf.variableGrads(() => {
          const losses = batches.map(({ x, y }, i) => tf.mean(tf.metrics.categoricalCrossentropy(y, models[i].getLayer('dense_2').apply(models[0].getLayer('dense_1').apply(x)) as tf.Tensor)));
          return losses.reduce((a, l) => tf.add(a, l)) as tf.Scalar;
        }, groups.flatMap((g) => g.vars));
        for (const g of groups) g.opt.applyGradients(g.vars.map((v) => ({ name: v.name, tensor: grads[v.name] })));
        tf.dispose(batches.flatMap((b) => [b.x, b.y]));
      }
    }
    const trunk = getWeights(models[0], ir);
    for (let i = 0; i < 3; i++) {
      const fused = await result.population.memberWeights(i);
      for (const [name, values] of getWeights(models[i], ir)) expectClose(fused.get(name)!, name.startsWith('dense_1/') ? trunk.get(name)! : values, `member ${i} ${name}`);
    }
    models.forEach((m) => m.dispose());
    result.population.dispose();
  });
});

// Rows are gathered on the host for cpu and wasm and on the device elsewhere (webgpu, tfjs-node); both
// must give the same batches, byte for byte, and so the same evaluation.
describe('a member batch gathered on the host and on the device', () => {
  beforeAll(() => useBackend('wasm'));
  it('holds the same bytes, and evaluates the same', async () => {
    const state = compile(source(models.conv, 'kfold(3)', 6, true), 'gather.net');
    const program = state.program!;
    const ds = dataset(models.conv.input);
    const spec = { split: program.ensemble.split!, train: ds, seed: SEED, shuffle: true, batch: BATCH, input: models.conv.input, loss: program.train!.loss };
    const [host, device] = (['host', 'device'] as const).map((gatherOn) => new MemberData(tf as unknown as TF, { ...spec, gatherOn }));
    // batch 2 of an epoch, [8, 10): members 0 and 1 (9 examples each) have 1 real row, member 2 (10) both;
    // the last batch says so whoever is in it (member 2 alone too), the others never pad
    const [last, alone2, full] = [host.batch([0, 1, 2], 0, 2), host.batch([2], 0, 2), host.batch([0, 1, 2], 0, 1)];
    expect(Array.from(last.rows ?? [])).toEqual([1, 1, 2]);
    expect(Array.from(alone2.rows ?? [])).toEqual([2]);
    expect(full.rows).toBeUndefined();
    tf.dispose([last, alone2, full].flatMap((t) => [t.x, t.y]));
    for (const [epoch, b] of [[0, 0], [1, 2]]) {
      const [a, c] = [host.batch([5, 0, 3], epoch, b), device.batch([5, 0, 3], epoch, b)];
      expect(a.x.shape).toEqual([3, a.size, 4, 4, 1]);
      expect(Buffer.from((await a.x.data()).buffer).equals(Buffer.from((await c.x.data()).buffer))).toBe(true);
      expect(Buffer.from((await a.y.data()).buffer).equals(Buffer.from((await c.y.data()).buffer))).toBe(true);
      tf.dispose([a.x, a.y, c.x, c.y]);
    }
    const pop = new Population({
      tf: tf as unknown as TF,
      ensemble: state.ensemble!,
      memberIds: [0, 1, 2, 3, 4, 5],
      seed: SEED,
      optimizer: 'adam',
      loss: program.train!.loss,
      hyper: (key, m) => hyperTable(program, state.ir!).value(key, m),
      initial: (m) => initMember(state.ir!, SEED, m),
    });
    expect(await device.evaluate(pop, 'validation', 64, ['accuracy'])).toEqual(await host.evaluate(pop, 'validation', 64, ['accuracy']));
    pop.dispose();
    host.dispose();
    device.dispose();
  });
});

// Binary cross-entropy, one op with its gradient written out, against each member's own labels [N, B, 1]:
// the 0/1 class of each example (class 2 counts as 1) and a sigmoid output, trained against tfjs-layers'.
describe('members on their own data with binary cross-entropy, against plain TF.js', () => {
  beforeAll(() => useBackend('cpu'));
  afterAll(() => tf.disposeVariables());
  it.each(lowerings)('kfold(3), shuffle on: %s', async (lowering) => {
    const binary = { input: [3], layers: 'dense(5, activation: tanh)\ndense(1, activation: sigmoid)' };
    const state = compile(source(binary, 'kfold(3)', 6, true, 'binary_crossentropy').replace('classes: 3', 'classes: 2'), 'binary.net', { lowering });
    expect(state.ensemble, state.diagnostics.map((d) => d.message).join('\n')).toBeDefined();
    const program = state.program!;
    const hyper = hyperTable(program, state.ir!);
    const ds = dataset(binary.input);
    ds.y = ds.y.map((c) => Math.min(c, 1));
    ds.labels = { kind: 'classes', classes: 2 };
    const plan = kfoldPlan(3, true);
    const perEpoch = Math.ceil(plan(0).length / BATCH);
    const result = await train({ tf: tf as unknown as TF, program, model: state.ir!, ensemble: state.ensemble!, hyper, data: { train: ds }, steps: EPOCHS * perEpoch, seed: SEED });
    for (let i = 0; i < 6; i++) {
      const model = alone({ pop: undefined!, program, ir: state.ir!, hyper }, i);
      model.compile({ optimizer: tf.train.adam(hyper.value('lr', i)), loss: 'binaryCrossentropy' });
      for (let epoch = 0; epoch < EPOCHS; epoch++) {
        const order = plan(i).order(epoch);
        for (let s = 0; s < order.length; s += BATCH) {
          const at = order.slice(s, s + BATCH);
          const x = tf.tensor(at.flatMap((e) => Array.from(ds.x.subarray(3 * e, 3 * e + 3))), [at.length, 3]);
          const y = tf.tensor(at.map((e) => ds.y[e]), [at.length, 1]);
          await model.trainOnBatch(x, y);
          tf.dispose([x, y]);
        }
      }
      const fused = await result.population.memberWeights(i);
      for (const [name, values] of getWeights(model, state.ir!)) expectClose(fused.get(name)!, values, `member ${i} ${name}`);
      model.dispose();
    }
    result.population.dispose();
  });
});
