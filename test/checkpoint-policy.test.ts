// When netc train writes checkpoints: by default on the clock (every DEFAULT_CHECKPOINT_MINUTES), not at
// every epoch; every --checkpoint-every steps instead when it is given; at the end always. A checkpoint on
// the clock lands at whatever step the clock says, mid-epoch too, and a run resumed from it ends
// byte-identical to a straight run. Every write is counted through a wrapper of writeCheckpoint.
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main.js';
import type { TrainPosition } from '../src/train/checkpoint.js';
import { expectSameRun } from './run-files.js';

const hooks = vi.hoisted(() => ({
  /** every checkpoint written, by run directory */
  writes: new Map<string, TrainPosition[]>(),
  /** called after each write */
  after: undefined as ((dir: string, position: TrainPosition) => void) | undefined,
}));

vi.mock('../src/cli/run-dir.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/cli/run-dir.js')>();
  return {
    ...real,
    writeCheckpoint: async (...args: Parameters<typeof real.writeCheckpoint>) => {
      await real.writeCheckpoint(...args);
      const [dir, , position] = args;
      hooks.writes.set(dir, [...(hooks.writes.get(dir) ?? []), position]);
      hooks.after?.(dir, position);
    },
  };
});

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-ckpt-policy-'));
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
async function netc(...argv: string[]) {
  let err = '';
  const code = await main(argv, { out: () => {}, err: (t) => void (err += t) });
  return { code, err };
}

// examples/xor.net: 300 training examples in batches of 16, 19 steps an epoch; 60 steps end in the fourth
const PER_EPOCH = 19;
const RUN = ['examples/xor.net', '--steps', '60', '--backend', 'cpu'];
const steps = (dir: string) => (hooks.writes.get(dir) ?? []).map((p) => p.step);

describe('checkpoints of netc train', () => {
  it('by default on the clock, not at every epoch: a run shorter than the interval writes one, at its end', async () => {
    const dir = join(tmp(), 'run');
    const r = await netc('train', ...RUN, '--out', dir);
    expect(r.code, r.err).toBe(0);
    expect(steps(dir)).toEqual([60]);
    // four epochs were reported, each into metrics.jsonl
    const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect([...new Set(rows.map((row) => row.epoch))]).toEqual([1, 2, 3, 4]);
  });

  it('--checkpoint-every STEPS writes every STEPS steps and at the end', async () => {
    const dir = join(tmp(), 'run');
    expect((await netc('train', ...RUN, '--checkpoint-every', '25', '--out', dir)).code).toBe(0);
    expect(steps(dir)).toEqual([25, 50, 60]);
  });

  it('--checkpoint-minutes M writes on the clock; a run resumed from one that landed mid-epoch ends byte-identical', async () => {
    const root = tmp();
    const straight = join(root, 'straight');
    expect((await netc('train', ...RUN, '--out', straight)).code).toBe(0);
    const dir = join(root, 'timed');
    const snapshot = join(root, 'snapshot');
    let taken: TrainPosition | undefined;
    // the run directory as a kill -9 would leave it just after a checkpoint mid-epoch
    hooks.after = (at, position) => {
      if (at !== dir || taken || position.step < 20 || position.step >= 57 || position.step % PER_EPOCH === 0) return;
      cpSync(dir, snapshot, { recursive: true });
      taken = position;
    };
    // 1.2 ms: a checkpoint every step or few
    const r = await netc('train', ...RUN, '--checkpoint-minutes', '0.00002', '--out', dir);
    hooks.after = undefined;
    expect(r.code, r.err).toBe(0);
    expect(steps(dir).length).toBeGreaterThan(4);
    expect(taken, steps(dir).join(' ')).toBeDefined();
    expect(taken!.batch % PER_EPOCH).not.toBe(0);
    expect(readJson(join(dir, 'run.json')).options).toMatchObject({ checkpoint_minutes: 0.00002 });
    // the checkpoint's own options (on the clock) are kept; the resumed run writes on the clock too
    const resumed = await netc('train', '--resume', snapshot);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`resuming at step ${taken!.step}`);
    expectSameRun(snapshot, straight);
    expectSameRun(dir, straight);
  });

  it('a resume given --checkpoint-every replaces the kept --checkpoint-minutes', async () => {
    const dir = join(tmp(), 'run');
    expect((await netc('train', 'examples/xor.net', '--steps', '10', '--backend', 'cpu', '--checkpoint-minutes', '2', '--out', dir)).code).toBe(0);
    expect(readJson(join(dir, 'run.json')).options).toMatchObject({ checkpoint_minutes: 2 });
    const r = await netc('train', '--resume', dir, '--steps', '30', '--checkpoint-every', '7');
    expect(r.code, r.err).toBe(0);
    expect(steps(dir)).toEqual([10, 14, 21, 28, 30]);
    const options = readJson(join(dir, 'run.json')).options;
    expect(options.checkpoint_every).toBe(7);
    expect(options).not.toHaveProperty('checkpoint_minutes');
  });

  it.each([
    [['--checkpoint-minutes', '0'], "expected a number > 0, got '0'"],
    [['--checkpoint-minutes', '-1'], "expected a number > 0, got '-1'"],
    [['--checkpoint-minutes', 'soon'], "expected a number > 0, got 'soon'"],
    [['--checkpoint-minutes', '1', '--checkpoint-every', '10'], 'give --checkpoint-every (steps) or --checkpoint-minutes (wall time), not both'],
  ])('%j is a usage error that says so', async (args, message) => {
    const r = await netc('train', ...RUN, ...args, '--out', join(tmp(), 'run'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});
