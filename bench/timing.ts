// The parts of the benchmark that need neither TF.js nor netc: the timing rule, memory sampling and the
// forum batch's values. bench/lib.ts re-exports them; bench/jax_bench.ts uses them alone, so that a jax-js
// process loads no TF.js.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface Timing {
  /** how many steps to run before timing */
  warmup: number;
  /** keep timing steps until this much time has passed ... */
  budgetMs: number;
  /** ... and at least this many steps were timed, but no more than maxSteps */
  minSteps: number;
  maxSteps: number;
}

export class MemorySampler {
  peak = 0;
  sample(): number {
    const rss = process.memoryUsage().rss;
    if (rss > this.peak) this.peak = rss;
    return rss;
  }
}

/** The process's peak resident set size from /proc (Linux), or undefined. */
export function vmHwm(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export async function timeSteps(step: () => Promise<void> | void, timing: Timing, memory: MemorySampler, cpu?: number[]): Promise<number[]> {
  for (let i = 0; i < timing.warmup; i++) {
    await step();
    memory.sample();
  }
  const times: number[] = [];
  const start = performance.now();
  while ((times.length < timing.minSteps || performance.now() - start < timing.budgetMs) && times.length < timing.maxSteps) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await step();
    times.push(performance.now() - t0);
    // the process's CPU time for the step (user + system): what a shared, loaded machine does not inflate
    const c = process.cpuUsage(c0);
    cpu?.push((c.user + c.system) / 1000);
    memory.sample();
  }
  return times;
}

/** What every step job reports of its timed steps, and the memory it held while it ran them. */
export interface StepTimes {
  /** median, mean and least time of one step, over the timed steps */
  msMedian: number;
  msMean: number;
  msMin: number;
  /** the process's CPU time per step (user + system), median and least: steady where other processes share the cores */
  cpuMsMedian: number;
  cpuMsMin: number;
  steps: number;
  warmup: number;
  /** the largest process.memoryUsage().rss seen (sampled after building, and after every step) */
  peakRss: number;
  /** the kernel's high-water mark of the process (VmHWM), where Linux reports it */
  vmHwm?: number;
}

/** timeSteps' times, summarised as a step job reports them. */
export async function timedSteps(step: () => Promise<void> | void, timing: Timing, memory: MemorySampler): Promise<StepTimes> {
  const cpu: number[] = [];
  const times = await timeSteps(step, timing, memory, cpu);
  return { msMedian: median(times), msMean: mean(times), msMin: minOf(times), cpuMsMedian: median(cpu), cpuMsMin: minOf(cpu), steps: times.length, warmup: timing.warmup, peakRss: memory.peak, vmHwm: vmHwm() };
}

const minOf = (xs: number[]): number => xs.reduce((a, b) => (b < a ? b : a), Infinity);

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The bench's deterministic LCG (bench/torch_bench.py batch() draws the same values). */
export function lcg(seed = 12345): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/** The forum batch: `batch` points in [-1, 1)^2 and their XOR label (x1 x2 > 0), as makeBatch gives them. */
export function forumBatchValues(batch: number): { x: Float32Array; y: Float32Array } {
  const next = lcg();
  const x = Float32Array.from({ length: batch * 2 }, () => next() * 2 - 1);
  const y = Float32Array.from({ length: batch }, (_, i) => (x[2 * i] * x[2 * i + 1] > 0 ? 1 : 0));
  return { x, y };
}

/** An installed package's version, from its package.json (found from its entry point: not every package exports package.json). */
export function packageVersion(pkg: string): string | undefined {
  const require = createRequire(import.meta.url);
  try {
    let dir = dirname(require.resolve(pkg));
    for (;;) {
      const file = join(dir, 'package.json');
      if (existsSync(file)) {
        const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (json.name === pkg) return json.version;
      }
      const up = dirname(dir);
      if (up === dir) return undefined;
      dir = up;
    }
  } catch {
    return undefined;
  }
}
