// The generated step on worker threads (`netc train --threads N`, src/runtime/threads.ts): the same run at
// 1, 2 and 3 threads leaves the same files byte for byte (the checkpoint, metrics.jsonl, events.jsonl and
// summary.json but for its timings and thread count), members without shared layers being independent: a
// plain population, halving (its N shrinks, and with it the threads a call takes), a resume on another
// thread count, and a member whose weights go non-finite in one thread's range only (the threads stop after
// different steps, and the call runs again on one thread). A model with shared layers runs on one thread,
// and says why.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { expectSameRun } from './run-files.js';
import { threadedCalls } from '../src/runtime/threads.js';

const MLP = (members: number, extra = '', vary = 'vary lr: loguniform(0.005, 0.05)') => `model m(input: [2]) {
  dense(8, activation: sigmoid)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 3 ${vary} }
train { data: xor(n: 40, noise: 0.2) validation: 0.2 loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 8 epochs: 6 metrics: [accuracy] }
${extra}`;

async function trainAt(file: string, out: string, threads: number, ...options: string[]): Promise<string> {
  const r = await netc('train', file, '--backend', 'wasm', '--engine', 'fused', '--threads', String(threads), ...options, '--out', out);
  expect(r.code, r.err).toBe(0);
  return r.err;
}

const summaryOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));

function fileOf(source: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'netc-threads-'));
  const file = join(dir, 'm.net');
  writeFileSync(file, source);
  return { dir, file };
}

describe('the fused step on threads', () => {
  it('ends byte for byte as one thread at 2 and 3 threads, and resumed on another thread count', async () => {
    const { dir, file } = fileOf(MLP(24));
    await trainAt(file, join(dir, 't1'), 1);
    for (const threads of [2, 3]) {
      const before = threadedCalls();
      await trainAt(file, join(dir, `t${threads}`), threads);
      expect(threadedCalls(), `${threads} threads ran`).toBeGreaterThan(before);
      expect(summaryOf(join(dir, `t${threads}`)).threads).toBe(threads);
      expectSameRun(join(dir, `t${threads}`), join(dir, 't1'));
    }
    expect(summaryOf(join(dir, 't1')).threads).toBe(1);
    await trainAt(file, join(dir, 'resumed'), 2, '--steps', '9');
    const r = await netc('train', '--resume', join(dir, 'resumed'), '--threads', '3', '--epochs', '6');
    expect(r.code, r.err).toBe(0);
    expectSameRun(join(dir, 'resumed'), join(dir, 't1'));
  });

  it.each([
    ['halving every 2 epochs (N shrinks, and with it the threads a call takes)', MLP(32, 'schedule halving { every: 2 epochs keep: 0.5 metric: loss min_members: 4 }')],
    // member 20's Adam step leaves float32's range: the third thread stops a step before the others
    ['a member whose weights go non-finite in one range', MLP(24, '', `vary lr: [${Array.from({ length: 24 }, (_, i) => (i === 20 ? '3e38' : '0.01')).join(', ')}]`)],
  ])('ends byte for byte as one thread at 3: %s', async (_, source) => {
    const { dir, file } = fileOf(source);
    await trainAt(file, join(dir, 't1'), 1);
    const before = threadedCalls();
    await trainAt(file, join(dir, 't3'), 3);
    expect(threadedCalls()).toBeGreaterThan(before);
    expectSameRun(join(dir, 't3'), join(dir, 't1'));
  });

  it('runs a model with shared layers on one thread, and says why', async () => {
    const { dir, file } = fileOf(`model m(input: [2]) {
  trunk = shared dense(6, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 24 seed: 1 }
train { data: xor(n: 40) loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 8 epochs: 1 }
`);
    const before = threadedCalls();
    const err = await trainAt(file, join(dir, 'run'), 2);
    expect(err).toContain("netc: --threads 2: the steps run on 1 thread (shared layers: their gradient is every member's sum, added in one order)");
    expect(summaryOf(join(dir, 'run')).threads).toBe(1);
    expect(threadedCalls()).toBe(before);
  });

  it('runs a population too small to split on fewer threads, and says why', async () => {
    const { dir, file } = fileOf(MLP(12));
    const err = await trainAt(file, join(dir, 'run'), 3, '--steps', '4');
    expect(err).toContain('netc: --threads 3: the steps run on 1 thread (12 members split 8 or more to a thread)');
  });
});
