// Learning-rate schedules against plain TF.js: member i of a fused population, trained T steps under an
// lr_schedule with its own values of the schedule's arguments, has the weights of member i trained alone
// by a tf.train optimizer whose learning rate is set before each step t to lr_i * f_i(t), f written out
// here from the language notes (not netc's code). sgd (plain and with momentum), adam and rmsprop; every
// lowering on cpu, grouped on wasm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lowerings, type Lowering } from '../../src/layers/forward.js';
import { compile } from '../../src/pipeline.js';
import { hyperTable } from '../../src/runtime/hyper.js';
import { initMember } from '../../src/kernels/init.js';
import { lrPlan } from '../../src/train/lr-schedule.js';
import { getWeights } from '../../src/serve/layers-model.js';
import { Population } from '../../src/runtime/population.js';
import type { TF } from '../../src/kernels/tf.js';
import { alone, backends, expectClose, randomBatch, tf, useBackend, type Built } from './harness.js';

const MEMBERS = 3;
const T = 9;

/** f(t) of the language notes, for one member's arguments (intervals in steps). */
function f(name: string, a: Record<string, number>, t: number): number {
  const warmup = a.warmup ?? 0;
  const p = (t - warmup) / (T - warmup);
  switch (name) {
    case 'step':
      return a.gamma ** Math.floor(t / a.every);
    case 'exponential':
      return a.gamma ** (t / a.every);
    case 'cosine':
      return t < warmup ? (t + 1) / warmup : a.min + ((1 - a.min) * (1 + Math.cos(Math.PI * p))) / 2;
    case 'linear':
      return t < warmup ? (t + 1) / warmup : 1 - (1 - a.min) * p;
  }
  throw new Error(name);
}

/** Each schedule with per-member arguments: the .net text, and member m's arguments in steps. */
const schedules: Record<string, { schedule: string; vary: string; args: (m: number) => Record<string, number> }> = {
  step: { schedule: 'step(every: 3 steps, gamma: 0.5)', vary: 'vary lr_schedule.gamma: [0.5, 0.9, 0.2]\nvary lr_schedule.every: [2 steps, 3 steps, 4 steps]', args: (m) => ({ gamma: [0.5, 0.9, 0.2][m], every: [2, 3, 4][m] }) },
  exponential: { schedule: 'exponential(every: 2 steps, gamma: 0.7)', vary: 'vary lr_schedule.gamma: [0.7, 0.3, 1]', args: (m) => ({ gamma: [0.7, 0.3, 1][m], every: 2 }) },
  cosine: { schedule: 'cosine(warmup: 3 steps, min: 0.1)', vary: 'vary lr_schedule.min: [0.1, 0.5, 0]\nvary lr_schedule.warmup: [3 steps, 0 steps, 5 steps]', args: (m) => ({ min: [0.1, 0.5, 0][m], warmup: [3, 0, 5][m] }) },
  linear: { schedule: 'linear(warmup: 2 steps, min: 0.2)', vary: 'vary lr_schedule.min: [0.2, 0, 1]', args: (m) => ({ min: [0.2, 0, 1][m], warmup: 2 }) },
};

const optimizers: Record<string, { text: string; lrs: number[]; make: (lr: number) => tf.Optimizer }> = {
  sgd: { text: 'sgd', lrs: [0.5, 0.1, 0.3], make: (lr) => tf.train.sgd(lr) },
  'sgd with momentum': { text: 'sgd(momentum: 0.9)', lrs: [0.5, 0.1, 0.3], make: (lr) => tf.train.momentum(lr, 0.9) },
  adam: { text: 'adam', lrs: [0.05, 0.01, 0.1], make: (lr) => tf.train.adam(lr, 0.9, 0.999, 1e-7) },
  rmsprop: { text: 'rmsprop(momentum: 0.5)', lrs: [0.01, 0.003, 0.03], make: (lr) => tf.train.rmsprop(lr, 0.9, 0.5, 1e-7) },
};

/** tf.train's optimizers keep their rate in different places: sgd and momentum cache it as a tensor. */
function setLearningRate(optimizer: tf.Optimizer, lr: number): void {
  const o = optimizer as unknown as { setLearningRate?: (lr: number) => void; learningRate: number };
  if (o.setLearningRate) o.setLearningRate(lr);
  else o.learningRate = lr;
}

function build(source: string, lowering: Lowering, memberIds = [0, 1, 2]): Built {
  const state = compile(source, 'lr.net', { lowering, members: memberIds.length });
  if (!state.ensemble) throw new Error(state.diagnostics.map((d) => d.message).join('\n'));
  const program = state.program!;
  const table = hyperTable(program, state.ir!);
  const plan = lrPlan(program.train!.lr_schedule, table, T, 1);
  const pop = new Population({
    tf: tf as unknown as TF,
    ensemble: state.ensemble,
    memberIds,
    seed: program.ensemble.seed,
    optimizer: program.train!.optimizer.name,
    loss: program.train!.loss,
    hyper: (key, m) => table.value(key, m),
    lrFactor: plan.factor,
    initial: (m) => initMember(state.ir!, program.ensemble.seed, m),
  });
  return { pop, program, ir: state.ir!, hyper: table };
}

describe.each(backends)('learning-rate schedules on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  describe.each(Object.keys(optimizers))('%s', (opt) => {
    const o = optimizers[opt];
    for (const [name, s] of Object.entries(schedules)) {
      // every lowering on cpu; wasm runs the same arithmetic, checked on the default lowering
      it.each(backend === 'cpu' ? lowerings : (['grouped'] as const))(`${name}, per-member arguments: %s`, async (lowering) => {
        const source = `model m(input: [3]) {\n  dense(4, activation: tanh)\n  dense(2, activation: softmax)\n}\nensemble {\n  seed: 4\n  vary lr: [${o.lrs.join(', ')}]\n  ${s.vary}\n}\ntrain { data: csv("none.csv") loss: categorical_crossentropy optimizer: ${o.text} steps: ${T} lr_schedule: ${s.schedule} }\n`;
        const b = build(source, lowering);
        const data = Array.from({ length: T }, (_, t) => ({ x: randomBatch(40 + t, [4, 3], 2), y: tf.oneHot(tf.tensor1d([t % 2, 1, 0, (t + 1) % 2], 'int32'), 2).toFloat() }));
        for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
        for (let m = 0; m < MEMBERS; m++) {
          const model = alone(b, m);
          const optimizer = o.make(o.lrs[m]);
          model.compile({ optimizer, loss: 'categoricalCrossentropy' });
          for (const [t, { x, y }] of data.entries()) {
            setLearningRate(optimizer, o.lrs[m] * f(name, s.args(m), t));
            await model.trainOnBatch(x, y);
          }
          const expected = getWeights(model, b.ir);
          const fused = await b.pop.memberWeights(m);
          for (const [param, values] of expected) expectClose(fused.get(param)!, values, `member ${m} ${param}`);
          model.dispose();
        }
        // the schedule moved every member's rate: a population that ignored it could not match
        expect(b.pop.hyper('lr')).not.toEqual(o.lrs);
        b.pop.dispose();
      });
    }
  });
});

describe('independence', () => {
  beforeAll(() => useBackend('cpu'));
  afterAll(() => tf.disposeVariables());
  // the members' rates differ at every step (shared-rate and per-member paths of the optimizer meet here)
  const source = `model m(input: [3]) {\n  dense(4, activation: tanh)\n  dense(2, activation: softmax)\n}\nensemble {\n  seed: 4\n  vary lr: [0.05, 0.01, 0.1]\n  vary lr_schedule.min: [0.1, 0.5, 0]\n}\ntrain { data: csv("none.csv") loss: categorical_crossentropy optimizer: adam steps: ${T} lr_schedule: cosine(warmup: 3 steps) }\n`;
  it.each(lowerings)("a member's weights do not depend on the others: member 1 of three equals member 1 alone, bit for bit (%s)", async (lowering) => {
    const [all, one] = [build(source, lowering), build(source, lowering, [1])];
    for (let t = 0; t < T; t++) {
      const x = randomBatch(40 + t, [4, 3], 2);
      const y = tf.oneHot(tf.tensor1d([t % 2, 1, 0, (t + 1) % 2], 'int32'), 2).toFloat();
      all.pop.step({ kind: 'tensors', x, y }).dispose();
      one.pop.step({ kind: 'tensors', x, y }).dispose();
    }
    const [a, b] = [await all.pop.memberWeights(1), await one.pop.memberWeights(0)];
    for (const [name, values] of a) expect(Array.from(b.get(name)!), name).toEqual(Array.from(values));
    all.pop.dispose();
    one.pop.dispose();
  });
});
