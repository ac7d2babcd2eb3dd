// Every metric the checker accepts is computed and shown: `metrics: [mae, mse]` reaches the leaderboard,
// metrics.jsonl, summary.json and eval, with the values plain TF.js gives on each member's predictions;
// accuracy, which needs classes, is refused with a regression loss.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tfjs from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { openRun } from '../src/cli/run-dir.js';
import { selectBackend } from '../src/runtime/backend.js';
import type { TF } from '../src/kernels/tf.js';
import { expectClean, expectError, netc } from './helpers.js';

let tf: TF;
beforeAll(async () => {
  tf = (await selectBackend('cpu', { log: () => {} })).tf;
});

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const jsonLines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

/** 60 rows of y = 2a - b + a small wiggle, as a csv file, and its rows. */
function regressionCsv(dir: string): { path: string; x: number[][]; y: number[] } {
  const x = Array.from({ length: 60 }, (_, i) => [Math.sin(i), Math.cos(1.7 * i)]);
  const y = x.map(([a, b], i) => 2 * a - b + 0.1 * Math.sin(5 * i));
  const path = join(dir, 'data.csv');
  writeFileSync(path, 'y,a,b\n' + x.map(([a, b], i) => `${y[i]},${a},${b}`).join('\n') + '\n');
  return { path, x, y };
}

/** Each member's mean of `metric(labels, predictions)` over the examples, by plain TF.js on the run's weights. */
function reference(dir: string, x: number[][], labels: tfjs.Tensor, metric: (y: tfjs.Tensor, p: tfjs.Tensor) => tfjs.Tensor): number[] {
  const { population } = openRun(dir, tf);
  try {
    const out = population.forward(tf.tensor2d(x) as never, false) as unknown as tfjs.Tensor;
    return Array.from({ length: out.shape[0] }, (_, m) => tfjs.mean(metric(labels, tfjs.squeeze(tfjs.slice(out, m, 1), [0]))).dataSync()[0]);
  } finally {
    population.dispose();
  }
}

describe('metrics: [mae, mse]', () => {
  const NET = `model m(input: [2]) {
  dense(4, activation: tanh)
  dense(1)
}
ensemble { members: 3, seed: 1, vary lr: [0.01, 0.03, 0.1] }
train { data: csv("data.csv", label: "y") validation: 0.25 loss: huber batch: 10 epochs: 2 metrics: [mae, mse] }
`;
  let dir: string;
  let data: ReturnType<typeof regressionCsv>;
  let trained: Awaited<ReturnType<typeof netc>>;
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'netc-metrics-'));
    data = regressionCsv(root);
    writeFileSync(join(root, 'reg.net'), NET);
    dir = join(root, 'run');
    trained = await netc('train', join(root, 'reg.net'), '--backend', 'cpu', '--out', dir);
  });

  it('are in the leaderboard, metrics.jsonl and summary.json, with their validation twins', () => {
    expect(trained.code, trained.err).toBe(0);
    expect(trained.out).toMatch(/│ rank │ member │ +lr │ +loss │ +mse │ +mae │ val_loss │ val_mse │ val_mae │/);
    const names = ['loss', 'mse', 'mae', 'val_loss', 'val_mse', 'val_mae'];
    const lines = jsonLines(join(dir, 'metrics.jsonl'));
    expect(lines).toHaveLength(2 * 3);
    for (const l of lines) expect(Object.keys(l)).toEqual(['epoch', 'step', 'member', 'hyperparameters', 'lr', ...names]);
    for (const m of json(join(dir, 'summary.json')).per_member) {
      expect(Object.keys(m.metrics)).toEqual(names);
      for (const name of names) expect(Number.isFinite(m.metrics[name])).toBe(true);
    }
  });

  it("each member's val_mae and val_mse equal tf.metrics on its predictions for the validation rows", () => {
    const held = 15; // the last quarter of 60 rows
    const labels = tfjs.tensor2d(data.y.slice(-held), [held, 1]);
    const mae = reference(dir, data.x.slice(-held), labels, tfjs.metrics.meanAbsoluteError);
    const mse = reference(dir, data.x.slice(-held), labels, tfjs.metrics.meanSquaredError);
    const summary = json(join(dir, 'summary.json')).per_member;
    summary.forEach((m: { metrics: Record<string, number> }, i: number) => {
      expect(m.metrics.val_mae).toBeCloseTo(mae[i], 5);
      expect(m.metrics.val_mse).toBeCloseTo(mse[i], 5);
    });
    // the members differ: the values are each member's own
    expect(new Set(mae.map((v) => v.toFixed(6))).size).toBe(3);
  });

  it('are the same when the members train in shard jobs (--resident 1), which carry every metric by name', async () => {
    const shards = join(dir, '..', 'shards');
    const r = await netc('train', join(dir, '..', 'reg.net'), '--backend', 'cpu', '--resident', '1', '--out', shards);
    expect(r.code, r.err).toBe(0);
    expect(json(join(shards, 'summary.json')).per_member).toEqual(json(join(dir, 'summary.json')).per_member);
    expect(readFileSync(join(shards, 'metrics.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'metrics.jsonl'), 'utf8'));
  });

  it('netc eval reports mse and mae per member and for the ensemble, equal to tf.metrics', async () => {
    const r = await netc('eval', dir, '--data', `csv("${data.path}", label: "y")`, '--format', 'json', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    const labels = tfjs.tensor2d(data.y, [data.y.length, 1]);
    const mae = reference(dir, data.x, labels, tfjs.metrics.meanAbsoluteError);
    const mse = reference(dir, data.x, labels, tfjs.metrics.meanSquaredError);
    for (const m of report.members) {
      expect(Object.keys(m)).toEqual(['member', 'hyperparameters', 'loss', 'mse', 'mae']);
      expect(m.mae).toBeCloseTo(mae[m.member], 5);
      expect(m.mse).toBeCloseTo(mse[m.member], 5);
    }
    expect(Object.keys(report.ensemble.mean)).toEqual(['loss', 'mse', 'mae']);
    expect(report.member_mean.mae).toBeCloseTo(mae.reduce((a, b) => a + b, 0) / 3, 5);
    const table = await netc('eval', dir, '--data', `csv("${data.path}", label: "y")`, '--backend', 'cpu');
    expect(table.out).toMatch(/│ ensemble +│ +loss │ +mse │ +mae │/);
  });
});

describe('metrics with a classification loss', () => {
  it('mae of softmax outputs is taken against the one-hot labels, and accuracy is computed beside it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'netc-metrics-'));
    writeFileSync(
      join(root, 'iris.net'),
      `model m(input: [4]) { dense(3, activation: softmax) }
ensemble { members: 2, seed: 3, vary lr: [0.01, 0.05] }
train { data: iris() validation: 0.2 loss: sparse_categorical_crossentropy batch: 30 epochs: 1 metrics: [accuracy, mae] }
`,
    );
    const dir = join(root, 'run');
    const r = await netc('train', join(root, 'iris.net'), '--backend', 'cpu', '--out', dir);
    expect(r.code, r.err).toBe(0);
    const { iris } = await import('../src/data/iris.js');
    const ds = iris();
    const rows = Array.from({ length: 30 }, (_, i) => Array.from(ds.x.subarray((120 + i) * 4, (121 + i) * 4)));
    const onehot = tfjs.oneHot(tfjs.tensor1d(Array.from(ds.y.subarray(120)), 'int32'), 3).toFloat();
    const mae = reference(dir, rows, onehot, tfjs.metrics.meanAbsoluteError);
    const members = json(join(dir, 'summary.json')).per_member;
    expect(Object.keys(members[0].metrics)).toEqual(['loss', 'accuracy', 'mae', 'val_loss', 'val_accuracy', 'val_mae']);
    members.forEach((m: { metrics: Record<string, number> }, i: number) => expect(m.metrics.val_mae).toBeCloseTo(mae[i], 5));
  });
});

describe('the checker', () => {
  const MODEL = 'model m(input: [2]) { dense(1) }\n';
  it('refuses accuracy with a regression loss, pointing at it', () => {
    for (const loss of ['mse', 'mae', 'huber(0.5)']) expectError(MODEL + `train { data: xor() loss: ${loss} epochs: 1 metrics: [mse, accuracy] }`, 4050, `but ${loss.replace(/\(.*/, '')} is a regression loss`);
  });

  it('computes accuracy by default for a classification loss and nothing besides the loss for a regression loss', () => {
    expect(expectClean(MODEL + 'train { data: xor() loss: mse epochs: 1 }').program!.train!.metrics).toEqual([]);
    const sigmoid = 'model m(input: [2]) { dense(1, activation: sigmoid) }\n';
    expect(expectClean(sigmoid + 'train { data: xor() loss: binary_crossentropy epochs: 1 }').program!.train!.metrics).toEqual(['accuracy']);
    expect(expectClean(sigmoid + 'train { data: xor() loss: binary_crossentropy epochs: 1 metrics: [mse, mse, loss] }').program!.train!.metrics).toEqual(['mse', 'loss']);
  });

  it('refuses a schedule, or a plateau lr_schedule, that watches accuracy under a regression loss', () => {
    expectError(MODEL + 'train { data: xor() validation: 0.2 loss: mae epochs: 2 lr_schedule: plateau(metric: val_accuracy) }', 3020, 'lr_schedule plateau watches val_accuracy');
    expectError(MODEL + 'ensemble { members: 4 }\ntrain { data: xor() validation: 0.2 loss: mse epochs: 2 }\nschedule halving { every: 1 epochs, keep: 0.5, metric: val_accuracy }\n', 3020, 'schedule halving watches val_accuracy, which needs class predictions, but mse is a regression loss; use val_loss instead');
  });
});

describe('a schedule ranking by accuracy', () => {
  it('has accuracy computed even when metrics leaves it out', async () => {
    const root = mkdtempSync(join(tmpdir(), 'netc-metrics-'));
    writeFileSync(
      join(root, 'halving.net'),
      `model m(input: [2]) { dense(1, activation: sigmoid) }
ensemble { members: 4, seed: 2, vary lr: [0.001, 0.01, 0.1, 1] }
train { data: xor(n: 80) validation: 0.25 loss: binary_crossentropy batch: 20 epochs: 2 metrics: [mse] }
schedule halving { every: 1 epochs, keep: 0.5, metric: val_accuracy }
`,
    );
    const dir = join(root, 'run');
    const r = await netc('train', join(root, 'halving.net'), '--backend', 'cpu', '--out', dir);
    expect(r.code, r.err).toBe(0);
    const first = jsonLines(join(dir, 'metrics.jsonl'))[0];
    expect(Object.keys(first).slice(5)).toEqual(['loss', 'accuracy', 'mse', 'val_loss', 'val_accuracy', 'val_mse']);
  });
});
