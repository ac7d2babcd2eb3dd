// `--resume RUN` alone continues a run as it was started: the command-line overrides are kept in
// run.json; a flag that contradicts the run says so; a run with nothing left to train says so; a missing
// run is a plain message; the rate after a resume counts only the steps trained.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { finishDespiteCtrlC } from '../src/cli/train-command.js';
import { keptOptions, queueNotKept, resumeOptions } from '../src/cli/train-options.js';
import type { RunInfo, RunOptions } from '../src/cli/run-dir.js';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-resume-opt-'));
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** xor.net (8 members, seed 0 in the file) trained 10 steps as 3 members with seed 4 on cpu. */
async function started(): Promise<string> {
  const dir = join(tmp(), 'run');
  const r = await run('train', 'examples/xor.net', '--members', '3', '--seed', '4', '--steps', '10', '--backend', 'cpu', '--checkpoint-every', '5', '--out', dir);
  expect(r.code, r.err).toBe(0);
  return dir;
}

describe('resume keeps the options a run was started with', () => {
  it('run.json holds the command-line overrides', async () => {
    const dir = await started();
    expect(readJson(join(dir, 'run.json')).options).toEqual({ members: 3, seed: 4, steps: 10, backend: 'cpu', checkpoint_every: 5 });
  });

  it('FILE --resume RUN --steps N continues with the same members and seed, and counts only the steps it trains in the rate', async () => {
    const dir = await started();
    const r = await run('train', 'examples/xor.net', '--resume', dir, '--steps', '30');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('backend: cpu');
    expect(r.err).toContain('training 3 members of xor');
    expect(r.out).toMatch(/^steps 10 to 30 \(20 steps\) x 3 members: trained in /m);
    const summary = readJson(join(dir, 'summary.json'));
    expect(summary).toMatchObject({ members: 3, seed: 4, steps: 30, resumed_from_step: 10 });
    // 20 steps of 3 members were trained in train_seconds (both rounded to 1 ms)
    expect(summary.member_steps_per_second * summary.train_seconds).toBeGreaterThan(60 * 0.8);
    expect(summary.member_steps_per_second * summary.train_seconds).toBeLessThan(60 * 1.2);
    // the new step budget is the run's from now on
    expect(readJson(join(dir, 'run.json')).options.steps).toBe(30);
  });

  it('--resume RUN without FILE continues from the source kept in run.json', async () => {
    const dir = await started();
    const r = await run('train', '--resume', dir, '--steps', '12');
    expect(r.code, r.err).toBe(0);
    expect(readJson(join(dir, 'population.json')).position.step).toBe(12);
    expect(readJson(join(dir, 'summary.json'))).toMatchObject({ members: 3, seed: 4 });
  });

  it('train without FILE or --resume is a usage error', async () => {
    const r = await run('train');
    expect(r.code).toBe(2);
    expect(r.err).toContain('netc: give a .net file to train, or --resume RUN to continue a run');
  });

  it('a flag the run was started otherwise with is refused and named; the same value is accepted', async () => {
    const dir = await started();
    for (const [flag, value, was] of [
      ['--members', '5', '3 members'],
      ['--seed', '1', 'seed 4'],
      ['--lowering', 'loop', 'lowering grouped'],
    ]) {
      const r = await run('train', 'examples/xor.net', '--resume', dir, flag, value);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toBe(`netc: ${flag} ${value} conflicts with ${dir}, which was started with ${was}; leave out ${flag} to continue it\n`);
    }
    const same = await run('train', 'examples/xor.net', '--resume', dir, '--members', '3', '--seed', '4', '--steps', '11');
    expect(same.code, same.err).toBe(0);
  });
});

describe('resume with nothing to train', () => {
  it('a finished run says so, exit 0, and changes nothing', async () => {
    const dir = await started();
    const before = statSync(join(dir, 'summary.json')).mtimeMs;
    const r = await run('train', 'examples/xor.net', '--resume', dir);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`netc: ${dir} is already at step 10 of 10; nothing to train (give --steps N with N > 10, or --epochs, to train further)`);
    expect(statSync(join(dir, 'summary.json')).mtimeMs).toBe(before);
  });

  it('a run killed after its last checkpoint but before its summary is finished: summary.json is written', async () => {
    const dir = await started();
    rmSync(join(dir, 'summary.json'));
    const r = await run('train', '--resume', dir);
    expect(r.code, r.err).toBe(0);
    expect(readJson(join(dir, 'summary.json'))).toMatchObject({ steps: 10, members: 3 });
  });

  it('a run past the steps asked for says so, exit 1', async () => {
    const dir = await started();
    const r = await run('train', 'examples/xor.net', '--resume', dir, '--steps', '5');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`netc: ${dir} is already at step 10, past the 5 steps asked for; nothing to train (give --steps N with N > 10, or --epochs, to train further)`);
  });
});

describe('resume of what is not a run', () => {
  it('a missing directory is a plain message, not a position in the .net file', async () => {
    const missing = join(tmp(), 'nope');
    const r = await run('train', 'examples/xor.net', '--resume', missing, '--backend', 'cpu');
    expect(r.code).toBe(1);
    expect(r.err).toBe(`netc: cannot resume ${missing}: it does not exist\n`);
  });

  it('a checkpoint manifest that is not JSON says so', async () => {
    const dir = await started();
    writeFileSync(join(dir, 'population.json'), '{"format": "netc-checkpoint-1", ');
    const r = await run('train', '--resume', dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netc: cannot resume .*: its population\.json is not valid JSON \(.+\)\n$/);
  });

  it('a directory that is not a run says so', async () => {
    const dir = tmp();
    const r = await run('train', 'examples/xor.net', '--resume', dir, '--backend', 'cpu');
    expect(r.code).toBe(1);
    expect(r.err).toBe(`netc: cannot resume ${dir}: it is not a netc run directory (it has no run.json)\n`);
  });
});

// issue 24: a resume silently dropped --workers and --queue, training in one process a run started across workers
describe('resume keeps the transport a run was started with', () => {
  const runInfo = (options: RunOptions) => ({ ensemble: { members: 3, lowering: 'grouped' }, program: { ensemble: { seed: 0 } }, options }) as unknown as RunInfo;

  it('run.json keeps --workers, --queue and --shards, but not a queue URL with a password', () => {
    expect(keptOptions({ workers: 4 })).toEqual({ workers: 4 });
    expect(keptOptions({ queue: 'redis://host:6379', shards: 2 })).toEqual({ queue: 'redis://host:6379', shards: 2 });
    expect(keptOptions({ queue: 'redis://:secret@host:6379' })).toEqual({});
    expect(queueNotKept('redis://:secret@host:6379')).toBe('netc: --queue redis://***@host:6379 holds a password, so run.json does not keep it: give --queue again with --resume to continue through it\n');
  });

  it('a resume trains through the kept transport; --workers or --queue given replaces it', () => {
    expect(resumeOptions({}, runInfo({ workers: 'auto' }), 'r')).toMatchObject({ workers: 'auto', queue: undefined });
    expect(resumeOptions({}, runInfo({ queue: 'redis://h:1', shards: 2 }), 'r')).toMatchObject({ queue: 'redis://h:1', shards: 2 });
    const moved = resumeOptions({ workers: 2 }, runInfo({ queue: 'redis://h:1', shards: 2 }), 'r');
    expect([moved.workers, moved.queue, moved.shards]).toEqual([2, undefined, undefined]);
  });

  it('a kept workers that is neither a count nor auto is a damaged run.json', async () => {
    const dir = await started();
    const info = readJson(join(dir, 'run.json'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...info, options: { ...info.options, workers: 'many' } }));
    const r = await run('train', '--resume', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`its option 'workers' ("many") is neither a count nor 'auto'`);
  });
});

// issue 24: Ctrl-C while the last files were written left no report.html, and a resume then said "nothing to train"
describe('a run stopped while it writes its last files', () => {
  it('a resume of a run at its budget without report.html writes it instead of saying there is nothing to train', async () => {
    const dir = await started();
    rmSync(join(dir, 'report.html'));
    const r = await run('train', '--resume', dir);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain('nothing to train');
    expect(statSync(join(dir, 'report.html')).size).toBeGreaterThan(0);
    expect((await run('train', '--resume', dir)).err).toContain('nothing to train');
  });

  it('Ctrl-C once while they are written lets them finish, and says so', () => {
    let err = '';
    const finishing = finishDespiteCtrlC({ out: () => {}, err: (t) => void (err += t) });
    try {
      process.emit('SIGINT');
    } finally {
      finishing.off();
    }
    expect(err).toContain("writing the run's last files (summary.json, report.html) first");
  });
});
