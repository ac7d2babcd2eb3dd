// netc train, compile, extract and predict with members on their own data (`split:`): the cross-validated
// summary of each setting, schedules ranking each member by its own held-out metric, resume and sharding
// byte-identical to a straight run, the compiled module training what netc trains, and the mistakes that
// only show once the data is loaded or --members is given.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import { netc } from './helpers.js';
import { openRun } from '../src/cli/run-dir.js';
import { registerFileScheme } from '../src/serve/file-io.js';
import type { Population } from '../src/runtime/population.js';
import type { TF } from '../src/kernels/tf.js';
import { expectClose } from './equivalence/harness.js';
import { expectSameRun, paramBytes } from './run-files.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

const root = fileURLToPath(new URL('../', import.meta.url));
const tmp = () => mkdtempSync(join(tmpdir(), 'netc-split-'));
const lines = (dir: string, name: string) =>
  readFileSync(join(dir, name), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

// 233 examples in 5 folds (47, 47, 47, 46, 46): every member's epoch is 187 examples, the members holding
// out a fold of 47 padding their last batch with one row of weight 0; batches of 20, so 10 steps an epoch
// (the last of 7), 30 in all
const source = (ensemble: string, schedules = '') => `model m(input: [2]) {
  dense(12, activation: relu)
  dropout(0.1)
  dense(1, activation: sigmoid)
}
ensemble { seed: 5 ${ensemble} }
train { data: moons(n: 233, noise: 0.2) loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 20 epochs: 3 metrics: [accuracy] }
${schedules}
`;
const KFOLD = 'members: 10 split: kfold(5) vary lr: [0.003, 0.03]';
const HALVING = 'schedule halving { every: 1 epochs, keep: 0.5, metric: val_loss }';

function file(text: string): string {
  const path = join(tmp(), 'pop.net');
  writeFileSync(path, text);
  return path;
}



async function trained(f: string, ...extra: string[]): Promise<string> {
  const out = join(tmp(), 'run');
  const r = await netc('train', f, '--backend', 'cpu', ...extra, '--out', out);
  expect(r.code, r.err).toBe(0);
  return out;
}

describe('kfold: the settings of the varied hyperparameters, cross-validated', () => {
  it('4 learning rates x 5 folds: each setting is its 5 members, and the summary and leaderboard give each metric\'s mean ± sd over them', async () => {
    const out = join(tmp(), 'run');
    const r = await netc('train', join(root, 'examples/kfold-moons.net'), '--backend', 'cpu', '--steps', '10', '--out', out);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('split: kfold(5): member i validates on fold i mod 5 (80 examples) and trains on the other 4');
    const summary = json(join(out, 'summary.json'));
    expect(summary.split).toBe('kfold(5)');
    const lrs = [0.001, 0.003, 0.01, 0.03];
    const settings = summary.cross_validation.settings as { setting: number; members: number[]; hyperparameters: { lr: number }; metrics: Record<string, { mean: number; sd: number }> }[];
    expect(settings.map((s) => s.setting).sort()).toEqual([0, 1, 2, 3]);
    const perMember = summary.per_member as { member: number; setting: number; fold: number; hyperparameters: { lr: number }; metrics: Record<string, number> }[];
    for (const s of settings) {
      const members = [0, 1, 2, 3, 4].map((f) => 5 * s.setting + f);
      expect(s.members).toEqual(members);
      expect(s.hyperparameters.lr).toBe(lrs[s.setting]);
      const rows = perMember.filter((m) => members.includes(m.member));
      expect(rows.map((m) => [m.setting, m.fold, m.hyperparameters.lr])).toEqual(members.map((m) => [s.setting, m % 5, lrs[s.setting]]));
      for (const name of ['loss', 'accuracy', 'val_loss', 'val_accuracy']) {
        const values = rows.map((m) => m.metrics[name]);
        const mean = values.reduce((a, b) => a + b, 0) / 5;
        const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / 5);
        expect(s.metrics[name].mean, `setting ${s.setting} ${name}`).toBeCloseTo(mean, 12);
        expect(s.metrics[name].sd, `setting ${s.setting} ${name}`).toBeCloseTo(sd, 12);
      }
    }
    // best setting first, by the mean validation accuracy
    const means = settings.map((s) => s.metrics.val_accuracy.mean);
    expect(means).toEqual([...means].sort((a, b) => b - a));
    // the leaderboard: one row per setting, its members and mean ± sd
    const table = r.out.split('\n').filter((l) => /^│ +\d+ │/.test(l));
    expect(table).toHaveLength(4);
    settings.forEach((s, i) => {
      expect(table[i]).toMatch(new RegExp(`│ +${5 * s.setting}-${5 * s.setting + 4} │`));
      expect(table[i]).toContain(`${s.metrics.val_accuracy.mean.toFixed(4)} ± ${s.metrics.val_accuracy.sd.toFixed(4)}`);
    });
    // the report groups the members by setting
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('id="cross-validation"');
    const order = [...report.matchAll(/<tr data-member="(\d+)"/g)].map((m) => Number(m[1]));
    expect(order.map((m) => Math.floor(m / 5))).toEqual(settings.flatMap((s) => [s.setting, s.setting, s.setting, s.setting, s.setting]));
  });

  it('halving ranks each member by its own held-out fold: it stops the half with the worst val_loss of the epoch', async () => {
    const run = await trained(file(source(KFOLD, HALVING)));
    const stops = lines(run, 'events.jsonl').filter((e) => e.step === 10);
    const epoch1 = lines(run, 'metrics.jsonl').filter((l) => l.step === 10);
    expect(epoch1).toHaveLength(10);
    const worst = [...epoch1].sort((a, b) => b.val_loss - a.val_loss || b.member - a.member).slice(0, 5);
    expect(stops.map((e) => e.member).sort()).toEqual(worst.map((l) => l.member).sort());
    // held-out sets differ between the folds, and with them the metrics
    expect(new Set(epoch1.map((l) => l.val_loss)).size).toBe(10);
  });
});

describe('kfold: resume and shards end byte-identical to a straight run', () => {
  const f = file(source(KFOLD, HALVING));
  let straight = '';
  beforeAll(async () => void (straight = await trained(f)));

  it.each([13, 20])('stopped at step %i (mid-epoch, and where halving is due) and resumed', async (stop) => {
    const out = join(tmp(), 'run');
    expect((await netc('train', f, '--backend', 'cpu', '--steps', String(stop), '--out', out)).code).toBe(0);
    const r = await netc('train', f, '--backend', 'cpu', '--resume', out, '--epochs', '3');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`resuming at step ${stop}`);
    expectSameRun(out, straight);
  });

  it('in waves of 3 (--resident)', async () => expectSameRun(await trained(f, '--resident', '3'), straight));

  it('by 2 worker processes (--workers), which recompute each member\'s examples from the run context', async () => {
    const run = await trained(f, '--workers', '2');
    expect(json(join(run, 'summary.json'))).toMatchObject({ transport: '2 local workers', shards: 2 });
    expectSameRun(run, straight);
  });
});

describe('bootstrap()', () => {
  it('each member validates on its out-of-bag set; trained in waves it equals one process', async () => {
    const f = file(source('members: 4 split: bootstrap() vary lr: [0.003, 0.01, 0.03, 0.1]'));
    const straight = await trained(f);
    const summary = json(join(straight, 'summary.json'));
    expect(summary.split).toBe('bootstrap()');
    expect(summary.cross_validation).toBeUndefined();
    for (const m of summary.per_member) expect(m.metrics.val_loss, `member ${m.member}`).toEqual(expect.any(Number));
    expectSameRun(await trained(f, '--resident', '3'), straight);
  });
});

describe('extract, predict and compile a kfold run', () => {
  const f = file(source(KFOLD));
  let run = '';
  beforeAll(async () => void (run = await trained(f, '--steps', '12')));

  it('an extracted member predicts what the fused member predicts on a batch they all read', async () => {
    await tf.setBackend('cpu');
    registerFileScheme(tf as unknown as TF);
    const out = join(tmp(), 'm7');
    const r = await netc('extract', run, '--member', '7', '--out', out, '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    const model = await tf.loadLayersModel(pathToFileURL(join(out, 'model.json')).href);
    const x = tf.randomUniform([9, 2], -1, 2, 'float32', 4);
    const { population } = openRun(run, tf as unknown as TF);
    const fused = population.forward(x, false);
    expectClose((model.predict(x) as tf.Tensor).dataSync(), tf.slice(fused, 7, 1).dataSync(), 'member 7');
    population.dispose();
    const p = await netc('predict', run, '--data', 'moons(n: 5)', '--seed', '9', '--format', 'json', '--backend', 'cpu');
    expect(p.code, p.err).toBe(0);
  });

  it('the compiled module trains to the weights netc train trains, bit for bit', async () => {
    const scratch = join(root, '.emit-tmp');
    mkdirSync(scratch, { recursive: true });
    const dir = mkdtempSync(join(scratch, 'split-'));
    try {
      expect((await netc('compile', f, '-o', join(dir, 'kfold.ts'))).code).toBe(0);
      const mod = await import(join(dir, 'kfold.ts'));
      expect(mod.ensembleConfig.split).toEqual({ kind: 'kfold', k: 5 });
      const result = await mod.train({ steps: 12, backend: 'cpu' });
      const pop = result.population as Population;
      const members = await Promise.all(pop.memberIds.map((_, m) => pop.memberWeights(m)));
      const compiled = Buffer.concat(pop.ir.params.flatMap((p) => members.map((w) => Buffer.from(w.get(p.name)!.buffer))));
      pop.dispose();
      expect(compiled.equals(paramBytes(run))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kfold with a one-row last batch', () => {
  it('says in one line which members take that step on their first example again (187 examples an epoch, batches of 6)', async () => {
    const r = await netc('train', file(source(KFOLD).replace('batch: 20', 'batch: 6')), '--backend', 'cpu', '--steps', '1', '--out', join(tmp(), 'run'));
    expect(r.code, r.err).toBe(0);
    const notes = r.err.split('\n').filter((l) => l.startsWith('note: with'));
    expect(notes).toEqual([expect.stringMatching(/^note: with 187 examples per epoch and batch 6, the last batch of each epoch is 1 row, and the members holding out a fold of 47 have none left for it: they take that step on their first example again/)]);
    // batches of 20 leave a last batch of 7: every member exact, no note
    const exact = await netc('train', file(source(KFOLD)), '--backend', 'cpu', '--steps', '1', '--out', join(tmp(), 'run'));
    expect(exact.err).not.toContain('note: with');
  });
});

describe('mistakes found when training', () => {
  it('kfold(k) on fewer than k training examples: NET4060 at the split, exit 1', async () => {
    const f = file(source(KFOLD).replace('moons(n: 233, noise: 0.2)', 'moons(n: 4)'));
    const r = await netc('train', f, '--backend', 'cpu', '--out', join(tmp(), 'run'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/pop\.net\(6,\d+\): error NET4060: split: kfold\(5\) cuts the training examples into 5 folds, but there are only 4/);
    expect(r.err).not.toContain('    at ');
  });

  it('--members that cut a setting short: NET3032, exit 1', async () => {
    const r = await netc('train', file(source(KFOLD)), '--members', '7', '--backend', 'cpu', '--out', join(tmp(), 'run'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/error NET3032: .*members must be a multiple of 5, got 7 \(--members\)/);
  });
});

describe('netc eval of a run whose members hold out their own data', () => {
  it('without test: there is no one held-out set: --data is asked for, saying why', async () => {
    const run = await trained(file(source('members: 3 split: bootstrap()')), '--steps', '2');
    const r = await netc('eval', run, '--backend', 'cpu');
    expect(r.code).toBe(2);
    expect(r.err).toContain('under split: bootstrap() each member validates on examples of its own, so none is held out from all of them: set test: for that');
  });
});
