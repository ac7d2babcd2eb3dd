// Learning-rate schedules as a user runs them: metrics.jsonl and summary.json record every member's rate
// (checked against the formula of the language notes, and plateau against Keras' rule replayed on the
// recorded metric); a run stopped by Ctrl-C or by --steps and resumed ends byte-identical to a straight
// run, plateau's memory included; a PBT exploit gives the member its source's plateau state; a resume with
// another total re-plans cosine over it and says so; the module netc compile writes runs the schedule.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { lrPlan, scheduleFactor } from '../src/train/lr-schedule.js';
import { plateau } from '../src/train/plateau.js';
import { perturb } from '../src/train/schedules.js';
import { Rng } from '../src/util/rng.js';
import type { Space } from '../src/check/program.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { compile } from '../src/pipeline.js';
import type { Population } from '../src/runtime/population.js';
import { paramBytes } from './run-files.js';
import { expectSameRun } from './run-files.js';

const root = fileURLToPath(new URL('../', import.meta.url));

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-lr-'));
/** Runs netc in this process; `onErr` sees every line it writes to stderr (the per-epoch lines). */
async function netc(argv: string[], onErr: (text: string) => void = () => {}) {
  let err = '';
  const code = await main(argv, {
    out: () => {},
    err: (t) => {
      err += t;
      onErr(t);
    },
  });
  return { code, err };
}
const lines = (dir: string, name = 'metrics.jsonl') => readFileSync(join(dir, name), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

// 200 training examples in batches of 20: 10 steps an epoch, 40 in all
const PER_EPOCH = 10;
const TOTAL = 40;
const source = (ensemble: string, schedule: string, extra = '') => `model m(input: [2]) {
  dense(12, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 6 seed: 8 ${ensemble} }
train { data: moons(n: 250, noise: 0.25) validation: 0.2 loss: binary_crossentropy optimizer: adam batch: 20 epochs: 4 metrics: [accuracy]
  lr_schedule: ${schedule}
}
${extra}
`;



/** cosine of the language notes, written out here: f(t) for warmup W and floor m over T steps. */
const cosine = (t: number, W: number, m: number, T: number) => (t < W ? (t + 1) / W : m + ((1 - m) * (1 + Math.cos((Math.PI * (t - W)) / (T - W)))) / 2);

describe('cosine with per-member warmup and floor', () => {
  const dir = tmp();
  const file = join(dir, 'cosine.net');
  writeFileSync(file, source('vary lr: [0.01, 0.03, 0.1] vary lr_schedule.min: [0.1, 0] vary lr_schedule.warmup: [5 steps, 0 steps, 12 steps]', 'cosine(warmup: 1 epochs, min: 0.5)'));
  const straight = join(dir, 'straight');

  it("metrics.jsonl records each member's rate in each epoch's last step, summary.json the last one", async () => {
    const r = await netc(['train', file, '--backend', 'cpu', '--out', straight]);
    expect(r.code, r.err).toBe(0);
    const rows = lines(straight);
    expect(rows).toHaveLength(6 * 4);
    for (const row of rows) {
      const h = row.hyperparameters;
      const expected = h.lr * cosine(row.step - 1, h['lr_schedule.warmup'], h['lr_schedule.min'], TOTAL);
      expect(Math.abs(row.lr - expected) / expected, `member ${row.member} at step ${row.step}`).toBeLessThan(1e-12);
    }
    // every member's rate moved from epoch to epoch
    for (let m = 0; m < 6; m++) expect(new Set(rows.filter((r) => r.member === m).map((r) => r.lr)).size, `member ${m}`).toBe(4);
    for (const m of json(join(straight, 'summary.json')).per_member) {
      const h = m.hyperparameters;
      expect(m.lr).toBeCloseTo(h.lr * cosine(TOTAL - 1, h['lr_schedule.warmup'], h['lr_schedule.min'], TOTAL), 15);
    }
    expect(readFileSync(join(straight, 'report.html'), 'utf8')).toContain('<figure id="curve-lr">');
  });

  it('stopped by Ctrl-C and resumed, it ends byte-identical', async () => {
    const stopped = join(dir, 'ctrl-c');
    // Ctrl-C as the first epoch ends: training stops after the next step, mid-epoch
    const first = await netc(['train', file, '--backend', 'cpu', '--out', stopped], (t) => t.startsWith('epoch 1/') && process.emit('SIGINT'));
    expect(first.code, first.err).toBe(1);
    expect(first.err).toContain(`stopped at step ${PER_EPOCH + 1}`);
    const r = await netc(['train', file, '--backend', 'cpu', '--resume', stopped, '--epochs', '4']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain('planned over');
    expectSameRun(straight, stopped);
  });

  it('trained in waves (the population in host memory), it ends byte-identical to all at once', async () => {
    const waves = join(dir, 'waves');
    expect((await netc(['train', file, '--backend', 'cpu', '--resident', '4', '--out', waves])).code).toBe(0);
    expectSameRun(straight, waves);
  });

  it('resumed with another total, the rest of the schedule is planned over the new total, and netc says so', async () => {
    const short = join(dir, 'short');
    expect((await netc(['train', file, '--backend', 'cpu', '--steps', '17', '--out', short])).code).toBe(0);
    // a run started with --steps keeps that budget: the file's own is asked for again
    const r = await netc(['train', file, '--backend', 'cpu', '--resume', short, '--epochs', '4']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('the learning-rate schedule was planned over 17 steps and now runs over 40: from step 17 on, each rate is that of a 40-step run');
    for (const row of lines(short)) {
      const h = row.hyperparameters;
      const T = row.step <= 17 ? 17 : TOTAL;
      expect(row.lr).toBeCloseTo(h.lr * cosine(row.step - 1, h['lr_schedule.warmup'], h['lr_schedule.min'], T), 15);
    }
  });
});

describe('plateau with PBT', () => {
  const dir = tmp();
  const file = join(dir, 'plateau.net');
  const pbt = 'schedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.34 }';
  writeFileSync(file, source('vary lr: loguniform(0.003, 0.3) vary lr_schedule.factor: [0.5, 0.2]', 'plateau(metric: val_loss, patience: 1, factor: 0.5, min_delta: 0.001)', pbt));
  const straight = join(dir, 'straight');

  it("each member's rate falls by its factor when its val_loss stalls, as Keras' ReduceLROnPlateau would", async () => {
    const r = await netc(['train', file, '--backend', 'cpu', '--out', straight]);
    expect(r.code, r.err).toBe(0);
    const rows = lines(straight);
    const exploits = lines(straight, 'events.jsonl').filter((e) => e.event === 'exploit');
    expect(exploits.length).toBeGreaterThan(0);
    // replay Keras' rule on each member's recorded val_loss, up to where PBT replaced the member
    let reduced = 0;
    for (let m = 0; m < 6; m++) {
      const own = rows.filter((row) => row.member === m);
      const copiedAt = Math.min(...exploits.filter((e) => e.member === m).map((e) => e.step));
      let [factor, best, wait] = [1, Infinity, 0];
      for (const [i, row] of own.entries()) {
        if (row.step > copiedAt) break;
        expect(row.lr, `member ${m} epoch ${row.epoch}`).toBeCloseTo(row.hyperparameters.lr * factor, 15);
        if (i === own.length - 1) break;
        if (row.val_loss < best - 0.001) [best, wait] = [row.val_loss, 0];
        else if (++wait >= 1) [factor, wait, reduced] = [factor * row.hyperparameters['lr_schedule.factor'], 0, reduced + 1];
      }
    }
    expect(reduced).toBeGreaterThan(0);
  });

  it.each([21, 40])('stopped at step %i and resumed, it ends byte-identical, plateau state and all', async (stop) => {
    const stopped = join(dir, `stopped-${stop}`);
    expect((await netc(['train', file, '--backend', 'cpu', '--steps', String(stop), '--out', stopped])).code).toBe(0);
    const state = json(join(stopped, 'population.json')).position.schedules.state[0] as [number, number, number, number][];
    expect(state).toHaveLength(6);
    if (stop === 21) {
      // PBT acted at step 20, after plateau: each exploited member holds its source's factor, best and wait
      const exploits = lines(stopped, 'events.jsonl').filter((e) => e.event === 'exploit' && e.step === 20);
      expect(exploits.length).toBeGreaterThan(0);
      const row = (id: number) => state.find((s) => s[0] === id)!.slice(1);
      for (const e of exploits) expect(row(e.member), `member ${e.member} from ${e.source}`).toEqual(row(e.source));
    }
    const r = await netc(['train', file, '--backend', 'cpu', '--resume', stopped, '--epochs', '4']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain('planned over');
    expectSameRun(straight, stopped);
  });
});

describe('netc compile', () => {
  it("the compiled module runs the file's schedule: it trains to the weights netc train trains, bit for bit", async () => {
    // inside the repository, so that the module's `import ... from 'netc'` resolves to this package (dist/)
    const scratch = join(root, '.emit-tmp');
    mkdirSync(scratch, { recursive: true });
    const dir = mkdtempSync(join(scratch, 'lr-'));
    try {
      expect((await netc(['compile', 'examples/cosine-moons.net', '-o', join(dir, 'cosine.ts')])).code).toBe(0);
      const mod = await import(join(dir, 'cosine.ts'));
      expect(mod.trainConfig.lr_schedule.name).toBe('cosine');
      const result = await mod.train({ steps: 20, backend: 'cpu' });
      const pop = result.population as Population;
      const members = await Promise.all(pop.memberIds.map((_, m) => pop.memberWeights(m)));
      const compiled = Buffer.concat(pop.ir.params.flatMap((p) => members.map((w) => Buffer.from(w.get(p.name)!.buffer))));
      pop.dispose();
      const run = join(dir, 'run');
      expect((await netc(['train', 'examples/cosine-moons.net', '--steps', '20', '--backend', 'cpu', '--out', run])).code).toBe(0);
      expect(compiled.equals(paramBytes(run))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the runtime pieces', () => {
  it('intervals in epochs are converted to steps: every 1 epochs of 5 steps is every 5 steps', () => {
    const state = compile(source('', 'step(every: 1 epochs, gamma: 0.5)'), 'x.net');
    const plan = lrPlan(state.program!.train!.lr_schedule, hyperTable(state.program!, state.ir!), 40, 5);
    expect([0, 4, 5, 9, 10].map((t) => plan.factor!(0, t))).toEqual([1, 1, 0.5, 0.5, 0.25]);
    expect(scheduleFactor('step', { every: 5, gamma: 0.5 }, 10, 40)).toBe(0.25);
  });

  it('a run of no steps (--steps 0) reports the rate its first step would take, never NaN', () => {
    expect(scheduleFactor('cosine', { warmup: 0, min: 0.1 }, 0, 0)).toBe(1);
    expect(scheduleFactor('linear', { warmup: 4, min: 0.1 }, 0, 0)).toBe(0.25);
  });

  it('constant() and no schedule leave the rate alone, so the optimizer keeps its cached rates', () => {
    const state = compile(source('', 'constant()'), 'x.net');
    expect(lrPlan(state.program!.train!.lr_schedule, hyperTable(state.program!, state.ir!), 40, 5)).toEqual({});
    expect(lrPlan(undefined, hyperTable(state.program!, state.ir!), 40, 5)).toEqual({});
  });

  it('PBT moves a varied interval (every, warmup) to a neighbouring amount, as it moves a list of numbers', () => {
    const steps = (...amounts: number[]): Space => ({ kind: 'list', values: amounts.map((amount) => ({ amount, unit: 'steps' as const })) });
    const moved = Array.from({ length: 100 }, (_, i) => perturb(steps(10, 20, 40), 20, [0.8, 1.2], Rng.of(1, 'test', i)));
    expect(new Set(moved)).toEqual(new Set([10, 40]));
  });

  it("plateau follows Keras: patience, min_delta, the min_lr floor, and no reduction once there", () => {
    const s = plateau({ name: 'plateau', args: { metric: 'loss' } });
    const hyper = (key: string) => ({ lr: 0.1, 'lr_schedule.patience': 2, 'lr_schedule.factor': 0.5, 'lr_schedule.min_delta': 0.01, 'lr_schedule.min_lr': 0.02 })[key]!;
    const losses = [1, 0.995, 0.99, 0.98, 0.979, 0.978, 0.977, 0.976, 0.975, 0.974, NaN];
    const factors = losses.map((loss, i) => {
      s.decide({ step: i, members: [7], metric: [loss], hyper });
      return s.factor(7);
    });
    // reductions after two epochs without an improvement of more than 0.01; the third stops at min_lr / lr = 0.2
    const floor = 0.02 / 0.1;
    expect(factors).toEqual([1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, floor, floor, floor, floor]);
    const state = s.state!();
    const copy = plateau({ name: 'plateau', args: { metric: 'loss' } });
    copy.restore!(state);
    expect(copy.state!()).toEqual(state);
    copy.copied!([{ member: 3, source: 7 }]);
    expect(copy.factor(3)).toBe(floor);
  });
});
