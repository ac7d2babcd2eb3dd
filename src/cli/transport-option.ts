// --workers and --queue: which transport carries a run's shard jobs. Without either, the population
// trains in this process (in waves with --resident).
import { availableParallelism } from 'node:os';
import type { BackendName } from '../runtime/backend.js';
import { LocalWorkers } from '../scale/local-workers.js';
import { DEFAULT_UNREACHABLE_SECONDS } from '../scale/queue-error.js';
import type { Transport } from '../scale/transport.js';
import type { Io } from './io.js';
import { plural } from '../util/plural.js';

export interface TransportOptions {
  /** worker processes on this machine; 'auto': one per core */
  workers?: number | 'auto';
  /** a BullMQ queue on Redis, redis://HOST:PORT */
  queue?: string;
  /** with queue: how many shards (default: the workers connected when the run starts, at least 1) */
  shards?: number;
  /** with queue: how many seconds Redis may stay unreachable while the run waits for its jobs */
  queueTimeout?: number;
}

/** More worker processes than this many per core only share the cores and the memory among more copies. */
export const workersPerCore = 4;

/**
 * How many worker processes `--workers` starts: no more than the members (a worker trains at least one) nor
 * `workersPerCore` per core (`--workers 99999` started 99,999 processes). A count cut down says so in one line.
 */
export function workerCount(requested: number | 'auto', members: number, cores = availableParallelism()): { count: number; warning?: string } {
  const k = requested === 'auto' ? cores : requested;
  const count = Math.max(1, Math.min(k, members, workersPerCore * cores));
  if (requested === 'auto' || count === k) return { count };
  const limit = count === members ? `the ${plural(members, 'member')} to train` : `${workersPerCore} per core of this machine's ${plural(cores, 'core')}`;
  return { count, warning: `netc: warning: --workers ${requested} is more than ${limit}: using ${plural(count, 'worker')}\n` };
}

/** More shards than this under --queue are more jobs through Redis each interval than any pool of workers needs. */
export const maxShards = 1024;

/**
 * How many shards `--shards` cuts the population into under --queue: no more than the members (a shard
 * trains at least one) nor `maxShards` (`--shards 99999` made 99,999 jobs an interval). A count cut down
 * says so in one line.
 */
export function shardCount(requested: number, members: number): { count: number; warning?: string } {
  const count = Math.max(1, Math.min(requested, members, maxShards));
  if (count === requested) return { count };
  const limit = count === members ? `the ${plural(members, 'member')} to train` : `${maxShards}, the most netc cuts a population into`;
  return { count, warning: `netc: warning: --shards ${requested} is more than ${limit}: using ${plural(count, 'shard')}\n` };
}

/**
 * `members`: how many members the run trains, the most workers it can keep busy; `note`: where a queue's
 * waiting lines go (the progress, which keeps them off its bar) and how often.
 */
export async function makeTransport(options: TransportOptions, backend: BackendName, io: Io, members: number, note: { log(line: string): void; everySeconds?: number } = { log: io.err }): Promise<Transport | undefined> {
  if (options.workers !== undefined) {
    const { count, warning } = workerCount(options.workers, members);
    if (warning) io.err(warning);
    return new LocalWorkers(count, backend);
  }
  if (options.queue === undefined) return undefined;
  // bullmq and ioredis load only for a queue (src/scale/queue-error.ts)
  const { QueueTransport } = await import('../scale/queue.js');
  const probe = (await QueueTransport.create(options.queue, 1)).watch({ ...note, unreachableSeconds: options.queueTimeout ?? DEFAULT_UNREACHABLE_SECONDS });
  const connected = await probe.workerCount();
  if (options.shards !== undefined) {
    const { count, warning } = shardCount(options.shards, members);
    if (warning) io.err(warning);
    return probe.withSlots(count);
  }
  if (!connected) io.err(`netc: no worker is serving ${options.queue} yet; the jobs wait for one (start it with: netc worker --queue ${options.queue})\n`);
  return probe.withSlots(Math.max(1, connected));
}
