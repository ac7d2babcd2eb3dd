// `netc train`'s options, and how a resume gets them back. A run keeps the options given on its command
// line in run.json, so `netc train --resume RUN` continues it as it was started. On a resume:
//   --members, --seed, --lowering  are the run's: a different value is refused (exit code 2)
//   --steps, --epochs              set a new step budget, kept for later resumes
//   --backend, --engine, --resident, --checkpoint-every, --checkpoint-minutes  may change (the checkpoint does
//                                  not depend on them); either checkpoint option given replaces both kept ones
//   --workers, --queue, --shards   may change too: either of --workers and --queue given replaces the kept
//                                  transport (a --queue URL that holds a password is not written to run.json)
import { existsSync, statSync } from 'node:fs';
import type { Lowering } from '../layers/forward.js';
import type { BackendName } from '../runtime/backend.js';
import type { Engine } from '../runtime/population.js';
import { UsageError } from './io.js';
import { readRunInfo, RunError, type RunInfo, type RunOptions } from './run-dir.js';
import { plural } from '../util/plural.js';

export interface TrainOptions {
  members?: number;
  epochs?: number;
  steps?: number;
  seed?: number;
  /** default: auto */
  backend?: BackendName | 'auto';
  /** default: grouped */
  lowering?: Lowering;
  /** how each step runs; default: auto (the generated fused step where it covers the model) */
  engine?: Engine;
  out?: string;
  /** with --out: replace the run in that directory */
  force?: boolean;
  /** continue the run in this directory from its checkpoint */
  resume?: string;
  /** write a checkpoint every this many steps instead of on the clock, and always at the end */
  checkpointEvery?: number;
  /** write a checkpoint once this many minutes have passed since the last (default DEFAULT_CHECKPOINT_MINUTES), and always at the end */
  checkpointMinutes?: number;
  /** train in waves of this many members, the rest waiting in host memory */
  resident?: number;
  /** draw a progress bar (a TTY); otherwise lines, on a timer and at each epoch's end */
  progress?: boolean;
  /** without a bar: a progress line at least this often (default 10 s) */
  progressSeconds?: number;
  /** threads of this process that run the fused step (default: one per core; not kept in run.json: it changes no number) */
  threads?: number;
  /** worker processes on this machine ('auto': one per core) */
  workers?: number | 'auto';
  /** a BullMQ queue on Redis, redis://HOST:PORT; kept unless it holds a password */
  queue?: string;
  /** with queue: how many shards */
  shards?: number;
  /** with queue: how many seconds Redis may stay unreachable while the run waits for its jobs (not kept in run.json) */
  queueTimeout?: number;
}

/** Minutes of wall time between checkpoints when neither --checkpoint-every nor --checkpoint-minutes is given. */
export const DEFAULT_CHECKPOINT_MINUTES = 5;

/** When the trainer writes checkpoints besides the end and a stop: every --checkpoint-every steps, else on the clock. */
export function checkpointPolicy(o: TrainOptions): { checkpointEvery?: number; checkpointSeconds?: number } {
  if (o.checkpointEvery !== undefined) return { checkpointEvery: o.checkpointEvery };
  return { checkpointSeconds: 60 * (o.checkpointMinutes ?? DEFAULT_CHECKPOINT_MINUTES) };
}

/** What run.json keeps of the options: those given on the command line. */
export function keptOptions(o: TrainOptions): RunOptions {
  const kept: RunOptions = {
    members: o.members,
    epochs: o.epochs,
    steps: o.steps,
    seed: o.seed,
    lowering: o.lowering,
    backend: o.backend,
    engine: o.engine,
    resident: o.resident,
    checkpoint_every: o.checkpointEvery,
    checkpoint_minutes: o.checkpointMinutes,
    workers: o.workers,
    queue: o.queue !== undefined && !queueHoldsPassword(o.queue) ? o.queue : undefined,
    shards: o.shards,
  };
  return Object.fromEntries(Object.entries(kept).filter(([, v]) => v !== undefined)) as RunOptions;
}

/** A --queue URL with a password in it (redis://:secret@host), which run.json does not keep. */
export function queueHoldsPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return url.includes('@');
  }
}

/** The one line a run started with a --queue that run.json does not keep prints. */
export const queueNotKept = (url: string): string =>
  `netc: --queue ${url.replace(/\/\/[^@/]*@/, '//***@')} holds a password, so run.json does not keep it: give --queue again with --resume to continue through it\n`;

/** The run directory `--resume` names, read; a missing directory or one that is not a run is a RunError. */
export function resumedRun(dir: string): RunInfo {
  if (!existsSync(dir)) throw new RunError(`cannot resume ${dir}: it does not exist`);
  if (!statSync(dir).isDirectory()) throw new RunError(`cannot resume ${dir}: it is a file, not a run directory`);
  if (!existsSync(`${dir}/run.json`)) throw new RunError(`cannot resume ${dir}: it is not a netc run directory (it has no run.json)`);
  try {
    return readRunInfo(dir);
  } catch (e) {
    if (e instanceof RunError) throw new RunError(`cannot resume ${dir}: ${e.message}`);
    throw new RunError(`cannot resume ${dir}: its run.json cannot be read (${(e as Error).message})`);
  }
}

/**
 * The options a resume of `run` trains with: the run's kept options, with those given now on top.
 * Throws UsageError for a given option the run was started otherwise with.
 */
export function resumeOptions(given: TrainOptions, run: RunInfo, dir: string): TrainOptions {
  const fixed: [flag: string, value: string | number | undefined, was: string | number, shown: string][] = [
    ['--members', given.members, run.ensemble.members, plural(run.ensemble.members, 'member')],
    ['--seed', given.seed, run.program.ensemble.seed, `seed ${run.program.ensemble.seed}`],
    ['--lowering', given.lowering, run.ensemble.lowering, `lowering ${run.ensemble.lowering}`],
  ];
  for (const [flag, value, was, shown] of fixed) {
    if (value !== undefined && value !== was) throw new UsageError(`${flag} ${value} conflicts with ${dir}, which was started with ${shown}; leave out ${flag} to continue it`);
  }
  const kept = run.options ?? {};
  const budget = given.steps !== undefined || given.epochs !== undefined ? { steps: given.steps, epochs: given.epochs } : { steps: kept.steps, epochs: kept.epochs };
  const checkpoints =
    given.checkpointEvery !== undefined || given.checkpointMinutes !== undefined
      ? { checkpointEvery: given.checkpointEvery, checkpointMinutes: given.checkpointMinutes }
      : { checkpointEvery: kept.checkpoint_every, checkpointMinutes: kept.checkpoint_minutes };
  const transport = given.workers !== undefined || given.queue !== undefined ? {} : { workers: kept.workers, queue: kept.queue, shards: kept.shards };
  return {
    ...given,
    ...budget,
    ...checkpoints,
    ...transport,
    members: given.members ?? kept.members,
    seed: given.seed ?? kept.seed,
    lowering: given.lowering ?? kept.lowering,
    backend: given.backend ?? (kept.backend as TrainOptions['backend']),
    engine: given.engine ?? (kept.engine as TrainOptions['engine']),
    resident: given.resident ?? kept.resident,
  };
}
