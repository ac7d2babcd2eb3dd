// `netc predict` and `netc eval`: combining member-first predictions (mean, vote), the CLI's output formats
// and mistakes, predictions that equal the population's own forward pass, and the point of an ensemble:
// on mnist its mean prediction is at least as accurate as its average member.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { openRun } from '../src/cli/run-dir.js';
import { parseDataSource } from '../src/check/data-expression.js';
import { loadDataset } from '../src/data/load.js';
import { selectBackend } from '../src/runtime/backend.js';
import { combineMean, combineVote, ensembleMetrics, memberClasses, voteClasses, voteCounts } from '../src/serve/inference.js';
import type { TF } from '../src/kernels/tf.js';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-infer-'));

const IRIS = `
model flowers(input: [4]) {
  dense(8, activation: relu)
  drop = dropout(0.2)
  dense(3, activation: softmax)
}
ensemble { members: 4, seed: 2, vary lr: [0.003, 0.01, 0.03, 0.1] }
train {
  data: iris()
  validation: 0.2
  loss: sparse_categorical_crossentropy
  optimizer: adam(lr: 0.01)
  batch: 16
  steps: 60
  metrics: [accuracy]
}
`;

const REGRESSION = `
model line(input: [2]) {
  dense(4, activation: tanh)
  dense(1)
}
ensemble { members: 3, seed: 1 }
train { data: csv("points.csv", label: "y"), loss: mse, optimizer: sgd(lr: 0.05), batch: 4, steps: 10 }
`;

let tf: TF;
let irisRun: string;
let irisNet: string;

beforeAll(async () => {
  const dir = tmp();
  irisNet = join(dir, 'iris.net');
  writeFileSync(irisNet, IRIS);
  irisRun = join(dir, 'run');
  const r = await run('train', irisNet, '--steps', '60', '--backend', 'cpu', '--out', irisRun);
  expect(r.code, r.err).toBe(0);
  tf = (await selectBackend('cpu', { log: () => {} })).tf as unknown as TF;
});

describe('combining member-first predictions', () => {
  // three members, K = 3, two examples: on example 0 one confident member outweighs two that
  // lean to class 1, so the mean says 0 and the vote says 1
  const probs = [
    [
      [0.9, 0.05, 0.05],
      [0.1, 0.2, 0.7],
    ],
    [
      [0.4, 0.6, 0.0],
      [0.2, 0.7, 0.1],
    ],
    [
      [0.4, 0.6, 0.0],
      [0.1, 0.1, 0.8],
    ],
  ];

  it('mean and vote differ where one confident member disagrees with the majority', () => {
    tf.tidy(() => {
      const out = tf.tensor(probs);
      const mean = combineMean(tf, out);
      expect(mean.shape).toEqual([1, 2, 3]);
      const m = mean.arraySync() as number[][][];
      expect(m[0][0][0]).toBeCloseTo(1.7 / 3, 6);
      expect(m[0][1][2]).toBeCloseTo(1.6 / 3, 6);
      expect(Array.from(memberClasses(tf, out).dataSync())).toEqual([0, 2, 1, 1, 1, 2]);
      expect(Array.from(voteCounts(tf, out).dataSync())).toEqual([1, 2, 0, 0, 1, 2]);
      expect(Array.from(voteClasses(tf, out).dataSync())).toEqual([1, 2]);
      expect(combineVote(tf, out).arraySync()).toEqual([
        [
          [0, 1, 0],
          [0, 0, 1],
        ],
      ]);
      // labels: class 0 and class 2. mean: right on both; vote: wrong on the first
      const metrics = ensembleMetrics(tf, { name: 'sparse_categorical_crossentropy', args: {} }, out, tf.tensor([[0], [2]]));
      expect(metrics.accuracy!.dataSync()[0]).toBe(1);
      expect(metrics.voteAccuracy!.dataSync()[0]).toBe(0.5);
      expect(metrics.loss.dataSync()[0]).toBeCloseTo(-(Math.log(1.7 / 3) + Math.log(1.6 / 3)) / 2, 5);
    });
  });

  it('leaves nothing on the device but its result', () => {
    const out = tf.tensor(probs);
    const y = tf.tensor([[0], [2]]);
    const before = tf.memory().numTensors;
    for (const f of [combineMean, memberClasses, voteCounts, voteClasses, combineVote]) {
      const r = f(tf, out);
      expect(tf.memory().numTensors, f.name).toBe(before + 1);
      r.dispose();
    }
    const m = ensembleMetrics(tf, { name: 'sparse_categorical_crossentropy', args: {} }, out, y);
    expect(tf.memory().numTensors).toBe(before + 3);
    tf.dispose([m.loss, m.accuracy!, m.voteAccuracy!, out, y]);
  });

  it('a tie goes to the lowest class index; one sigmoid output votes 0/1 at 0.5', () => {
    tf.tidy(() => {
      const tie = tf.tensor([[[0.1, 0.2, 0.7]], [[0.1, 0.8, 0.1]]]); // members say 2 and 1
      expect(Array.from(voteClasses(tf, tie).dataSync())).toEqual([1]);
      // p: 0.9, 0.4, 0.3: mean 0.533 (class 1), vote 0 (two of three say 0)
      const binary = tf.tensor([[[0.9]], [[0.4]], [[0.3]]]);
      expect(combineMean(tf, binary).dataSync()[0]).toBeCloseTo(1.6 / 3, 6);
      expect(Array.from(combineVote(tf, binary).dataSync())).toEqual([0]);
      const even = tf.tensor([[[0.9]], [[0.4]]]);
      expect(Array.from(combineVote(tf, even).dataSync())).toEqual([0]);
      const y = tf.tensor([[1]]);
      const m = ensembleMetrics(tf, { name: 'binary_crossentropy', args: {} }, binary, y);
      expect([m.accuracy!.dataSync()[0], m.voteAccuracy!.dataSync()[0]]).toEqual([1, 0]);
    });
  });
});

describe('netc predict', () => {
  it('writes a CSV row per example with the ensemble and every member', async () => {
    const r = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('backend: cpu');
    const lines = r.out.trim().split('\n');
    const header = lines[0].split(',');
    const ps = (prefix: string) => [0, 1, 2].map((j) => `${prefix}p${j}`);
    expect(header).toEqual([
      'example',
      'label',
      'ensemble_class',
      ...ps('ensemble_'),
      ...[0, 1, 2, 3].flatMap((m) => [`member_${m}_class`, ...ps(`member_${m}_`)]),
    ]);
    expect(lines).toHaveLength(151);
    for (const line of lines.slice(1)) {
      const cells = line.split(',').map(Number);
      expect(cells).toHaveLength(header.length);
      const p = cells.slice(3, 6);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
      expect(cells[2]).toBe(p.indexOf(Math.max(...p)));
    }
    expect(lines[1].startsWith('0,')).toBe(true);
  });

  it('--combine vote and none change the ensemble columns; --format json has the documented shape', async () => {
    const vote = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--combine', 'vote');
    expect(vote.code, vote.err).toBe(0);
    expect(vote.out.split('\n', 1)[0]).toMatch(/^example,label,ensemble_class,ensemble_votes,member_0_class,member_0_p0,/);
    const none = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--combine', 'none');
    expect(none.out.split('\n', 1)[0]).toMatch(/^example,label,member_0_class,member_0_p0,/);

    const json = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json', '--combine', 'vote');
    expect(json.code, json.err).toBe(0);
    const doc = JSON.parse(json.out);
    expect(doc.combine).toBe('vote');
    expect(doc.members).toEqual([0, 1, 2, 3]);
    expect(doc.predictions).toHaveLength(150);
    const first = doc.predictions[0];
    expect(Object.keys(first)).toEqual(['example', 'label', 'ensemble', 'members']);
    expect(first.ensemble.votes).toBeGreaterThanOrEqual(2);
    expect(first.members).toHaveLength(4);
    expect(first.members[0].p).toHaveLength(3);
    // the vote is the majority (ties to the lowest class) of the members' classes
    for (const p of doc.predictions) {
      const counts = [0, 0, 0];
      for (const m of p.members) counts[m.class]++;
      expect(p.ensemble.class).toBe(counts.indexOf(Math.max(...counts)));
      expect(p.ensemble.votes).toBe(Math.max(...counts));
    }
  });

  it("each member's predictions equal Population.forward for that member (inference mode)", async () => {
    const r = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json', '--batch', '64');
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    const { population } = openRun(irisRun, tf);
    const ds = await loadDataset(parseDataSource('iris()').config!, { baseDir: '.', seed: 0 });
    const expected = tf.tidy(() => population.forward(tf.tensor(ds.x, [ds.count, 4]), false).arraySync() as number[][][]);
    population.dispose();
    for (let m = 0; m < 4; m++) {
      for (let e = 0; e < ds.count; e++) {
        const got = doc.predictions[e].members[m].p as number[];
        got.forEach((v, j) => expect(Math.abs(v - expected[m][e][j])).toBeLessThan(1e-5));
      }
    }
    // and the ensemble's p is their mean
    const mean = [0, 1, 2].map((j) => expected.reduce((s, member) => s + member[7][j], 0) / 4);
    doc.predictions[7].ensemble.p.forEach((v: number, j: number) => expect(v).toBeCloseTo(mean[j], 5));
  });

  it('--output writes the file atomically and leaves standard output empty', async () => {
    const dir = tmp();
    const file = join(dir, 'predictions.csv');
    const r = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--output', file);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain(`wrote 150 predictions to ${file}`);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(151);
    expect(readdirSync(dir)).toEqual(['predictions.csv']);
  });

  it('a regression run writes y columns and refuses a vote', async () => {
    const dir = tmp();
    const rows = ['x1,x2,y', ...Array.from({ length: 24 }, (_, i) => `${i / 10},${(i % 5) / 4},${i / 10 + (i % 5) / 4}`)];
    writeFileSync(join(dir, 'points.csv'), rows.join('\n') + '\n');
    writeFileSync(join(dir, 'line.net'), REGRESSION);
    const out = join(dir, 'run');
    const t = await run('train', join(dir, 'line.net'), '--steps', '10', '--backend', 'cpu', '--out', out);
    expect(t.code, t.err).toBe(0);
    // the csv path is relative to the current directory, not to the run
    const data = `csv("${join(dir, 'points.csv')}", label: "y")`;
    const r = await run('predict', out, '--data', data, '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toBe('example,label,ensemble_y,member_0_y,member_1_y,member_2_y');
    expect(lines).toHaveLength(25);
    const e = await run('eval', out, '--data', data, '--backend', 'cpu', '--format', 'json');
    expect(e.code, e.err).toBe(0);
    const report = JSON.parse(e.out);
    expect(report.ensemble).toEqual({ mean: { loss: expect.any(Number) } });
    expect(report.members[0].accuracy).toBeUndefined();
    const v = await run('predict', out, '--data', data, '--backend', 'cpu', '--combine', 'vote');
    expect(v.code).toBe(2);
    expect(v.err).toContain('--combine vote needs class predictions');
    const rel = await run('predict', out, '--data', 'csv("points.csv", label: "y")', '--backend', 'cpu');
    expect(rel.code).toBe(1);
    expect(rel.err).toMatch(/error NET4011: cannot read the data file "points.csv"/);
  });

  it('mistakes end in a clear message and exit code 1; a bad option is a usage error', async () => {
    const bad = await run('predict', irisRun, '--data', 'iris(limit: 3', '--backend', 'cpu');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^--data\(1,\d+\): error NET1\d{3}: /);
    const unknown = await run('eval', irisRun, '--data', 'irus()', '--backend', 'cpu');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/--data\(1,1\): error NET2\d{3}: .*irus/);

    const missing = await run('predict', join(tmp(), 'nope'), '--data', 'iris()', '--backend', 'cpu');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('netc: there is no run directory');

    const bare = tmp();
    copyFileSync(join(irisRun, 'run.json'), join(bare, 'run.json'));
    const noCheckpoint = await run('eval', bare, '--data', 'iris()', '--backend', 'cpu');
    expect(noCheckpoint.code).toBe(1);
    expect(noCheckpoint.err).toContain('holds no checkpoint (no population.json)');
    const notRun = tmp();
    mkdirSync(join(notRun, 'x'));
    expect((await run('predict', notRun, '--data', 'iris()')).err).toContain('is not a netc run directory');

    const misfit = await run('eval', irisRun, '--data', 'xor(n: 10)', '--backend', 'cpu');
    expect(misfit.code).toBe(1);
    expect(misfit.err).toContain('error NET4006: the model input [4] does not fit the data');

    const combine = await run('predict', irisRun, '--data', 'iris()', '--combine', 'median');
    expect(combine.code).toBe(2);
    expect(combine.err).toContain("expected one of mean, vote, none, got 'median'");
    // without --data, the run's own held-out data: this run has validation and no test split
    const own = await run('predict', irisRun, '--backend', 'cpu');
    expect(own.code, own.err).toBe(0);
    expect(own.err).toContain("data: the run's validation split (it has no test split): examples 120 to 149 of the 150 of iris(), held out by validation: 0.2");
    expect((await run('eval', irisRun, '--data', 'iris()', '--format', 'xml')).code).toBe(2);
    expect(existsSync(join(bare, 'population.json'))).toBe(false);
  });
});

describe('netc eval', () => {
  it('prints the members and the ensemble, and leaks no tensors', async () => {
    const before = tf.memory().numTensors;
    const r = await run('eval', irisRun, '--data', 'iris()', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
    expect(r.out).toMatch(/│ rank │ member │ +lr │ +loss │ accuracy │/);
    expect(r.out).toMatch(/│ mean of 4 members' outputs │ +\d\.\d{4} │ +\d\.\d{4} │/);
    expect(r.out).toMatch(/│ majority vote +│ +│ +\d\.\d{4} │/);
    expect(r.out).toMatch(/│ mean member +│/);
    expect(r.out).toMatch(/│ best member \(\d\) +│/);
    expect(r.out).toContain('150 examples of iris()');
    const p = await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json');
    expect(p.code).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('counts an idx test set without classes: as having the classes of the run, though its labels lack the last', async () => {
    const dir = tmp();
    const idx = (type: number, dims: number[], values: number[]) => Buffer.from([0, 0, type, dims.length, ...dims.flatMap((d) => [0, 0, 0, d]), ...values]);
    writeFileSync(join(dir, 'images.idx'), idx(8, [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]));
    writeFileSync(join(dir, 'labels.idx'), idx(8, [4], [0, 1, 2, 1]));
    writeFileSync(join(dir, 'test-labels.idx'), idx(8, [4], [0, 1, 0, 1]));
    writeFileSync(join(dir, 'm.net'), 'model m(input: [2]) { dense(3, activation: softmax) }\ntrain { data: idx(images: "images.idx", labels: "labels.idx") loss: categorical_crossentropy steps: 2 }\n');
    expect((await run('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', join(dir, 'run'))).code).toBe(0);
    const images = join(dir, 'images.idx');
    const r = await run('eval', join(dir, 'run'), '--data', `idx(images: "${images}", labels: "${join(dir, 'test-labels.idx')}")`, '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('4 examples of idx(');
  });

  it('--format json agrees with the predictions', async () => {
    const r = await run('eval', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json', '--batch', '7');
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report).toMatchObject({ examples: 150, loss: 'sparse_categorical_crossentropy', backend: 'cpu', data: 'iris()' });
    expect(report.members).toHaveLength(4);
    const accuracies = report.members.map((m: { accuracy: number }) => m.accuracy);
    expect(report.member_mean.accuracy).toBeCloseTo(accuracies.reduce((a: number, b: number) => a + b, 0) / 4, 6);
    expect(report.best_member.accuracy).toBe(Math.max(...accuracies));
    // the same numbers from the predictions
    const doc = JSON.parse((await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json')).out);
    const hits = (f: (p: { label: number; ensemble: { class: number }; members: { class: number }[] }) => boolean) => doc.predictions.filter(f).length / 150;
    expect(report.ensemble.mean.accuracy).toBeCloseTo(hits((p) => p.ensemble.class === p.label), 6);
    const ids = doc.members as number[];
    for (const m of report.members) expect(m.accuracy).toBeCloseTo(hits((p) => p.members[ids.indexOf(m.member)].class === p.label), 6);
    const vote = JSON.parse((await run('predict', irisRun, '--data', 'iris()', '--backend', 'cpu', '--format', 'json', '--combine', 'vote')).out);
    expect(report.ensemble.vote.accuracy).toBeCloseTo(vote.predictions.filter((p: { label: number; ensemble: { class: number } }) => p.ensemble.class === p.label).length / 150, 6);
  });

  it('on mnist, the ensemble (mean) is at least as accurate as its average member', async () => {
    const dir = tmp();
    const t = await run('train', 'examples/mnist-mlp.net', '--steps', '150', '--backend', 'wasm', '--out', dir);
    expect(t.code, t.err).toBe(0);
    const r = await run('eval', dir, '--data', 'mnist(limit: 2000)', '--backend', 'wasm', '--format', 'json');
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.examples).toBe(2000);
    expect(report.members).toHaveLength(8);
    expect(report.member_mean.accuracy).toBeGreaterThan(0.8);
    expect(report.ensemble.mean.accuracy).toBeGreaterThanOrEqual(report.member_mean.accuracy);
    expect(report.ensemble.mean.loss).toBeLessThanOrEqual(report.member_mean.loss);
    expect(report.ensemble.vote.accuracy).toBeGreaterThan(0.8);
  });
});
