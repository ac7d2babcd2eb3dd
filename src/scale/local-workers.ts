// The transport of `--workers K`: K child processes on this machine, each with its own TF.js backend
// (TF.js on WebAssembly runs one thread, so K processes use K cores). Jobs go over IPC with Node's
// structured-clone serialization (typed arrays travel as they are). A worker that dies mid-job is
// replaced and its job run again from the job's own input, so the result does not change.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BackendName } from '../runtime/backend.js';
import type { RunContext, ShardJob, ShardResult } from './shard-job.js';
import type { Transport } from './transport.js';

export type ToWorker =
  | { type: 'init'; backend: BackendName; device?: number }
  | { type: 'context'; ctx: RunContext }
  | { type: 'job'; id: number; job: ShardJob };

export type FromWorker = { type: 'ready'; backend: string } | { type: 'result'; id: number; result: ShardResult } | { type: 'error'; id?: number; message: string };

/** A job whose worker died this many times in a row is reported instead of tried again. */
const RETRIES = 3;

export class WorkerError extends Error {
  override name = 'WorkerError';
}

class LocalWorker {
  private child?: ChildProcess;
  private pending?: { id: number; resolve: (r: ShardResult) => void; reject: (e: Error) => void };
  private ready?: Promise<void>;

  constructor(
    private readonly backend: BackendName,
    private readonly device: number | undefined,
    private readonly onExit: () => void,
  ) {}

  /** Starts the process (again) and sends it the context. */
  start(ctx: RunContext): Promise<void> {
    const entry = fileURLToPath(new URL(`./worker-process${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
    // from the sources (tests, tsx) the child needs tsx to load TypeScript; the built package does not
    const execArgv = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
    const child = fork(entry, [], { serialization: 'advanced', execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child = child;
    this.ready = new Promise((resolve, reject) => {
      child.on('message', (m: FromWorker) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'result' && this.pending?.id === m.id) this.settle().resolve(m.result);
        else if (m.type === 'error') {
          const error = new WorkerError(`a worker failed: ${m.message}`);
          if (this.pending) this.settle().reject(error);
          else reject(error);
        }
      });
      const died = (why: string) => {
        if (this.child !== child) return;
        this.child = undefined;
        // a write that failed (EPIPE) may come before the exit: make sure the process is gone
        child.kill('SIGKILL');
        reject(new WorkerExit(`a worker ${why} before it was ready`));
        this.onExit();
        if (this.pending) this.settle().reject(new WorkerExit(`a worker ${why} during a job`));
      };
      this.died = died;
      child.on('exit', (code, signal) => died(`exited (${signal ?? `code ${code}`})`));
      // a message written to a worker that was killed (EPIPE, a closed channel) is that worker's death
      child.on('error', (e: NodeJS.ErrnoException) => died(`could not be written to (${e.code ?? e.message})`));
    });
    this.send({ type: 'init', backend: this.backend, device: this.device });
    this.send({ type: 'context', ctx });
    return this.ready;
  }

  /** What happens when the current process dies (set by start). */
  private died: (why: string) => void = () => {};

  /** Sends a message; a worker that cannot take it (gone, its channel closed) has died. */
  private send(m: ToWorker): void {
    const child = this.child;
    if (!child) {
      if (this.pending) this.settle().reject(new WorkerExit('a worker was gone before a job'));
      return;
    }
    if (!child.connected) return this.died('was gone (its channel closed)');
    child.send(m, (e) => e && this.died(`could not be written to (${(e as NodeJS.ErrnoException).code ?? e.message})`));
  }

  private settle() {
    const p = this.pending!;
    this.pending = undefined;
    return p;
  }

  get alive(): boolean {
    return !!this.child;
  }

  run(id: number, job: ShardJob): Promise<ShardResult> {
    return new Promise((resolve, reject) => {
      this.pending = { id, resolve, reject };
      this.send({ type: 'job', id, job });
    });
  }

  stop(): void {
    const child = this.child;
    this.child = undefined;
    child?.kill();
  }

  pid(): number | undefined {
    return this.child?.pid;
  }
}

class WorkerExit extends WorkerError {}

export class LocalWorkers implements Transport {
  readonly name: string;
  private readonly workers: LocalWorker[];
  private ctx?: RunContext;
  private nextId = 0;

  constructor(
    readonly slots: number,
    backend: BackendName,
    devices?: number[],
  ) {
    this.name = `${slots} local worker${slots === 1 ? '' : 's'}`;
    this.workers = Array.from({ length: slots }, (_, i) => new LocalWorker(backend, devices?.[i % devices.length], () => {}));
  }

  async open(ctx: RunContext): Promise<void> {
    this.ctx = ctx;
    await Promise.all(this.workers.map((w) => this.start(w)));
  }

  /** Starts a worker, again if it dies before it is ready. */
  private async start(w: LocalWorker): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await w.start(this.ctx!);
      } catch (e) {
        if (!(e instanceof WorkerExit) || attempt >= RETRIES) throw e;
      }
    }
  }

  /** The workers' process ids (tests kill one). */
  pids(): (number | undefined)[] {
    return this.workers.map((w) => w.pid());
  }

  async run(jobs: ShardJob[]): Promise<ShardResult[]> {
    const results: ShardResult[] = new Array(jobs.length);
    let next = 0;
    // each worker takes the next job when it is free
    await Promise.all(
      this.workers.map(async (w) => {
        while (next < jobs.length) {
          const i = next++;
          results[i] = await this.runOn(w, jobs[i]);
        }
      }),
    );
    return results;
  }

  private async runOn(w: LocalWorker, job: ShardJob): Promise<ShardResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (!w.alive) await this.start(w);
        return await w.run(this.nextId++, job);
      } catch (e) {
        if (!(e instanceof WorkerExit) || attempt >= RETRIES) throw e;
      }
    }
  }

  async close(): Promise<void> {
    for (const w of this.workers) w.stop();
  }
}
