// `netc worker --queue redis://HOST:PORT [--backend B] [--device I]`: one process serving shard jobs of
// `netc train --queue` runs, on any machine that reaches Redis. It logs each job; SIGTERM or Ctrl-C
// stops it after the current job, so no job is lost (an unfinished one would go to another worker).
import { chooseBackend } from './backend-option.js';
import { QueueError } from '../scale/queue-error.js';
import type { BackendName } from '../runtime/backend.js';
import { ExitCode, type Io } from './io.js';

export interface WorkerOptions {
  queue: string;
  backend: BackendName | 'auto';
  device?: number;
}

export async function workerCommand(options: WorkerOptions, io: Io): Promise<number> {
  // one process per GPU: the device is chosen before the backend loads
  if (options.device !== undefined) process.env.CUDA_VISIBLE_DEVICES = String(options.device);
  const chosen = await chooseBackend(options.backend, io);
  if (!chosen) return ExitCode.errors;
  const log = (line: string) => io.err(`netc worker: ${line}\n`);
  let server;
  try {
    // a job's lock is renewed between training steps; a worker silent this long is taken for dead
    const lockMs = Number(process.env.NETC_WORKER_LOCK_MS ?? 30_000);
    const { serveQueue } = await import('../scale/queue.js');
    server = await serveQueue(options.queue, { tf: chosen.tf, lockMs, log });
  } catch (e) {
    if (!(e instanceof QueueError)) throw e;
    io.err(`netc: ${e.message}\n`);
    return ExitCode.errors;
  }
  log(`serving ${options.queue} on ${chosen.name} (pid ${process.pid}); SIGTERM or Ctrl-C stops after the current job`);
  const stop = () => {
    log('stopping after the current job');
    void server.stop();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await server.done;
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  log('stopped');
  return ExitCode.ok;
}
