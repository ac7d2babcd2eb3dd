// The transport of `--queue redis://HOST:PORT`: shard jobs go through a BullMQ queue on Redis, and
// `netc worker --queue ...` processes on any machine serve them. Nothing needs a shared filesystem: the
// run's context (model, data) and each job's input and output are binary blobs in Redis (v8
// serialization, typed arrays as they are), named in the job's data and expiring after a day. A worker
// killed mid-job leaves its job to BullMQ's stalled-job check, which hands it to another worker; the
// job's input blob is unchanged, so the result is too. A job that vanished (Redis restarted without
// persistence) is submitted again.
import { randomUUID } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { Job, Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { TF } from '../kernels/tf.js';
import { runShardJob, type RunContext, type ShardJob, type ShardResult } from './shard-job.js';
import type { Transport } from './transport.js';
import { plural } from '../util/plural.js';
import { DEFAULT_UNREACHABLE_SECONDS, QueueError } from './queue-error.js';

const QUEUE = 'netc-shards';
const TTL_SECONDS = 24 * 3600;

interface JobData {
  ctx: string;
  input: string;
  /** for the worker's log */
  summary: string;
}

const ctxKey = (id: string) => `netc:ctx:${id}`;
const VANISHED = 'vanished';
const outputOf = (input: string) => input.replace(/:in$/, ':out');

/** A connection that fails fast with a clear message when Redis is not there. */
export async function connect(url: string, what: string): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true, retryStrategy: (times) => Math.min(times * 200, 2000) });
  let last = '';
  redis.on('error', (e: Error) => void (last = e.message));
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new QueueError(`cannot reach Redis at ${url} (${what}): ${last || 'no answer in 5 s'}`)), 5000).unref());
  try {
    await Promise.race([redis.connect().then(() => redis.ping()), timeout]);
  } catch (e) {
    redis.disconnect();
    throw e instanceof QueueError ? e : new QueueError(`cannot reach Redis at ${url} (${what}): ${(e as Error).message}`);
  }
  return redis;
}

/** A one-line description of a job, for the worker's log. */
function describeJob(job: ShardJob): string {
  const ids = job.memberIds;
  const members = `${ids.length} member${ids.length === 1 ? '' : 's'} (${ids[0]}..${ids[ids.length - 1]})`;
  return job.kind === 'train' ? `train ${members}, batches ${job.from}..${job.to - 1} of epoch ${job.epoch + 1} from step ${job.step}` : `evaluate ${members} on ${job.dataset}`;
}

/** How a coordinator waits on its jobs: a line every `everySeconds` of waiting, and how long Redis may stay unreachable. */
export interface QueueWatch {
  log(line: string): void;
  /** Redis unreachable this long (seconds) while jobs are waited for stops the run with a QueueError */
  unreachableSeconds: number;
  /** a line after this many seconds of waiting, and again each time as many pass (default 10) */
  everySeconds?: number;
}

export class QueueTransport implements Transport {
  name: string;
  private ctx?: RunContext;
  private watchWith: QueueWatch = { log: () => {}, unreachableSeconds: DEFAULT_UNREACHABLE_SECONDS };
  /** the last connection error Redis gave, for the waiting lines */
  private lastError = '';
  private constructor(
    private readonly url: string,
    public slots: number,
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly eventsRedis: Redis,
  ) {
    this.name = `queue ${url}`;
    redis.on('error', (e: Error) => void (this.lastError = e.message));
    // a lost Redis is said by the waiting lines and ended by the watch: BullMQ's own reports of it are not errors of their own
    queue.on('error', () => {});
    events.on('error', () => {});
    eventsRedis.on('error', () => {});
  }

  /** `slots`: how many shards to cut the population into (the workers expected to serve it). */
  static async create(url: string, slots: number): Promise<QueueTransport> {
    const redis = await connect(url, 'the coordinator');
    const queue = new Queue(QUEUE, { connection: redis });
    const eventsRedis = redis.duplicate();
    const events = new QueueEvents(QUEUE, { connection: eventsRedis });
    await events.waitUntilReady();
    return new QueueTransport(url, slots, redis, queue, events, eventsRedis);
  }

  /** How many `netc worker` processes are connected to the queue now. */
  async workerCount(): Promise<number> {
    return this.queue.getWorkersCount();
  }

  /** This transport, cutting the population into `slots` shards. */
  withSlots(slots: number): this {
    this.slots = slots;
    this.name = `queue ${this.url}, ${slots} shard${slots === 1 ? '' : 's'}`;
    return this;
  }

  /** Where the waiting lines go, and how long Redis may stay unreachable. */
  watch(watch: QueueWatch): this {
    this.watchWith = watch;
    return this;
  }

  async open(ctx: RunContext): Promise<void> {
    this.ctx = ctx;
    await this.redis.set(ctxKey(ctx.id), serialize(ctx), 'EX', TTL_SECONDS);
  }

  /**
   * Runs the jobs and waits for them, saying every 10 s what it waits for (Redis unreachable; or jobs not
   * done yet, where a killed worker's job waits for the stalled-job check); a Redis unreachable for longer
   * than the watch allows ends the wait with a QueueError.
   */
  async run(jobs: ShardJob[]): Promise<ShardResult[]> {
    let finished = 0;
    const all = Promise.all(jobs.map((job) => this.runOne(job).then((r) => (finished++, r))));
    // after the watch gives up, the jobs' own waits end in errors when the connections close: nobody waits for them
    all.catch(() => {});
    const watch = this.waitWatch(jobs.length, () => finished);
    try {
      return await Promise.race([all, watch.gaveUp]);
    } finally {
      watch.stop();
    }
  }

  private waitWatch(total: number, finished: () => number): { gaveUp: Promise<never>; stop(): void } {
    const { log, unreachableSeconds, everySeconds = 10 } = this.watchWith;
    const started = Date.now();
    let lastLine = started;
    let downSince: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        const now = Date.now();
        downSince = this.redis.status === 'ready' ? undefined : (downSince ?? now);
        const down = downSince === undefined ? 0 : (now - downSince) / 1000;
        const why = this.lastError ? ` (${this.lastError})` : '';
        if (downSince !== undefined && down >= unreachableSeconds) {
          reject(new QueueError(`lost Redis at ${this.url}: unreachable for ${Math.round(down)} s${why}, longer than --queue-timeout ${unreachableSeconds}`));
          return;
        }
        if (now - lastLine < everySeconds * 1000) return;
        lastLine = now;
        const waiting = `netc: waiting for ${total - finished()} of ${plural(total, 'shard job')} through ${this.url} for ${Math.round((now - started) / 1000)} s`;
        if (downSince !== undefined) log(`${waiting}: Redis unreachable for ${Math.round(down)} s${why}; the run stops after ${unreachableSeconds} s of it\n`);
        else log(`${waiting} (a job whose worker died waits for the stalled-job check, one or two worker lock periods)\n`);
      }, 250);
    });
    gaveUp.catch(() => {});
    return { gaveUp, stop: () => clearInterval(timer) };
  }

  private async submit(job: ShardJob, input: string): Promise<Job> {
    // a Redis that restarted has lost the context too
    if (!(await this.redis.exists(ctxKey(this.ctx!.id)))) await this.redis.set(ctxKey(this.ctx!.id), serialize(this.ctx), 'EX', TTL_SECONDS);
    await this.redis.set(input, serialize(job), 'EX', TTL_SECONDS);
    const data: JobData = { ctx: this.ctx!.id, input, summary: describeJob(job) };
    return this.queue.add('shard', data, { removeOnComplete: true, removeOnFail: true, attempts: 3 });
  }

  private async runOne(job: ShardJob): Promise<ShardResult> {
    const input = `netc:job:${randomUUID()}:in`;
    let submitted = await this.submit(job, input);
    for (;;) {
      let output = await this.finished(submitted);
      // gone from the queue: it completed (and was removed) unseen, or Redis lost it and it must run again
      if (output === undefined && (await this.redis.exists(outputOf(input)))) output = outputOf(input);
      if (output === undefined) {
        submitted = await this.submit(job, input);
        continue;
      }
      const blob = await this.redis.getBuffer(output);
      await this.redis.del(input, output);
      if (!blob) throw new QueueError(`the result of a shard job (${output}) is missing from Redis`);
      return deserialize(blob) as ShardResult;
    }
  }

  /** The job's output key once it completes; undefined when the job has vanished from Redis. */
  private async finished(job: Job): Promise<string | undefined> {
    let settled = false;
    // QueueEvents may miss a job whose Redis restarted: look at it every second too
    const watch = (async () => {
      while (!settled) {
        await new Promise((r) => setTimeout(r, 1000));
        if (settled) return undefined;
        const now = await Job.fromId(this.queue, job.id!);
        if (!now) return VANISHED;
        if (now.returnvalue) return now.returnvalue as string;
      }
      return undefined;
    })();
    try {
      const r = await Promise.race([job.waitUntilFinished(this.events) as Promise<string>, watch]);
      return r === VANISHED ? undefined : r;
    } catch (e) {
      // a job that completed and was removed before the wait looked at it (or that Redis lost) is not a
      // failure: the caller finds its output, or submits it again
      if (/Missing key for job/.test((e as Error).message)) return undefined;
      throw new QueueError(`a shard job failed on a worker: ${(e as Error).message}`);
    } finally {
      settled = true;
    }
  }

  /** Closes the queue; a Redis that is gone is not waited for (BullMQ's close would wait for it). */
  async close(): Promise<void> {
    const gone = this.redis.status !== 'ready';
    const closing = Promise.all([this.events.close(), this.queue.close()]).catch(() => {});
    if (!gone) await closing;
    this.eventsRedis.disconnect();
    this.redis.disconnect();
  }
}

export interface ServeOptions {
  tf: TF;
  /** how long a job's lock lasts without renewal: a worker silent this long is taken for dead */
  lockMs?: number;
  log(line: string): void;
}

/** `netc worker`: serves shard jobs from the queue until stop() (SIGTERM), finishing the current job first. */
export async function serveQueue(url: string, options: ServeOptions): Promise<{ stop(): Promise<void>; done: Promise<void> }> {
  const redis = await connect(url, 'the worker');
  const contexts = new Map<string, RunContext>();
  const context = async (id: string) => {
    if (!contexts.has(id)) {
      const blob = await redis.getBuffer(ctxKey(id));
      if (!blob) throw new Error(`the run context ${id} is not in Redis`);
      // a worker serves one run at a time in practice; keep the last two
      if (contexts.size >= 2) contexts.delete(contexts.keys().next().value!);
      contexts.set(id, deserialize(blob) as RunContext);
    }
    return contexts.get(id)!;
  };
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  // BullMQ leaves connections it was given open on close(): this one is closed on stop()
  const workerRedis = redis.duplicate();
  const worker = new Worker<JobData, string>(
    QUEUE,
    async (job) => {
      const started = performance.now();
      // a run's first job fetches the context (megabytes of data) too: both transfers at once
      const [ctx, blob] = await Promise.all([context(job.data.ctx), redis.getBuffer(job.data.input)]);
      if (!blob) throw new Error(`the job's input (${job.data.input}) is not in Redis`);
      const result = await runShardJob(options.tf, ctx, deserialize(blob) as ShardJob);
      const output = outputOf(job.data.input);
      await redis.set(output, serialize(result), 'EX', TTL_SECONDS);
      options.log(`job ${job.id}: ${job.data.summary} in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      return output;
    },
    // the stalled-job check runs as often as a lock lasts, so a killed worker's job moves on within two locks
    { connection: workerRedis, concurrency: 1, lockDuration: options.lockMs ?? 30_000, stalledInterval: options.lockMs ?? 30_000, maxStalledCount: 10 },
  );
  worker.on('failed', (job, e) => options.log(`job ${job?.id}: failed: ${e.message}`));
  await worker.waitUntilReady();
  return {
    done,
    stop: async () => {
      await worker.close();
      workerRedis.disconnect();
      redis.disconnect();
      finish();
    },
  };
}
