// A shard job: some members of a population, their state, and an interval of batches to train them on
// (or a dataset to evaluate them on). The coordinator (the trainer) cuts the population into shards at
// each interval and hands the jobs to a transport: in this process one after another (waves), to worker
// processes on this machine, or through a BullMQ queue to workers anywhere. A job carries everything a
// member's arithmetic depends on — its id (which names its random streams), its state, its
// hyperparameters, the global step — and nothing about the other members, so whichever worker runs it,
// beside whichever members, the result is the same, bit for bit.
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { ModelIR } from '../ir/model-ir.js';
import { batchRanges, epochOrder, gatherBatch, labelEncoding } from '../data/batches.js';
import type { Dataset } from '../data/dataset.js';
import { losses as lossSpecs } from '../vocabulary/losses.js';
import { Population, type PopulationSpec } from '../runtime/population.js';
import { planStep, type StepPlan } from '../runtime/fused-step.js';
import { StepCode } from '../step/step-code.js';
import type { TF, Tensor } from '../kernels/tf.js';
import { MemberData } from '../runtime/member-data.js';
import type { MemberSplit } from '../vocabulary/splits.js';

/** What every job of one run shares: sent to a worker once, then named by `id`. */
export interface RunContext {
  /** names this context in a worker's cache (a hash of the run and the attempt) */
  id: string;
  /** the netc version that made it: a worker of another version refuses the job */
  version: string;
  model: ModelIR;
  ensemble: EnsembleIR;
  seed: number;
  optimizer: string;
  loss: { name: string; args: Record<string, unknown> };
  batch: number;
  shuffle: boolean;
  /** the metrics computed besides the loss (accuracy, mse, mae) */
  metrics: string[];
  train: Dataset;
  validation?: Dataset;
  /**
   * members on data of their own (`split:`): a member's examples are a function of (split, seed, its id),
   * recomputed here from the training set, so a job carries no more than without one
   */
  split?: MemberSplit;
  /** how the shards' steps run (PopulationSpec.engine) */
  engine?: PopulationSpec['engine'];
}

/** Members' canonical state (Population.exportState's form, [n, ...shape] member after member). */
export interface ShardState {
  memberIds: number[];
  state: Map<string, Float32Array>;
  accBeta1: number[];
  accBeta2: number[];
}

export interface TrainJob extends ShardState {
  kind: 'train';
  context: string;
  /** each member's hyperparameters, by key, in memberIds order */
  hyper: Record<string, number>[];
  /** the global step at `from` (it names the dropout streams) */
  step: number;
  epoch: number;
  /** batches [from, to) of the epoch */
  from: number;
  to: number;
  /** train in waves of at most this many members on the device */
  resident?: number;
  /** the lr_schedule's factor for each member (memberIds order) in steps step, step + 1, ... (absent: lr is constant) */
  lrFactors?: number[][];
}

export interface EvaluateJob extends ShardState {
  kind: 'evaluate';
  context: string;
  hyper: Record<string, number>[];
  step: number;
  dataset: 'train' | 'validation';
}

export type ShardJob = TrainJob | EvaluateJob;

export interface TrainResult extends ShardState {
  kind: 'train';
  /** batches run: to - from, or fewer when a member's loss went non-finite (the job stops after that batch) */
  ran: number;
  /** members whose loss went non-finite in the last batch run */
  diverged: number[];
  /** per batch run: its size, each member's loss and each member's value of every metric of the context */
  batches: { size: number; loss: Float32Array; metrics: Record<string, Float32Array>; rows?: Int32Array }[];
}

export interface EvaluateResult {
  kind: 'evaluate';
  memberIds: number[];
  /** each member's loss and metrics, by name */
  metrics: Record<string, number[]>;
}

export type ShardResult = TrainResult | EvaluateResult;

/** Runs a job on `tf` (the worker's backend). */
export async function runShardJob(tf: TF, ctx: RunContext, job: ShardJob): Promise<ShardResult> {
  if (job.kind === 'evaluate') return evaluateShard(tf, ctx, job);
  const waves = job.resident && job.resident < job.memberIds.length ? job.resident : job.memberIds.length;
  if (waves === job.memberIds.length) return trainShard(tf, ctx, job);
  // waves inside the worker: each runs the interval, stopping where the first divergence did
  let to = job.to;
  let parts: TrainResult[] = [];
  for (let again = true; again; ) {
    parts = [];
    for (let i = 0; i < job.memberIds.length; i += waves) {
      const r = await trainShard(tf, ctx, { ...job, ...sliceState(job, job.memberIds.slice(i, i + waves)), to });
      parts.push(r);
      to = Math.min(to, job.from + r.ran);
    }
    // a wave that ran past a later wave's divergence runs again, up to it
    again = parts.some((p) => job.from + p.ran > to);
  }
  return mergeTrainResults(parts);
}

/**
 * The run's step plan in this process, made at its first job and kept while the context is: every job of the run
 * (each wave of --resident, each interval) then steps on code generated and compiled once.
 */
const plans = new WeakMap<RunContext, StepPlan>();
function planOf(tf: TF, ctx: RunContext): StepPlan {
  let plan = plans.get(ctx);
  if (!plan) {
    plan = planStep(tf, ctx.engine, new StepCode({ ensemble: ctx.ensemble, optimizer: ctx.optimizer, loss: ctx.loss, metrics: [] }));
    plans.set(ctx, plan);
  }
  return plan;
}

/** A population of the job's members holding the job's state. */
function populationOf(tf: TF, ctx: RunContext, job: ShardState & { hyper: Record<string, number>[]; step: number; lrFactors?: number[][] }): Population {
  const at = new Map(job.memberIds.map((id, m) => [id, m]));
  const factors = job.lrFactors;
  const spec: PopulationSpec = {
    tf,
    ensemble: { ...ctx.ensemble, members: job.memberIds.length },
    memberIds: job.memberIds,
    seed: ctx.seed,
    optimizer: ctx.optimizer,
    loss: ctx.loss,
    hyper: (key, id) => job.hyper[at.get(id)!][key],
    initial: (id) => memberRows(job, at.get(id)!),
    ...(factors ? { lrFactor: (id: number, t: number) => factors[at.get(id)!][t - job.step] } : {}),
    plan: planOf(tf, ctx),
  };
  const pop = new Population(spec);
  pop.importState(job.state);
  pop.state.accBeta1 = [...job.accBeta1];
  pop.state.accBeta2 = [...job.accBeta2];
  pop.stepsTaken = job.step;
  return pop;
}

/** Builds batches of a dataset as tensors, in the encoding the run's loss wants. */
export function batcher(tf: TF, ctx: Pick<RunContext, 'model' | 'loss' | 'train'>) {
  const input = ctx.model.ops[0].shape;
  const gather = hostBatcher(ctx);
  return (ds: Dataset, order: Int32Array, start: number, end: number) => {
    const b = gather(ds, order, start, end);
    return { x: tf.tensor(b.x, [b.size, ...input]), y: tf.tensor(b.y, [b.size, b.yWidth]), size: b.size };
  };
}

/** batcher()'s batches as arrays on the host, for a population that takes them so (Population.hostSteps). */
export function hostBatcher(ctx: Pick<RunContext, 'loss' | 'train'>) {
  const expects = lossSpecs.find((l) => l.name === ctx.loss.name)!.expects;
  const encoding = labelEncoding(expects, ctx.train.labels);
  const classes = ctx.train.labels.kind === 'classes' ? ctx.train.labels.classes : 0;
  return (ds: Dataset, order: Int32Array, start: number, end: number) => gatherBatch(ds, order, start, end, encoding, classes);
}

/** How long a shard trains before it lets the event loop run (a queue worker's lock renewals), in ms. */
const YIELD_MS = 20;

/** One step on tensors, its values read back. */
async function tensorStep(tf: TF, pop: Population, b: { x: Tensor; y: Tensor; size: number; rows?: Int32Array }, names: readonly string[]): Promise<TrainResult['batches'][number]> {
  let values: Record<string, Tensor> = {};
  const losses = pop.step({ kind: 'tensors', x: b.x, y: b.y, metrics: { names, take: (v) => (values = v) }, rows: b.rows });
  const loss = (await losses.data()) as Float32Array;
  const metrics: Record<string, Float32Array> = {};
  for (const name of names) metrics[name] = (await values[name].data()) as Float32Array;
  tf.dispose([b.x, b.y, losses, ...Object.values(values)]);
  return { size: b.size, loss, metrics, ...(b.rows ? { rows: b.rows } : {}) };
}

/** One step of the generated step on a batch from the host. */
function hostStep(pop: Population, b: { x: Float32Array; y: Float32Array; size: number }, names: readonly string[]): TrainResult['batches'][number] {
  const { loss, ...metrics } = pop.step({ kind: 'host', x: b.x, y: b.y, size: b.size, names });
  return { size: b.size, loss, metrics };
}

async function trainShard(tf: TF, ctx: RunContext, job: TrainJob): Promise<TrainResult> {
  const pop = populationOf(tf, ctx, job);
  const batch = batcher(tf, ctx);
  const own = memberData(tf, ctx);
  const ranges = own?.ranges ?? batchRanges(ctx.train.count, ctx.batch);
  const order = own ? new Int32Array(0) : epochOrder(ctx.train.count, ctx.shuffle, ctx.seed, job.epoch);
  const batches: TrainResult['batches'] = [];
  let diverged: number[] = [];
  const gather = hostBatcher(ctx);
  let yieldAt = performance.now() + YIELD_MS;
  for (let b = job.from; b < job.to && !diverged.length; b++) {
    const [s0, s1] = ranges[b];
    const values = own || !pop.hostSteps ? await tensorStep(tf, pop, own ? own.batch(job.memberIds, job.epoch, b) : batch(ctx.train, order, s0, s1), ctx.metrics) : hostStep(pop, gather(ctx.train, order, s0, s1), ctx.metrics);
    batches.push(values);
    diverged = job.memberIds.filter((_, m) => !Number.isFinite(values.loss[m]));
    // a worker serving a queue renews its job's lock between steps: the event loop runs every YIELD_MS
    if (performance.now() >= yieldAt) {
      await new Promise((r) => setImmediate(r));
      yieldAt = performance.now() + YIELD_MS;
    }
  }
  const state = await pop.exportState();
  const result: TrainResult = { kind: 'train', memberIds: job.memberIds, state, accBeta1: pop.state.accBeta1, accBeta2: pop.state.accBeta2, ran: batches.length, diverged, batches };
  pop.dispose();
  own?.dispose();
  return result;
}

async function evaluateShard(tf: TF, ctx: RunContext, job: EvaluateJob): Promise<EvaluateResult> {
  const pop = populationOf(tf, ctx, job);
  const own = memberData(tf, ctx);
  if (own) {
    // each member on its own held-out (or training) examples, as the trainer evaluates them in one process
    const metrics = await own.evaluate(pop, job.dataset, Math.max(ctx.batch, 64), ctx.metrics);
    own.dispose();
    pop.dispose();
    return { kind: 'evaluate', memberIds: job.memberIds, metrics };
  }
  const ds = job.dataset === 'train' ? ctx.train : ctx.validation!;
  const batch = batcher(tf, ctx);
  const order = epochOrder(ds.count, false, 0, 0);
  const names = ['loss', ...ctx.metrics];
  const totals: Record<string, Tensor> = {};
  for (const [start, end] of batchRanges(ds.count, Math.max(ctx.batch, 64))) {
    const { x, y, size } = batch(ds, order, start, end);
    const r = pop.evaluate(x, y, ctx.metrics);
    for (const name of names) {
      const prev = totals[name];
      totals[name] = tf.tidy(() => (prev ? tf.add(prev, tf.mul(r[name], size)) : tf.mul(r[name], size)));
      prev?.dispose();
      r[name].dispose();
    }
    tf.dispose([x, y]);
  }
  const mean = async (t?: Tensor) => (t ? Array.from((await t.data()) as Float32Array, (v) => v / ds.count) : job.memberIds.map(() => NaN));
  const metrics: Record<string, number[]> = {};
  for (const name of names) metrics[name] = await mean(totals[name]);
  const result: EvaluateResult = { kind: 'evaluate', memberIds: job.memberIds, metrics };
  tf.dispose(Object.values(totals));
  pop.dispose();
  return result;
}

/** The members' own batches and held-out sets when the run has a split. */
function memberData(tf: TF, ctx: RunContext): MemberData | undefined {
  if (!ctx.split) return undefined;
  return new MemberData(tf, { split: ctx.split, train: ctx.train, seed: ctx.seed, shuffle: ctx.shuffle, batch: ctx.batch, input: ctx.model.ops[0].shape, loss: ctx.loss });
}

/** Member m's (position) parameters and slots, as initial values by name. */
function memberRows(s: ShardState, m: number): Map<string, Float32Array> {
  const n = s.memberIds.length;
  return new Map([...s.state].map(([name, all]) => [name, all.subarray((m * all.length) / n, ((m + 1) * all.length) / n)]));
}

/** The state of some of a shard's members, in the order of `ids`. */
export function sliceState(s: ShardState & { hyper?: Record<string, number>[]; lrFactors?: number[][] }, ids: number[]): ShardState & { hyper?: Record<string, number>[]; lrFactors?: number[][] } {
  const at = ids.map((id) => s.memberIds.indexOf(id));
  const n = s.memberIds.length;
  const state = new Map<string, Float32Array>();
  for (const [name, all] of s.state) {
    const size = all.length / n;
    const out = new Float32Array(size * ids.length);
    at.forEach((p, m) => out.set(all.subarray(p * size, (p + 1) * size), m * size));
    state.set(name, out);
  }
  const { hyper, lrFactors } = s;
  return {
    memberIds: ids,
    state,
    accBeta1: at.map((p) => s.accBeta1[p]),
    accBeta2: at.map((p) => s.accBeta2[p]),
    ...(hyper ? { hyper: at.map((p) => hyper[p]) } : {}),
    ...(lrFactors ? { lrFactors: at.map((p) => lrFactors[p]) } : {}),
  };
}

/** One result for the members of several, in order; each ran the same batches. */
export function mergeTrainResults(parts: TrainResult[]): TrainResult {
  const ids = parts.flatMap((p) => p.memberIds);
  const state = new Map<string, Float32Array>();
  for (const name of parts[0].state.keys()) {
    const all = parts.map((p) => p.state.get(name)!);
    const out = new Float32Array(all.reduce((n, a) => n + a.length, 0));
    let offset = 0;
    for (const a of all) {
      out.set(a, offset);
      offset += a.length;
    }
    state.set(name, out);
  }
  const ran = parts[0].ran;
  const cat = (pick: (b: TrainResult['batches'][number]) => Float32Array, i: number) => {
    const out = new Float32Array(ids.length);
    let offset = 0;
    for (const a of parts.map((p) => pick(p.batches[i]))) {
      out.set(a, offset);
      offset += a.length;
    }
    return out;
  };
  const names = Object.keys(parts[0].batches[0]?.metrics ?? {});
  const batches = Array.from({ length: ran }, (_, i) => ({
    size: parts[0].batches[i].size,
    loss: cat((b) => b.loss, i),
    metrics: Object.fromEntries(names.map((name) => [name, cat((b) => b.metrics[name], i)])),
  }));
  return {
    kind: 'train',
    memberIds: ids,
    state,
    accBeta1: parts.flatMap((p) => p.accBeta1),
    accBeta2: parts.flatMap((p) => p.accBeta2),
    ran,
    diverged: parts.flatMap((p) => (p.ran === ran ? p.diverged : [])),
    batches,
  };
}
