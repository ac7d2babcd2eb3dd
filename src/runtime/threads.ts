// Worker threads for the generated step (`netc train --threads N`): one process, N - 1 workers beside the
// main thread, each running the ranged variant of the step's module (StepConfig.ranged) on one shared
// WebAssembly.Memory for a contiguous range of members. Members without shared layers are independent, so
// each range computes what one thread computes for it, bit for bit. The main thread keeps a synchronous API:
// it writes each worker's job into the worker's control words and wakes it (Atomics.notify), runs its own
// range, then waits (Atomics.wait) for the others. Idle workers block in Atomics.wait, never spin; they are
// unref'd, so they never keep the process alive, and close() ends them. Node's worker_threads is reached
// through process.getBuiltinModule, so that this file loads in a browser too (where no pool is made).

/** Control words of one worker, in an Int32Array on a SharedArrayBuffer. */
const SEQ = 0; // the job's number, moved on by the main thread for each job (-1: quit)
const DONE = 1; // the number of the job the worker finished last
const MODULE = 2; // the id of the module the job runs
const RESULT = 3; // steps()'s result, or -1 where the call failed
const ARGS = 4; // the seven arguments of steps(records, count, n, recordBytes, flags, first, end)
const WORDS = ARGS + 7;

/**
 * The worker's code, evaluated as a script (no file to find after a build, or under a test runner). It
 * instantiates each module it is handed (through its port, read synchronously) on the shared memory once.
 */
const WORKER_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { control, memory, port } = workerData;
const c = new Int32Array(control);
const steps = new Map();
let seen = 0;
for (;;) {
  Atomics.wait(c, ${SEQ}, seen);
  seen = Atomics.load(c, ${SEQ});
  if (seen < 0) break;
  let result = -1;
  try {
    const id = c[${MODULE}];
    while (!steps.has(id)) {
      const got = receiveMessageOnPort(port);
      if (got) steps.set(got.message.id, new WebAssembly.Instance(got.message.module, { env: { memory } }).exports.steps);
      else Atomics.wait(c, ${WORDS}, 0, 1);
    }
    const a = c.slice(${ARGS}, ${WORDS});
    result = steps.get(id)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  } catch (e) {
    result = -1;
  }
  c[${RESULT}] = result;
  Atomics.store(c, ${DONE}, seen);
  Atomics.notify(c, ${DONE});
}
`;

interface WorkerThreads {
  Worker: new (source: string, options: { eval: true; workerData: unknown; transferList: unknown[] }) => { unref(): void; terminate(): Promise<number> };
  MessageChannel: new () => { port1: { postMessage(m: unknown): void; close(): void }; port2: unknown };
}

interface Helper {
  worker: { unref(): void; terminate(): Promise<number> };
  control: Int32Array;
  port: { postMessage(m: unknown): void; close(): void };
  /** the modules this worker has been handed, by id */
  posted: Set<number>;
  seq: number;
}

/** One steps() call: its seven arguments (records, count, n, recordBytes, flags, first, end). */
export type StepsArgs = [number, number, number, number, number, number, number];

/** WebAssembly pages: 64 KiB each. */
const PAGE = 65536;

/** The threads of one process, and the shared memory they run the step on. */
export class ThreadPool {
  /** the memory every thread's instance imports: netc's own, shared */
  readonly memory: WebAssembly.Memory;
  private readonly helpers: Helper[] = [];
  private readonly ids = new Map<WebAssembly.Module, number>();
  private readonly own = new Map<WebAssembly.Module, (...args: StepsArgs) => number>();
  private closed = false;
  /** the population whose parameters the shared memory holds after the last call (threaded-steps.ts's Residence) */
  holder?: object;

  /** `threads`: the most threads a call uses, the main thread among them */
  constructor(readonly threads: number) {
    this.memory = new WebAssembly.Memory({ initial: 16, maximum: PAGE, shared: true } as WebAssembly.MemoryDescriptor);
  }

  /** Whether worker threads can be made here (Node); elsewhere every call runs on the main thread. */
  static available(): boolean {
    return workerThreads() !== undefined;
  }

  /** Grows the shared memory to at least `bytes`. */
  reserve(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
  }

  /**
   * Runs steps() of `module` (the ranged variant, compiled for a shared memory) once per job, job 0 on
   * this thread and job t on worker t - 1, all at once; returns each job's result.
   */
  run(module: WebAssembly.Module, jobs: StepsArgs[]): number[] {
    if (this.closed) throw new Error('internal error: the thread pool is closed');
    if (jobs.length > this.threads) throw new Error(`internal error: ${jobs.length} jobs for ${this.threads} threads`);
    const id = this.idOf(module);
    for (let t = 1; t < jobs.length; t++) this.start(this.helper(t - 1), module, id, jobs[t]);
    const results = [this.ownSteps(module)(...jobs[0])];
    for (let t = 1; t < jobs.length; t++) results.push(this.finish(this.helper(t - 1)));
    if (results.some((r) => r < 0)) throw new Error('internal error: a thread of the generated step failed');
    if (jobs.length > 1) calls++;
    return results;
  }

  /** Ends the workers; the pool runs nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const h of this.helpers) {
      Atomics.store(h.control, SEQ, -1);
      Atomics.notify(h.control, SEQ);
      h.port.close();
      void h.worker.terminate();
    }
    this.helpers.length = 0;
  }

  private idOf(module: WebAssembly.Module): number {
    let id = this.ids.get(module);
    if (id === undefined) this.ids.set(module, (id = this.ids.size + 1));
    return id;
  }

  /** This thread's instance of the module on the shared memory. */
  private ownSteps(module: WebAssembly.Module): (...args: StepsArgs) => number {
    let steps = this.own.get(module);
    if (!steps) {
      steps = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports.steps as (...args: StepsArgs) => number;
      this.own.set(module, steps);
    }
    return steps;
  }

  /** Worker i, started on first use. */
  private helper(i: number): Helper {
    while (this.helpers.length <= i) {
      const wt = workerThreads()!;
      const control = new Int32Array(new SharedArrayBuffer((WORDS + 1) * 4));
      const { port1, port2 } = new wt.MessageChannel();
      const worker = new wt.Worker(WORKER_SOURCE, { eval: true, workerData: { control: control.buffer, memory: this.memory, port: port2 }, transferList: [port2] });
      worker.unref();
      this.helpers.push({ worker, control, port: port1, posted: new Set(), seq: 0 });
    }
    return this.helpers[i];
  }

  /** Hands worker h its job and wakes it. */
  private start(h: Helper, module: WebAssembly.Module, id: number, args: StepsArgs): void {
    if (!h.posted.has(id)) {
      h.port.postMessage({ id, module });
      h.posted.add(id);
    }
    h.control[MODULE] = id;
    h.control.set(args, ARGS);
    h.seq++;
    Atomics.store(h.control, SEQ, h.seq);
    Atomics.notify(h.control, SEQ);
  }

  /** Waits for worker h's job to finish; its result. */
  private finish(h: Helper): number {
    for (;;) {
      const done = Atomics.load(h.control, DONE);
      if (done === h.seq) return h.control[RESULT];
      Atomics.wait(h.control, DONE, done);
    }
  }
}

/** node:worker_threads where the runtime has it (Node), else undefined. */
function workerThreads(): WorkerThreads | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?(name: string): unknown } }).process;
  return proc?.getBuiltinModule?.('node:worker_threads') as WorkerThreads | undefined;
}

/** How many calls of this process ran on more than one thread (the tests ask, to know the threads ran). */
let calls = 0;
export const threadedCalls = (): number => calls;

/** The pools of this process, by thread count: made once, reused by every population and run, closed at exit. */
const pools = new Map<number, ThreadPool>();

/** The process's pool of `threads` threads (at least 2), made on first ask. */
export function threadPool(threads: number): ThreadPool {
  let pool = pools.get(threads);
  if (!pool) pools.set(threads, (pool = new ThreadPool(threads)));
  return pool;
}

/** Ends every pool's workers (a run's end; they would not keep the process alive anyway). */
export function closeThreadPools(): void {
  for (const pool of pools.values()) pool.close();
  pools.clear();
}

