// --workers and --queue: which transport carries a run's shard jobs. Without either, the population
// trains in this process (in waves with --resident).
import { availableParallelism } from 'node:os';
import type { BackendName } from '../runtime/backend.js';
import { LocalWorkers } from '../scale/local-workers.js';
import { QueueTransport } from '../scale/queue.js';
import type { Transport } from '../scale/transport.js';
import type { Io } from './io.js';

export interface TransportOptions {
  /** worker processes on this machine; 'auto': one per core */
  workers?: number | 'auto';
  /** a BullMQ queue on Redis, redis://HOST:PORT */
  queue?: string;
  /** with queue: how many shards (default: the workers connected when the run starts, at least 1) */
  shards?: number;
}

export async function makeTransport(options: TransportOptions, backend: BackendName, io: Io): Promise<Transport | undefined> {
  if (options.workers !== undefined) {
    const k = options.workers === 'auto' ? availableParallelism() : options.workers;
    return new LocalWorkers(k, backend);
  }
  if (options.queue === undefined) return undefined;
  const probe = await QueueTransport.create(options.queue, 1);
  const connected = await probe.workerCount();
  if (options.shards !== undefined) return probe.withSlots(options.shards);
  if (!connected) io.err(`netc: no worker is serving ${options.queue} yet; the jobs wait for one (start it with: netc worker --queue ${options.queue})\n`);
  return probe.withSlots(Math.max(1, connected));
}
