// `npm run bench -- --baseline REF`'s comparison (bench/baseline.ts), with a fake worker: each configuration runs
// on both sides, in both windows, turn and turn about, and the ratios are of the medians and the fastest rounds.
import { describe, expect, it } from 'vitest';
import { baselineConfigs, baselineTable, compareWithBaseline } from '../bench/baseline.js';
import type { Job } from '../bench/lib.js';

const timing = { warmup: 5, budgetMs: 0, minSteps: 1, maxSteps: 1 };

describe('--baseline', () => {
  it('times each side in both windows, alternating which goes first, and reports medians and fastest rounds', async () => {
    const calls: string[] = [];
    // this checkout: 2 ms from the start, 1 ms steady, one fast round of 0.5; the baseline: 1 ms in both
    const run = async (dir: string, job: Job) => {
      const steady = job.kind === 'netc' && job.warmup !== timing.warmup;
      calls.push(`${dir}:${steady ? 'steady' : 'start'}`);
      const ms = dir === 'ours' ? (steady ? (calls.length === 2 ? 0.5 : 1) : 2) : 1;
      return { msMedian: ms } as never;
    };
    const rows = await compareWithBaseline(run, { ours: 'ours', theirs: 'theirs' }, { fast: timing, slow: timing }, 3, () => {});
    expect(rows).toHaveLength(baselineConfigs.length);
    expect(calls.slice(0, 12)).toEqual([
      ...['ours:start', 'ours:steady', 'theirs:start', 'theirs:steady'],
      ...['theirs:start', 'theirs:steady', 'ours:start', 'ours:steady'],
      ...['ours:start', 'ours:steady', 'theirs:start', 'theirs:steady'],
    ]);
    const [first] = rows;
    expect(first.ratio).toBe(2);
    expect(first.steady.ratio).toBe(1);
    expect(first.steady.ours).toEqual([0.5, 1, 1]);
    const table = baselineTable(rows, 'main', 'abcdef0123456789', 3).join('\n');
    expect(table).toContain('| forum | 15 | 2.0000 | 1.0000 | 2.000x | 1.0000 | 1.0000 | 1.000x | 0.500x |');
  });

  it('names a side that could not run', async () => {
    const rows = await compareWithBaseline(async () => ({ unavailable: 'no wasm' }) as never, { ours: 'a', theirs: 'b' }, { fast: timing, slow: timing }, 1, () => {});
    expect(rows[0].error).toBe('ours: no wasm');
  });
});
