// `npm run bench -- --baseline REF`: the forum and LeNet fused steps of this checkout against a checkout of REF
// (a commit, a branch, `main`), in the same run, turn and turn about, so that a change to the generated step is
// judged against the code it replaced on the same machine at the same time. REF is checked out as a detached
// git worktree under .bench/ (ignored), sharing this checkout's node_modules; each job runs in a worker process of
// its own tree (bench/worker.ts there), so each side times its own code.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Job, ModelName, StepResult, Timing, Unavailable } from './lib.js';
import { median } from './timing.js';

/**
 * One configuration, both sides: each round's median ms a step, this checkout's and the baseline's, in two
 * windows: from the start (the bench's own timing: a few warm-up steps, then up to its step budget) and steady
 * (after about a second of warm-up steps, once V8 has optimized the step's JavaScript: bench/NOTES.md shows
 * that the first thousands of forum steps run at either of two speeds, by the process, on both trees).
 */
export interface BaselineRow {
  model: ModelName;
  n: number;
  ours: number[];
  theirs: number[];
  /** median of ours over median of theirs: below 1 this checkout is faster */
  ratio: number;
  steady: { ours: number[]; theirs: number[]; ratio: number };
  error?: string;
}

/** The configurations compared: the fused (generated wasm) step, grouped, on wasm; `steady`: the warm-up steps of the steady window (about a second). */
export const baselineConfigs: { model: ModelName; n: number; timing: 'fast' | 'slow'; steady: number }[] = [
  { model: 'forum', n: 15, timing: 'fast', steady: 50_000 },
  { model: 'forum', n: 100, timing: 'fast', steady: 20_000 },
  { model: 'forum', n: 1000, timing: 'fast', steady: 2_000 },
  { model: 'lenet', n: 8, timing: 'slow', steady: 20 },
  { model: 'lenet', n: 30, timing: 'slow', steady: 5 },
];

/** REF checked out (once) as a detached worktree under ROOT/.bench/, with ROOT's node_modules; its folder. */
export function checkoutBaseline(root: string, ref: string): { dir: string; sha: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = join(root, '.bench', `baseline-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'bench', 'worker.ts'))) {
    mkdirSync(join(root, '.bench'), { recursive: true });
    git('worktree', 'add', '--detach', '--force', dir, sha);
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, sha };
}

/**
 * This checkout's fastest round (either window) over the baseline's. Each worker process runs the step at one
 * of two speeds, on both trees (V8's tiers, bench/NOTES.md), so that the medians of five rounds move with how
 * many landed in which; the fastest round is each tree's own code at its best.
 */
export const fastest = (row: BaselineRow): number => Math.min(...row.ours, ...row.steady.ours) / Math.min(...row.theirs, ...row.steady.theirs);

/**
 * Each configuration `rounds` times on each side, alternating which side goes first, each a worker process of its
 * own tree: `run(dir, job)` starts DIR/bench/worker.ts with the job.
 */
export async function compareWithBaseline(
  run: (dir: string, job: Job) => Promise<StepResult | Unavailable>,
  dirs: { ours: string; theirs: string },
  timings: Record<'fast' | 'slow', Timing>,
  rounds: number,
  log: (line: string) => void,
): Promise<BaselineRow[]> {
  const rows: BaselineRow[] = [];
  for (const c of baselineConfigs) {
    const job: Job = { kind: 'netc', model: c.model, lowering: 'grouped', engine: 'fused', n: c.n, backend: 'wasm', ...timings[c.timing] };
    const steadyJob: Job = { ...job, warmup: c.steady };
    const row: BaselineRow = { model: c.model, n: c.n, ours: [], theirs: [], ratio: NaN, steady: { ours: [], theirs: [], ratio: NaN } };
    try {
      for (let r = 0; r < rounds; r++) {
        const order: ('ours' | 'theirs')[] = r % 2 ? ['theirs', 'ours'] : ['ours', 'theirs'];
        for (const side of order) {
          for (const [j, into] of [[job, row], [steadyJob, row.steady]] as const) {
            const result = await run(dirs[side], j);
            if ('unavailable' in result) throw new Error(`${side}: ${result.unavailable}`);
            into[side].push(result.msMedian);
          }
        }
      }
      row.ratio = median(row.ours) / median(row.theirs);
      row.steady.ratio = median(row.steady.ours) / median(row.steady.theirs);
      const ms = (xs: number[]) => median(xs).toFixed(4);
      log(`  ${c.model} N=${c.n} fused: from the start ${ms(row.ours)} ms this checkout, ${ms(row.theirs)} ms baseline: ${row.ratio.toFixed(3)}x; steady ${ms(row.steady.ours)} against ${ms(row.steady.theirs)} ms: ${row.steady.ratio.toFixed(3)}x; fastest rounds ${fastest(row).toFixed(3)}x`);
    } catch (error) {
      row.error = error instanceof Error ? error.message : String(error);
      log(`  ${c.model} N=${c.n} fused: FAILED ${row.error}`);
    }
    rows.push(row);
  }
  return rows;
}

/** The markdown table of a comparison. */
export function baselineTable(rows: BaselineRow[], ref: string, sha: string, rounds: number): string[] {
  const ms = (xs: number[]) => (xs.length ? median(xs).toFixed(4) : '—');
  return [
    `## This checkout against ${ref} (${sha.slice(0, 12)}), the same run`,
    '',
    `The fused step (grouped, generated wasm), each side ${rounds} times in worker processes of its own tree, turn and turn about; the median of the rounds' medians. Ratio = this checkout's ms over the baseline's (below 1: faster). From the start: the bench's own timing (a few warm-up steps); steady: after about a second of warm-up steps.`,
    '',
    '| model | N | from the start: this checkout ms | baseline ms | ratio | steady: this checkout ms | baseline ms | ratio | fastest rounds, ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) =>
      r.error ? `| ${r.model} | ${r.n} | failed: ${r.error} | | | | | | |` : `| ${r.model} | ${r.n} | ${ms(r.ours)} | ${ms(r.theirs)} | ${r.ratio.toFixed(3)}x | ${ms(r.steady.ours)} | ${ms(r.steady.theirs)} | ${r.steady.ratio.toFixed(3)}x | ${fastest(r).toFixed(3)}x |`,
    ),
    '',
  ];
}
