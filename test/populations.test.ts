// Populations: PBT, successive halving, early stopping, diverging members and training in waves, as a
// user runs them, with their promises checked: waves equal all-at-once, a diverging member changes no
// other member, halving shrinks the later intervals, PBT is no worse than no PBT on the same budget.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { netc } from './helpers.js';
import { readCheckpoint } from '../src/cli/run-dir.js';
import { memberParams, retiredMembers } from '../src/train/checkpoint.js';
import { Population, type StepBatch } from '../src/runtime/population.js';
import { paramBytes } from './run-files.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-pop-'));
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

function file(body: string): string {
  const dir = tmp();
  const path = join(dir, 'pop.net');
  writeFileSync(path, body);
  return path;
}

const MOONS = (members: number, vary: string, schedule = '', extra = '') => `model m(input: [2]) {
  dense(16, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 5 ${vary} }
train { data: moons(n: 400, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 6 ${extra} }
${schedule}
`;

describe('waves', () => {
  // with dropout, whose masks are named by the step: every wave must see the interval's steps
  const MOONS = (members: number, vary: string, schedule = '') => `model m(input: [2]) {
  dense(16, activation: relu)
  dropout(0.3)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 5 ${vary} }
train { data: moons(n: 400, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 6 }
${schedule}
`;
  it('--resident K trains in waves and equals training all members at once, bit for bit', async () => {
    const f = file(MOONS(7, 'vary lr: loguniform(0.005, 0.2)'));
    const [all, waves] = [tmp(), tmp()];
    expect((await netc('train', f, '--backend', 'cpu', '--out', all)).code).toBe(0);
    const r = await netc('train', f, '--backend', 'cpu', '--resident', '3', '--out', waves);
    expect(r.code, r.err).toBe(0);
    expect(paramBytes(waves).equals(paramBytes(all))).toBe(true);
    expect(json(join(waves, 'summary.json')).per_member).toEqual(json(join(all, 'summary.json')).per_member);
  });

  it('waves with halving equal all at once with halving', async () => {
    const f = file(MOONS(6, 'vary lr: loguniform(0.005, 0.2)', 'schedule halving { every: 2 epochs, keep: 0.5, metric: val_loss }'));
    const [all, waves] = [tmp(), tmp()];
    await netc('train', f, '--backend', 'cpu', '--out', all);
    await netc('train', f, '--backend', 'cpu', '--resident', '2', '--out', waves);
    expect(paramBytes(waves).equals(paramBytes(all))).toBe(true);
    expect(lines(join(all, 'events.jsonl')).length).toBeGreaterThan(0);
    expect(lines(join(waves, 'events.jsonl'))).toEqual(lines(join(all, 'events.jsonl')));
  });
});

describe('diverging members', () => {
  const LRS = 'vary lr: [0.05, 1e4, 0.02, 0.1]';
  // a regression with a linear output: with lr 1e4 the member's loss overflows to Inf within steps
  const MOONS = (members: number, vary: string) => `model m(input: [2]) {
  dense(16, activation: relu)
  dense(1)
}
ensemble { members: ${members} seed: 5 ${vary} }
train { data: moons(n: 400, noise: 0.2) validation: 0.25 loss: mse optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 6 }
`;
  it('a member whose loss turns non-finite is stopped and reported, and no other member changes', async () => {
    const withIt = tmp();
    const r = await netc('train', file(MOONS(4, LRS)), '--backend', 'cpu', '--out', withIt);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/netc: member 1 diverged: a non-finite loss at step \d+; it is stopped, the others go on/);
    const stop = lines(join(withIt, 'events.jsonl')).find((e) => e.event === 'stop');
    expect(stop).toMatchObject({ member: 1, event: 'stop' });
    // the same population without member 1: members 0, 2 and 3 keep their ids, so their streams
    const { manifest, tensors } = readCheckpoint(withIt);
    expect(manifest.member_ids).toEqual([0, 2, 3]);
    // the population without member 1, built with the trainer so that members keep their ids 0, 2, 3
    const { train } = await import('../src/train/trainer.js');
    const { compile } = await import('../src/pipeline.js');
    const { hyperTable } = await import('../src/runtime/hyper.js');
    const { loadDataset } = await import('../src/data/load.js');
    const { splitValidation } = await import('../src/data/split.js');
    const tf = await (await import('../src/runtime/backend.js')).loadTF();
    await tf.setBackend('cpu');
    const state = compile(MOONS(4, LRS), 'pop.net');
    const program = state.program!;
    const data = splitValidation(await loadDataset(program.train!.data, { baseDir: '.', seed: 5 }), 0.25);
    const result = await train({
      tf: tf as never,
      program,
      model: state.ir!,
      ensemble: state.ensemble!,
      hyper: hyperTable(program, state.ir!),
      data,
      steps: 6 * 15,
      seed: 5,
      memberIds: [0, 2, 3],
    });
    const alone = await result.population.exportState();
    result.population.dispose();
    for (const m of [0, 1, 2]) {
      const fused = memberParams(manifest, tensors, m);
      for (const [name, values] of fused) {
        const size = values.length;
        expect(Array.from(values), `member ${manifest.member_ids[m]} ${name}`).toEqual(Array.from(alone.get(name)!.slice(m * size, (m + 1) * size)));
      }
    }
    // the diverged member stays in the record, and extractable
    expect(retiredMembers(manifest, tensors).map((x) => x.member)).toEqual([1]);
  });

  it.each([
    ['all at once', []],
    ['in waves', ['--resident', '2']],
  ])('is refused under blockdiag, where its NaN would reach every member (%s)', async (_, extra) => {
    const r = await netc('train', file(MOONS(4, LRS)), '--backend', 'cpu', '--lowering', 'blockdiag', ...(extra as string[]), '--out', tmp());
    expect(r.code).toBe(1);
    expect(r.err).toContain('under the blockdiag lowering a non-finite member spreads to every other (0 x NaN = NaN');
  });

  it('in waves, a member in a later wave stops at the step where all at once stops it', async () => {
    // member 3 is in the second wave of two: the first has already run past its step when it diverges
    const f = file(MOONS(4, 'vary lr: [0.05, 0.02, 0.1, 1e4]'));
    const [all, waves] = [tmp(), tmp()];
    expect((await netc('train', f, '--backend', 'cpu', '--out', all)).code).toBe(0);
    const r = await netc('train', f, '--backend', 'cpu', '--resident', '2', '--out', waves);
    expect(r.code, r.err).toBe(0);
    const stops = lines(join(all, 'events.jsonl'));
    expect(stops).toMatchObject([{ event: 'stop', member: 3 }]);
    expect(stops[0].step % 15).not.toBe(0);
    expect(lines(join(waves, 'events.jsonl'))).toEqual(stops);
    expect(readFileSync(join(waves, 'population.json'), 'utf8')).toBe(readFileSync(join(all, 'population.json'), 'utf8'));
    expect(paramBytes(waves).equals(paramBytes(all))).toBe(true);
    expect(readFileSync(join(waves, 'metrics.jsonl'), 'utf8')).toBe(readFileSync(join(all, 'metrics.jsonl'), 'utf8'));
  });
});

describe('successive halving and early stopping', () => {
  it('halving stops the worst members at each interval; later intervals train fewer member-steps on smaller tensors', async () => {
    // what each training step ran on, counted rather than timed: the members the fused tensors hold
    // and their parameter values (a stopped member must leave the tensors, not ride along masked)
    const ran: { members: number; values: number }[] = [];
    const step = Population.prototype.step;
    const spy = vi.spyOn(Population.prototype, 'step').mockImplementation(function (this: Population, batch: StepBatch) {
      ran.push({ members: this.n, values: [...this.variables.values()].flat().reduce((a, v) => a + v.size, 0) });
      return step.call(this, batch as never);
    });
    const out = tmp();
    const r = await netc('train', 'examples/sweep-halving.net', '--backend', 'cpu', '--out', out).finally(() => spy.mockRestore());
    expect(r.code, r.err).toBe(0);
    const timings: { step: number; members: number }[] = json(join(out, 'summary.json')).epoch_timings;
    expect(timings.map((t) => t.members)).toEqual([16, 8, 4, 2, 2]);
    // each interval's steps, as the trainer ran them: 50 steps of 16 members, then 8, 4, 2, 2
    expect(ran).toHaveLength(timings[timings.length - 1].step);
    const intervals = timings.map((t, i) => ran.slice(i === 0 ? 0 : timings[i - 1].step, t.step));
    expect(intervals.map((steps) => steps.length)).toEqual([50, 50, 50, 50, 50]);
    expect(intervals.map((steps) => steps.reduce((a, s) => a + s.members, 0))).toEqual([800, 400, 200, 100, 100]);
    // and every step of each halved interval updates fewer parameter values than a step of the interval before
    const values = intervals.map((steps) => new Set(steps.map((s) => s.values)));
    values.forEach((v) => expect(v.size).toBe(1));
    const perStep = values.map((v) => [...v][0]);
    for (let i = 1; i < 4; i++) expect(perStep[i]).toBeLessThan(perStep[i - 1]);
    expect(perStep[4]).toBe(perStep[3]);
    const stops = lines(join(out, 'events.jsonl')).filter((e) => e.event === 'stop');
    expect(stops).toHaveLength(14);
    expect(r.out).toMatch(/\(stopped @50\)/);
    // a stopped member is extracted as it was when it stopped
    const first = stops[0];
    const x = await netc('extract', out, '--member', String(first.member), '--out', join(tmp(), 'stopped'), '--backend', 'cpu');
    expect(x.code, x.err).toBe(0);
    expect(x.out).toContain(`member ${first.member} (step 50, stopped)`);
  });

  it('early stopping ends each member on its own patience', async () => {
    const out = tmp();
    const f = file(MOONS(4, 'vary lr: [0.3, 0.001, 0.05, 0.2]', 'schedule early_stopping { metric: val_loss, patience: 1, min_delta: 0.01 }', ''));
    const r = await netc('train', f, '--backend', 'cpu', '--out', out);
    expect(r.code, r.err).toBe(0);
    const stops = lines(join(out, 'events.jsonl')).filter((e) => e.event === 'stop');
    expect(stops.length).toBeGreaterThan(0);
    for (const s of stops) expect(s.reason).toMatch(/^early stopping: val_loss did not improve for 1 epoch$/);
  });
});

describe('population-based training', () => {
  const PBT = (schedule: string) =>
    MOONS(8, 'vary lr: loguniform(0.0005, 0.5)', schedule, '').replace('epochs: 6', 'epochs: 8');

  it('exploits are gathers along the member axis, logged with their new hyperparameters', async () => {
    const out = tmp();
    const r = await netc('train', file(PBT('schedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.25, perturb: [0.8, 1.2], resample: 0.25 }')), '--backend', 'cpu', '--out', out);
    expect(r.code, r.err).toBe(0);
    const exploits = lines(join(out, 'events.jsonl')).filter((e) => e.event === 'exploit');
    expect(exploits.length).toBe(3 * 2);
    for (const e of exploits) {
      expect(e.member).not.toBe(e.source);
      expect(Object.keys(e.hyperparameters)).toEqual(['lr']);
      expect(e.hyperparameters.lr).toBeGreaterThan(0);
    }
    const summary = json(join(out, 'summary.json'));
    const member = summary.per_member.find((m: { member: number }) => m.member === exploits[exploits.length - 1].member);
    expect(member.hyperparameters.lr).toBeCloseTo(exploits.filter((e) => e.member === member.member).pop().hyperparameters.lr, 10);
  });

  it('the best member with PBT is no worse than the best without it, on the same budget', async () => {
    const [with_, without] = [tmp(), tmp()];
    await netc('train', file(PBT('schedule pbt { every: 2 epochs, metric: val_loss }')), '--backend', 'cpu', '--out', with_);
    await netc('train', file(PBT('')), '--backend', 'cpu', '--out', without);
    const best = (dir: string) => Math.min(...json(join(dir, 'summary.json')).per_member.map((m: { metrics: { val_loss: number } }) => m.metrics.val_loss));
    expect(best(with_)).toBeLessThanOrEqual(best(without));
  });
});

describe('resume of a population that changed', () => {
  it.each([[], ['--resident', '3']])('halving, stopped mid-epoch and resumed %s, ends as a straight run', async (...extra) => {
    const [straight, split] = [tmp(), tmp()];
    const args = ['examples/sweep-halving.net', '--backend', 'cpu', ...(extra as string[])];
    await netc('train', ...args, '--steps', '120', '--out', straight);
    await netc('train', ...args, '--steps', '70', '--out', split);
    const r = await netc('train', ...args, '--steps', '120', '--resume', split);
    expect(r.code, r.err).toBe(0);
    expect(paramBytes(split).equals(paramBytes(straight))).toBe(true);
    expect(readFileSync(join(split, 'metrics.jsonl'), 'utf8')).toBe(readFileSync(join(straight, 'metrics.jsonl'), 'utf8'));
    expect(readFileSync(join(split, 'events.jsonl'), 'utf8')).toBe(readFileSync(join(straight, 'events.jsonl'), 'utf8'));
  });
});
