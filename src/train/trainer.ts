// The training loop: batches from the data, fused steps, per-member metrics per epoch. It reports
// through callbacks and leaves files and printing to the CLI.
import type { EnsembleConfig, Program, TrainConfig } from '../check/program.js';
import { hasSharedParams, type EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { ModelIR } from '../ir/model-ir.js';
import { randomUUID } from 'node:crypto';
import { batchRanges, epochOrder } from '../data/batches.js';
import { StepsAhead } from './steps-ahead.js';
import { envVar } from '../util/env.js';
import type { Dataset, LabelEncoding } from '../data/dataset.js';
import { computedMetrics } from '../vocabulary/losses.js';
import { Population, readsHostMemory, type PopulationSpec } from '../runtime/population.js';
import { canonicalMember, restore, restoreHyperparameters, retiredMembers, type CheckpointManifest, type RetiredMember, type StateSource, type TrainPosition } from './checkpoint.js';
import type { Decisions, Schedule, ScheduleMetric } from './schedules.js';
import { decodeMetrics, encodeMetrics, HostSums, metricsRow, pick, type MemberMetrics } from './member-metrics.js';
import { initMember } from '../kernels/init.js';
import { memberHyperparameters, shownHyperparameters, type HyperTable } from '../runtime/hyper.js';
import { lrPlan, memberLr, type LrPlan } from './lr-schedule.js';
import { BestKept } from './best-weights.js';
import { CopiesSinceMetrics, type CopiedSince } from './copied-since.js';
import type { TF, Tensor } from '../kernels/tf.js';
import { evaluatePopulation } from './evaluate.js';
import { HostStore } from './host-store.js';
import { NETC_VERSION } from '../version.js';
import { InProcess } from '../scale/in-process.js';
import { shards, type Transport } from '../scale/transport.js';
import { MemberData, memberBatches, type MemberBatch } from '../runtime/member-data.js';
import { batcher, hostBatcher, type EvaluateJob, type EvaluateResult, type RunContext, type TrainJob, type TrainResult as ShardTrainResult } from '../scale/shard-job.js';
import { minFiniteLoss, minOf } from '../util/extrema.js';

export interface TrainSetup {
  tf: TF;
  /** the train block, and the ensemble's split (members on their own examples) when it has one */
  program: Pick<Program, 'train'> & { ensemble?: Pick<EnsembleConfig, 'split'> };
  model: ModelIR;
  ensemble: EnsembleIR;
  hyper: HyperTable;
  data: { train: Dataset; validation?: Dataset };
  /** total optimizer steps (from --steps, or epochs times batches per epoch) */
  steps: number;
  seed: number;
  memberIds?: number[];
  /** a compiled module's forward pass and training step (see PopulationSpec.forward and .step) */
  forward?: PopulationSpec['forward'];
  /** how each step runs (default `auto`: the generated fused step where it covers the model) */
  engine?: PopulationSpec['engine'];
  /** the run's step plan (netc train makes it once, for its engine line): every population here takes it */
  plan?: PopulationSpec['plan'];
  step?: PopulationSpec['step'];
  /** resume: the checkpoint to continue from */
  resume?: { manifest: CheckpointManifest; tensors: Map<string, Float32Array> };
  /** call callbacks.checkpoint every this many steps (0: none by steps) */
  checkpointEvery?: number;
  /**
   * call callbacks.checkpoint once this many seconds of wall time have passed since the last one (or the
   * start), at the step where that is noticed; with neither, only at the end and when stopped
   */
  checkpointSeconds?: number;
  /** the clock checkpointSeconds is measured on, in milliseconds (default performance.now; tests pass their own) */
  clock?: () => number;
  /** schedules acting between intervals (PBT, halving, early stopping) */
  schedules?: Schedule[];
  /** keep at most this many members on the device, training the population in waves */
  resident?: number;
  /** train the population in shards through this transport (worker processes, a queue) */
  transport?: Transport;
  /** on the generated step, at most this many steps to a call (StepsAhead); 1 calls it once a step (default 256) */
  stepsPerCall?: number;
}

export interface EpochReport {
  epoch: number;
  step: number;
  /** the active members' ids, in the order of `metrics` */
  members: number[];
  metrics: MemberMetrics[];
  /** each member's learning rate in the epoch's last step (it moves under an lr_schedule) */
  lr: number[];
  /** wall-clock seconds since the previous report (training and validation) */
  seconds: number;
}

/** A change to the population, as events.jsonl records it. */
export interface PopulationEvent {
  step: number;
  event: 'exploit' | 'stop';
  member: number;
  source?: number;
  hyperparameters?: Record<string, number>;
  reason?: string;
}

/** A member diverged where its NaN would reach the others (blockdiag): the run cannot go on. */
export class DivergenceError extends Error {
  override name = 'DivergenceError';
}

export interface Progress {
  step: number;
  steps: number;
  epoch: number;
  epochs: number;
  memberStepsPerSecond: number;
  /** the lowest epoch-average training loss of any member so far (NaN before the first epoch ends) */
  bestLoss: number;
}

export interface TrainCallbacks {
  /** where training stands: at most every onStepEveryMs, and after the last step */
  onStep?(p: Progress): void;
  /** the least time between two onStep calls, in milliseconds (default 100; 0: after every step) */
  onStepEveryMs?: number;
  onEpoch?(r: EpochReport): void;
  /** checked after every step: true stops training there (Ctrl-C), keeping what was trained */
  shouldStop?(): boolean;
  /** write a checkpoint of the population at this position (as checkpointEvery and checkpointSeconds ask, and last) */
  checkpoint?(population: Population | StateSource, position: TrainPosition, retired: RetiredMember[], extra?: Map<string, Float32Array>): Promise<void>;
  /** a member stopped, or copied another (PBT) */
  onEvent?(e: PopulationEvent): void;
}

export interface TrainResult {
  /** the members still training at the end (all of them, resident, when trained in waves: made on first use) */
  readonly population: Population;
  /** disposes the population, where it was made */
  dispose(): void;
  /** every member's id, in the original order of `final` */
  memberIds: number[];
  /** members that stopped early, with their parameters */
  retired: RetiredMember[];
  /** where training stopped: the end, or where shouldStop() stopped it */
  position: TrainPosition;
  steps: number;
  seconds: number;
  memberStepsPerSecond: number;
  /** every member's last epoch metrics, in memberIds order (the untrained population's, after --steps 0) */
  final: MemberMetrics[];
  /** every member's learning rate in the last step it trained (its first, untrained), in memberIds order */
  lr: number[];
  /** the members PBT copied into after their last metrics, by id: what those metrics were measured under */
  copied: ReadonlyMap<number, CopiedSince>;
}

/** Optimizer steps per epoch: batches of the training set, or of each member's epoch under a split (src/data/member-splits.ts). */
export function batchesPerEpoch(setup: Pick<TrainSetup, 'program' | 'data'>): number {
  const split = setup.program.ensemble?.split;
  return split ? memberBatches(split, setup.data.train.count, setup.program.train!.batch) : batchRanges(setup.data.train.count, setup.program.train!.batch).length;
}

export async function train(setup: TrainSetup, callbacks: TrainCallbacks = {}): Promise<TrainResult> {
  const run = new TrainingRun(setup, callbacks);
  await run.open();
  return run.train();
}

/**
 * One call of train(): what the program and data fix (learning rates, schedules, batches), the members
 * (resident in one population, or kept on the host and trained in shards) and where the run stands.
 */
class TrainingRun {
  private readonly tf: TF;
  private readonly config: TrainConfig;
  private readonly lr: LrPlan;
  private readonly allIds: number[];
  private readonly schedules: Schedule[];
  private readonly extra: string[];
  private readonly names: string[];
  private readonly batch: ReturnType<typeof batcher>;
  private readonly hostBatch: ReturnType<typeof hostBatcher>;
  private readonly own: MemberData | undefined;
  private readonly validates: boolean;
  private readonly ranges: [number, number][];
  private readonly perEpoch: number;
  private readonly epochs: number;
  /** each schedule's period in steps */
  private readonly periods: number[];
  private readonly every: number;
  private readonly checkpointMs: number | undefined;
  private readonly clock: () => number;
  /** whether a step's values are read with dataSync() (see stepValues) */
  private readonly syncReads: boolean;
  private readonly start: TrainPosition;
  private readonly first: number;
  private readonly active: number[];
  private readonly retired: RetiredMember[];
  private readonly sharedLayers: boolean;
  private readonly transport: Transport | undefined;
  private readonly bestKept: BestKept;
  private readonly epochSums: HostSums;
  private readonly scheduleSums: HostSums[];
  private readonly lastMetrics: Map<number, MemberMetrics>;
  private readonly partialMetrics = new Map<number, MemberMetrics>();
  private readonly copies: CopiesSinceMetrics;
  private step: number;
  private epoch: number;
  private next: number;
  private population: Population | undefined;
  private store: HostStore | undefined;
  private context: RunContext | undefined;
  /** the step at which the schedules due there have acted (a checkpoint at the run's last step may precede them) */
  private actedAt: number;
  private best = NaN;
  private stopped = false;
  private trained = 0;
  private started = 0;
  private epochStarted = 0;
  /** on `clock`: when the last checkpoint was written (or training started) */
  private lastCheckpoint = 0;
  /** on performance.now(): when onStep was last called, and when the loop next lets the event loop run */
  private lastReport = -Infinity;
  private yieldAt = 0;
  /** steps trained ahead in one call of the generated step (open() decides whether it applies) */
  private ahead: StepsAhead | undefined;

  constructor(
    private readonly setup: TrainSetup,
    private readonly callbacks: TrainCallbacks,
  ) {
    const { tf, program } = setup;
    const config = (this.config = program.train!);
    this.tf = tf;
    // the learning rate of every member at every step: lr_i * f_i(t) over the run's `steps` (T)
    this.lr = lrPlan(config.lr_schedule, setup.hyper, setup.steps, batchesPerEpoch(setup));
    this.allIds = setup.memberIds ?? Array.from({ length: setup.ensemble.members }, (_, i) => i);
    // plateau acts first at an epoch end, on each member as it trained, so that a PBT exploit after it copies the updated state
    this.schedules = [...(this.lr.schedule ? [this.lr.schedule] : []), ...(setup.schedules ?? [])];
    // the metrics besides the loss: what the train block asks for and what a schedule ranks by
    this.extra = computedMetrics(config.metrics, this.schedules);
    this.names = ['loss', ...this.extra];
    this.batch = batcher(tf, { model: setup.model, loss: config.loss, train: setup.data.train });
    this.hostBatch = hostBatcher({ loss: config.loss, train: setup.data.train });
    // members on data of their own: each member's batches and held-out set come from its own examples
    const split = program.ensemble?.split;
    this.own = split ? new MemberData(tf, { split, train: setup.data.train, seed: setup.seed, shuffle: config.shuffle, batch: config.batch, input: setup.model.ops[0].shape, loss: config.loss }) : undefined;
    this.validates = !!(setup.data.validation || this.own);
    this.ranges = this.own?.ranges ?? batchRanges(setup.data.train.count, config.batch);
    this.perEpoch = this.ranges.length;
    this.epochs = Math.ceil(setup.steps / this.perEpoch);
    this.periods = this.schedules.map((sc) => sc.everySteps(this.perEpoch));
    this.every = setup.checkpointEvery ?? 0;
    this.checkpointMs = setup.checkpointSeconds === undefined ? undefined : setup.checkpointSeconds * 1000;
    this.clock = setup.clock ?? (() => performance.now());
    this.syncReads = readsHostMemory(tf);
    const start = (this.start = setup.resume?.manifest.position ?? { step: 0, epoch: 0, batch: 0 });
    this.step = start.step;
    this.epoch = start.epoch;
    this.next = start.batch;
    this.first = this.step;

    // the members: resident in one population, or kept on the host and trained in shards (waves in this
    // process with `resident`, or jobs for workers through a transport); open() puts them in place
    const resumed = setup.resume;
    if (resumed) restoreHyperparameters(setup.hyper, resumed.manifest);
    this.active = resumed ? [...resumed.manifest.member_ids] : [...this.allIds];
    this.retired = resumed ? retiredMembers(resumed.manifest, resumed.tensors) : [];
    this.sharedLayers = hasSharedParams(setup.ensemble);
    if (this.sharedLayers && (setup.transport || setup.resident !== undefined)) {
      throw new Error("a population with shared layers trains in one process: their parameters have no member axis to cut into shards or waves");
    }
    this.transport = setup.transport ?? (setup.resident !== undefined && setup.resident < this.active.length ? new InProcess(tf) : undefined);
    // early stopping's restore_best: every member's parameters at its best epoch so far
    this.bestKept = resumed ? BestKept.fromCheckpoint(resumed.manifest, resumed.tensors) : new BestKept();

    this.epochSums = new HostSums(start.sums);
    // each schedule ranks by its own interval's sums: two schedules with different intervals never share them
    this.scheduleSums = this.schedules.map((_, i) => new HostSums(start.schedules?.sums[i]));
    // the metrics of each member's last ended epoch; a final partial epoch's are kept apart (a resumed run supersedes them)
    this.lastMetrics = new Map<number, MemberMetrics>(start.metrics?.map(([id, m]) => [id, decodeMetrics(m)]));
    this.copies = new CopiesSinceMetrics(start.copied);
    this.actedAt = start.schedules?.pending ? -1 : this.step;
  }

  /** Puts the members in place (resident, or on the host with the transport open) and the schedules' memories back. */
  async open(): Promise<void> {
    const { setup, config, transport } = this;
    const resumed = setup.resume;
    if (transport) {
      this.store = await HostStore.create((ids) => this.spec(ids), this.active, resumed);
      const split = setup.program.ensemble?.split;
      this.context = { id: randomUUID(), version: NETC_VERSION, model: setup.model, ensemble: setup.ensemble, seed: setup.seed, optimizer: config.optimizer.name, loss: config.loss, batch: config.batch, shuffle: config.shuffle, metrics: this.extra, train: setup.data.train, validation: setup.data.validation, ...(split ? { split } : {}), ...(setup.engine ? { engine: setup.engine } : {}) };
      await transport.open(this.context);
    } else {
      this.population = new Population(this.spec(this.active));
      if (resumed) restore(this.population, resumed.manifest, resumed.tensors);
      this.population.prepareStep(this.ranges.reduce((most, [s0, s1]) => Math.max(most, s1 - s0), 1), this.extra);
      this.ahead = this.stepsAhead(this.population);
    }
    this.start.schedules?.state.forEach((s, i) => s !== undefined && this.schedules[i]?.restore?.(s));
    this.started = performance.now();
    this.epochStarted = this.started;
    this.yieldAt = this.started + YIELD_MS;
    this.lastCheckpoint = this.clock();
  }

  /** Steps trained several to a call, where the generated step can (shared batches, no shared layers or dropout) and stepsPerCall allows. */
  private stepsAhead(pop: Population): StepsAhead | undefined {
    const { setup, config } = this;
    const maxPerCall = setup.stepsPerCall ?? defaultStepsPerCall();
    if (maxPerCall <= 1 || this.own || !pop.hostSteps || pop.hostStepsUncovered) return undefined;
    const train = setup.data.train;
    return new StepsAhead({
      ranges: this.ranges,
      steps: setup.steps,
      order: (epoch) => epochOrder(train.count, config.shuffle, setup.seed, epoch),
      batch: (order, s0, s1) => this.hostBatch(train, order, s0, s1),
      boundary: (s) => this.boundary(s),
      epochEndsRun: this.validates,
      names: this.extra,
      maxPerCall,
    });
  }

  /** The population spec of these members: the whole resident population, or a shard of it. */
  private spec(ids: number[]): PopulationSpec {
    const { tf, setup, config, lr } = this;
    return {
      tf,
      ensemble: { ...setup.ensemble, members: ids.length },
      memberIds: ids,
      seed: setup.seed,
      optimizer: config.optimizer.name,
      loss: config.loss,
      hyper: (key, m) => setup.hyper.value(key, m),
      lrFactor: lr.factor,
      base: (key) => setup.hyper.base(key),
      initial: (m) => initMember(setup.model, setup.seed, m),
      forward: setup.forward,
      step: setup.step,
      engine: setup.engine,
      ...(setup.plan ? { plan: setup.plan } : {}),
    };
  }

  /** The active members' ids, in the order of their state. */
  private get ids(): number[] {
    return this.population?.memberIds ?? this.store!.ids;
  }

  /** The active members' state now: the resident population's, or the host store's. */
  private async memberState() {
    return this.population ? await this.population.exportState() : this.store!.state;
  }

  /** Trains up to the step budget, epoch after epoch, unless stopped; then the summary. */
  async train(): Promise<TrainResult> {
    // the run this resumes ended where schedules were due, before they acted
    if (this.actedAt !== this.step && this.step < this.setup.steps) await this.actOnSchedules();
    while (this.step < this.setup.steps && !this.stopped) await this.runEpoch();
    return this.finish();
  }

  /** The rest of the current epoch, interval by interval, each ending at a boundary. */
  private async runEpoch(): Promise<void> {
    const { setup, config, perEpoch } = this;
    // the shared order of the epoch's examples (members on their own data have their own, in MemberData;
    // steps trained ahead draw each epoch's order themselves, StepsAhead)
    const order = this.own || this.ahead ? new Int32Array(0) : epochOrder(setup.data.train.count, config.shuffle, setup.seed, this.epoch);
    while (this.next < perEpoch && this.step < setup.steps) {
      const to = this.nextBoundary();
      const lost = this.population ? await this.intervalResident(order, to) : await this.intervalShards(to);
      // a loss that clips its predictions (cross-entropy) stays finite over NaN weights: they are looked at too
      const poisoned = (await this.nonFiniteWeights()).filter((id) => !lost.includes(id));
      const shared = (await this.population?.sharedNonFinite()) ?? false;
      if (lost.length || poisoned.length || shared) await this.stopDiverged(lost, poisoned, shared);
      await this.endInterval();
      if (this.stopped) break;
    }
    if (this.next >= perEpoch) {
      this.epoch++;
      this.next = 0;
    }
  }

  /** The batch at which the interval from `next` ends: a step where a schedule acts, a checkpoint is due, the epoch ends, or training does. */
  private nextBoundary(): number {
    const { step, next } = this;
    let to = next + 1;
    while (to < this.perEpoch && step + (to - next) < this.setup.steps && !this.boundary(step + (to - next))) to++;
    return to;
  }

  private boundary(s: number): boolean {
    if (this.every > 0 && s % this.every === 0) return true;
    for (const period of this.periods) if (s > 0 && s % period === 0) return true;
    return false;
  }

  private due(s: number): Schedule[] {
    return s > 0 ? this.schedules.filter((_, i) => s % this.periods[i] === 0) : [];
  }

  /**
   * The resident population trains batches [next, to) one step at a time; returns the members that
   * diverged. A checkpoint due by the clock ends the interval early, at the step where it is noticed.
   */
  private async intervalResident(order: Int32Array, to: number): Promise<number[]> {
    let diverged: number[] = [];
    for (let b = this.next; b < to; b++) {
      const stepped = this.trainBatch(this.population!, b, order);
      diverged = stepped instanceof Promise ? await stepped : stepped;
      this.step++;
      this.next++;
      const now = performance.now();
      this.reportStep(now);
      if (diverged.length) break;
      if (now >= this.yieldAt) await this.yieldToEvents();
      // stopping waits for the steps trained ahead, a call's worth (StepsAhead)
      if (!this.ahead?.pending && this.callbacks.shouldStop?.()) {
        this.stopped = true;
        break;
      }
      if (this.checkpointTimeDue()) break;
    }
    return diverged;
  }

  /** Lets timers, signals (Ctrl-C) and output run, then goes on; the loop does so about every YIELD_MS. */
  private async yieldToEvents(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    this.yieldAt = performance.now() + YIELD_MS;
  }

  /** Whether checkpointSeconds have passed on the clock since the last checkpoint. */
  private checkpointTimeDue(): boolean {
    if (this.ahead?.pending) return false;
    return this.checkpointMs !== undefined && this.clock() - this.lastCheckpoint >= this.checkpointMs;
  }

  /** The shards train batches [next, to) together; returns the members that diverged. */
  private async intervalShards(to: number): Promise<number[]> {
    const r = await this.runShards(this.next, to);
    this.step += r.ran;
    this.next += r.ran;
    // every shard starts the interval at the same step (it names the dropout streams); the store moves on after all of them
    this.store!.step = this.step;
    this.reportStep(performance.now());
    await this.yieldToEvents();
    if (this.callbacks.shouldStop?.()) this.stopped = true;
    return r.diverged;
  }

  /** Where training stands, to onStep: at most every onStepEveryMs, and after the last step. */
  private reportStep(now: number): void {
    const { onStep, onStepEveryMs = 100 } = this.callbacks;
    if (!onStep || (now - this.lastReport < onStepEveryMs && this.step < this.setup.steps)) return;
    this.lastReport = now;
    const rate = this.trained / Math.max(1e-9, (now - this.started) / 1000);
    onStep({ step: this.step, steps: this.setup.steps, epoch: this.epoch + 1, epochs: this.epochs, memberStepsPerSecond: rate, bestLoss: this.best });
  }

  /**
   * One step of a population on batch b of the current epoch, its values added to the sums; the members
   * whose loss went non-finite. Synchronous where the backend reads values synchronously (stepValues).
   */
  private trainBatch(pop: Population, b: number, order: Int32Array): number[] | Promise<number[]> {
    const { tf, extra } = this;
    const [s0, s1] = this.ranges[b];
    // the generated step takes a shared batch from the host and gives its values back as arrays
    if (this.ahead) {
      const { values, size } = this.ahead.next(pop, { step: this.step, epoch: this.epoch, batch: b });
      return this.summed(pop, values, size);
    }
    if (!this.own && pop.hostSteps) {
      const batch = this.hostBatch(this.setup.data.train, order, s0, s1);
      return this.summed(pop, pop.step({ kind: 'host', x: batch.x, y: batch.y, size: batch.size, names: extra }), batch.size);
    }
    const { x, y, size, rows }: MemberBatch = this.own ? this.own.batch(pop.memberIds, this.epoch, b) : this.batch(this.setup.data.train, order, s0, s1);
    let metrics: Record<string, Tensor> = {};
    const losses = pop.step({ kind: 'tensors', x, y, metrics: { names: extra, take: (v) => (metrics = v) }, rows });
    const summed = (values: StepValues): number[] => {
      tf.dispose([x, y, losses, ...Object.values(metrics)]);
      return this.summed(pop, values, size, rows);
    };
    const values = stepValues(losses, metrics, extra, this.syncReads);
    return values instanceof Promise ? values.then(summed) : summed(values);
  }

  /** A step's values into the sums; the members whose loss went non-finite. */
  private summed(pop: Population, values: StepValues, size: number, rows?: Int32Array): number[] {
    this.trained += pop.n;
    this.addToSums(pop.memberIds, values, size, rows);
    const loss = values.loss;
    const diverged: number[] = [];
    for (let m = 0; m < loss.length; m++) if (!Number.isFinite(loss[m])) diverged.push(pop.memberIds[m]);
    return diverged;
  }

  /** A batch's losses and metrics of these members, into the epoch's and every schedule's sums; non-finite losses stay out. */
  private addToSums(ids: readonly number[], values: Record<string, ArrayLike<number>>, size: number, rows?: Int32Array): void {
    this.epochSums.addBatch(ids, values, size, rows);
    for (const sums of this.scheduleSums) sums.addBatch(ids, values, size, rows);
  }

  /** The active members cut into shards: at most `resident` each in this process, one per worker elsewhere. */
  private shardJobs<J>(make: (ids: number[]) => J): J[] {
    const transport = this.transport!;
    return shards(this.store!.ids, transport.slots, transport instanceof InProcess ? (this.setup.resident ?? Infinity) : Infinity).map(make);
  }

  private jobState(ids: number[]) {
    const store = this.store!;
    return { context: this.context!.id, ...store.slice(ids), hyper: ids.map((id) => memberHyperparameters(this.setup.hyper, id)), step: store.step };
  }

  /**
   * Trains every shard for batches [from, to) and returns the members that diverged. A divergence ends the
   * interval at its step, as it does for a resident population: the shards that ran past it run again,
   * from their interval's start, up to there, so the stop is recorded where all-at-once records it.
   */
  private async runShards(from: number, to: number): Promise<{ diverged: number[]; ran: number }> {
    const { lr, transport } = this;
    const store = this.store!;
    const factors = (ids: number[]) => (lr.factor ? { lrFactors: ids.map((id) => Array.from({ length: to - from }, (_, k) => lr.factor!(id, store.step + k))) } : {});
    const jobs: TrainJob[] = this.shardJobs((ids) => ({ kind: 'train', ...this.jobState(ids), epoch: this.epoch, from, to, resident: this.setup.resident, ...factors(ids) }));
    const results = (await transport!.run(jobs)) as ShardTrainResult[];
    const end = minOf(results.map((r) => from + r.ran));
    const again = jobs.map((_, i) => i).filter((i) => from + results[i].ran > end);
    const redone = again.length ? ((await transport!.run(again.map((i) => ({ ...jobs[i], to: end })))) as ShardTrainResult[]) : [];
    again.forEach((i, k) => (results[i] = redone[k]));
    for (const r of results) {
      store.put(r);
      for (const b of r.batches) this.addToSums(r.memberIds, { loss: b.loss, ...b.metrics }, b.size, b.rows);
      this.trained += r.ran * r.memberIds.length;
    }
    return { diverged: results.flatMap((r) => r.diverged), ran: end - from };
  }

  /** Members whose loss went non-finite stop, unless their NaN has reached the others: then the run cannot go on. */
  /** The active members with a NaN or infinite parameter now, by id. */
  private async nonFiniteWeights(): Promise<number[]> {
    // the population is ahead: the call that trained it looked at the weights at this interval's end
    if (this.ahead?.pending) return [];
    const positions = this.population ? await this.population.nonFiniteMembers() : this.store!.nonFiniteMembers();
    return positions.map((m) => this.ids[m]);
  }

  /** Stops the members whose loss (`lost`) or weights (`poisoned`) went non-finite in the interval that ended at this step. */
  private async stopDiverged(lost: number[], poisoned: number[] = [], sharedPoisoned = false): Promise<void> {
    const { step } = this;
    // one member left, and the shared layers it reads went non-finite: it is the one that diverged
    if (sharedPoisoned && this.activeCount() === 1 && !lost.length && !poisoned.length) poisoned = [...this.ids];
    const diverged = [...lost, ...poisoned];
    const what = !poisoned.length ? 'a non-finite loss' : !lost.length ? 'non-finite weights' : 'a non-finite loss or weights';
    // under waves too: the members of a diverged member's wave are poisoned as they would be all at once
    const who = diverged.length ? `member${diverged.length > 1 ? 's' : ''} ${diverged.join(', ')} diverged (${what}) at step ${step}` : `the shared layers' weights went non-finite at step ${step}`;
    if (this.setup.ensemble.lowering === 'blockdiag' && this.activeCount() > diverged.length) {
      throw new DivergenceError(
        `${who}; under the blockdiag lowering a non-finite member spreads to every other (0 x NaN = NaN in the masked matMul), so the population is no longer valid. Use --lowering grouped, which stops a diverged member and leaves the others untouched.`,
      );
    }
    if (this.sharedLayers && this.activeCount() > diverged.length) {
      throw new DivergenceError(
        `${who}; its gradient reached the shared layers, whose one set of weights every member reads, so every member is now non-finite and the population is no longer valid. Lower the learning rates (the shared layers train with the file's), or add clipnorm.`,
      );
    }
    if (sharedPoisoned && this.activeCount() > 1) {
      throw new DivergenceError(
        `${who}; the shared layers, whose one set of weights every member reads, hold a NaN or an infinity, so every member is now non-finite and the population is no longer valid. Lower the learning rates (the shared layers train with the file's), or add clipnorm.`,
      );
    }
    const reason = (member: number) => `diverged: ${lost.includes(member) ? 'a non-finite loss' : 'non-finite weights'} at step ${step}`;
    await this.apply({ stop: diverged.map((member) => ({ member, reason: reason(member) })), exploit: [] });
  }

  private activeCount(): number {
    return this.population?.n ?? this.store!.ids.length;
  }

  /** After an interval: the epoch's report if it ended, the schedules due, a checkpoint due; stops when no member is left. */
  private async endInterval(): Promise<void> {
    const { step, setup } = this;
    // an epoch that ends here is reported before schedules act on it, so every member's last epoch shows
    const epochEnded = this.next >= this.perEpoch || (step >= setup.steps && !this.stopped);
    if (epochEnded) await this.reportEpoch();
    // nothing is left to gain from a schedule acting after the last step; a checkpoint there says they are pending
    if (step < setup.steps) await this.actOnSchedules();
    // one due by the clock waits for the end of an interval (after every step when the population is resident)
    const due = (this.every > 0 && step % this.every === 0) || this.checkpointTimeDue();
    // a run stopped here writes its checkpoint as it finishes
    if (due && step < setup.steps && !this.stopped) await this.checkpoint();
    if (!this.activeCount()) this.stopped = true;
  }

  private async reportEpoch(): Promise<void> {
    const { ids, names, epochSums } = this;
    const ended = this.next >= this.perEpoch;
    const val = this.validates && ids.length ? await this.evaluateMembers('validation') : undefined;
    const metrics = ids.map((id, m) => {
      const mean = epochSums.mean(id, names);
      const row = val ? metricsRow(names, mean, pick(val, m)) : (mean as MemberMetrics);
      (ended ? this.lastMetrics : this.partialMetrics).set(id, row);
      return row;
    });
    // a partial epoch (the step budget ended mid-epoch) keeps its sums: a resumed run continues them
    if (ended) epochSums.clear();
    this.best = minFiniteLoss(metrics, Number.isNaN(this.best) ? Infinity : this.best);
    const now = performance.now();
    const rates = ids.map((id) => memberLr(this.setup.hyper, this.lr, id, this.step - 1));
    this.copies.reported(ids, rates);
    this.callbacks.onEpoch?.({ epoch: this.epoch + 1, step: this.step, members: ids, metrics, lr: rates, seconds: (now - this.epochStarted) / 1000 });
    this.epochStarted = now;
  }

  /** The schedules due at this step act, in the file's order, each on the members the previous left. */
  private async actOnSchedules(): Promise<void> {
    const { step, setup } = this;
    if (this.due(step).length) this.caughtUp('a schedule');
    for (const sc of this.due(step)) {
      const ids = this.ids;
      if (!ids.length) break;
      const metric = await this.scheduleMetric(sc, ids);
      await this.apply(sc.decide({ step, members: ids, metric, hyper: (key, m) => setup.hyper.value(key, m) }));
    }
    this.actedAt = step;
  }

  /** The metric a schedule ranks by, for the active members: validation evaluated now, or the interval's training average. */
  private async scheduleMetric(schedule: Schedule, ids: number[]): Promise<number[]> {
    const sums = this.scheduleSums[this.schedules.indexOf(schedule)];
    let metric: ScheduleMetric = schedule.metric;
    // without validation data a val_ metric falls back to its training counterpart (the checker warns, NET3014)
    if (metric.startsWith('val_') && !this.validates) metric = metric.slice(4) as ScheduleMetric;
    const values = metric.startsWith('val_') ? (await this.evaluateMembers('validation'))[metric.slice(4)] : ids.map((id) => sums.mean(id, this.names)[metric]);
    sums.clear();
    return values;
  }

  /** Each active member's loss and metrics on the validation data (each member's own held-out set under a split) or the training data. */
  private async evaluateMembers(dataset: 'train' | 'validation'): Promise<Record<string, number[]>> {
    const { tf, setup, config, population, own, extra } = this;
    if (population && own) return own.evaluate(population, dataset, Math.max(config.batch, 64), extra);
    if (population) return evaluatePopulation(tf, population, dataset === 'train' ? setup.data.train : setup.data.validation!, this.batch, config.batch, extra);
    const results = (await this.transport!.run(this.shardJobs((ids): EvaluateJob => ({ kind: 'evaluate', ...this.jobState(ids), dataset })))) as EvaluateResult[];
    return Object.fromEntries(this.names.map((name) => [name, results.flatMap((r) => r.metrics[name])]));
  }

  /** Carries out a schedule's decisions: best copies kept, stops (their members leave), then PBT's copies. */
  private async apply(d: Decisions): Promise<void> {
    if (d.best?.length) await this.keepBest(d.best);
    await this.retire(d.stop);
    this.exploit(d.exploit);
  }

  /** Copies of the members' parameters now, when their metric is their best so far (restore_best). */
  private async keepBest(members: number[]): Promise<void> {
    const { ids, lastMetrics } = this;
    const state = await this.memberState();
    const kept = members.filter((id) => ids.includes(id));
    this.bestKept.keep(kept.map((id) => ({ member: id, params: canonicalMember(this.setup.model.params, state, ids.length, ids.indexOf(id)), metrics: lastMetrics.has(id) ? encodeMetrics(lastMetrics.get(id)!) : undefined })), this.step);
  }

  /** The stopped members leave the population, each retired with its parameters, hyperparameters and metrics. */
  private async retire(stop: Decisions['stop']): Promise<void> {
    const { ids, step, setup, lastMetrics } = this;
    const stopping = stop.filter((s) => ids.includes(s.member));
    if (!stopping.length) return;
    const state = await this.memberState();
    for (const s of stopping) {
      // restore_best: the member retires with its best epoch's parameters and metrics
      const kept = this.bestKept.take(s.member);
      const best = s.restore ? kept : undefined;
      // a shared layer's parameters as they are now: the member keeps them as they were
      const params = best?.params ?? canonicalMember(setup.model.params, state, ids.length, ids.indexOf(s.member));
      const reason = best ? `${s.reason}; it keeps the weights of step ${best.step}, its best` : s.reason;
      const hyperparameters = memberHyperparameters(setup.hyper, s.member);
      this.retired.push({ member: s.member, step, reason, params, hyperparameters });
      if (best?.metrics) lastMetrics.set(s.member, decodeMetrics(best.metrics));
      if (!lastMetrics.has(s.member)) lastMetrics.set(s.member, { loss: this.epochSums.mean(s.member, this.names).loss });
      this.callbacks.onEvent?.({ step, event: 'stop', member: s.member, reason });
    }
    const keep = ids.map((id, m) => (stopping.some((s) => s.member === id) ? -1 : m)).filter((m) => m >= 0);
    if (this.population) {
      const next = this.population.gather(keep);
      this.population.dispose();
      this.population = next;
    } else this.store!.keep(keep);
  }

  /** PBT's copies: each exploiting member takes its source's parameters, optimizer state and hyperparameters. */
  private exploit(decided: Decisions['exploit']): void {
    const { ids: now, step, setup } = this;
    const exploit = decided.filter((e) => now.includes(e.member) && now.includes(e.source));
    if (!exploit.length) return;
    const sources = now.map((id) => {
      const e = exploit.find((x) => x.member === id);
      return now.indexOf(e ? e.source : id);
    });
    for (const e of exploit) {
      if (this.lastMetrics.has(e.member)) this.copies.copying(e.member, e.source, step, memberHyperparameters(setup.hyper, e.member), memberLr(setup.hyper, this.lr, e.member, step - 1));
      for (const [key, value] of Object.entries(e.hyperparameters)) setup.hyper.set(key, e.member, value);
      this.callbacks.onEvent?.({ step, event: 'exploit', member: e.member, source: e.source, hyperparameters: this.shown(e.member) });
    }
    for (const sc of this.schedules) sc.copied?.(exploit.map((e) => ({ member: e.member, source: e.source })));
    if (this.population) {
      const next = this.population.gather(sources, now);
      this.population.dispose();
      this.population = next;
    } else this.store!.copy(sources);
  }

  private shown(member: number): Record<string, number> {
    return shownHyperparameters(this.setup.hyper, (key) => this.setup.hyper.value(key, member), false);
  }

  private position(): TrainPosition {
    const { step, schedules, bestKept } = this;
    return {
      step,
      total: this.setup.steps,
      epoch: this.epoch,
      batch: this.next,
      sums: this.epochSums.toJSON(),
      schedules: { pending: this.due(step).length > 0 && this.actedAt !== step, sums: this.scheduleSums.map((s) => s.toJSON()), state: schedules.map((s) => s.state?.()) },
      metrics: [...this.lastMetrics].map(([id, m]) => [id, encodeMetrics(m)]),
      ...(bestKept.position().length ? { best: bestKept.position() } : {}),
      ...(this.copies.position() ? { copied: this.copies.position() } : {}),
    };
  }

  private async checkpoint(): Promise<void> {
    this.caughtUp('a checkpoint');
    if (!this.callbacks.checkpoint) return;
    const source = this.population ?? this.store!.source(this.setup.hyper);
    await this.callbacks.checkpoint(source, this.position(), this.retired, this.bestKept.tensors());
    this.lastCheckpoint = this.clock();
  }

  /** The last checkpoint and the summary: every member's last metrics (the untrained population's without a step) and learning rate. */
  /** Steps trained ahead (StepsAhead) never run past one where the population is read: a check that they did not. */
  private caughtUp(what: string): void {
    if (this.ahead?.pending) throw new Error(`internal error: ${what} at step ${this.step} with steps trained ahead of it`);
  }

  private async finish(): Promise<TrainResult> {
    this.caughtUp('the end of training');
    const { step, allIds, retired, population, store } = this;
    const seconds = (performance.now() - this.started) / 1000;
    if (!this.lastMetrics.size && !this.partialMetrics.size && (population?.n || store?.ids.length)) {
      const ids = this.ids;
      const tr = await this.evaluateMembers('train');
      const val = this.validates && (await this.evaluateMembers('validation'));
      ids.forEach((id, m) => this.partialMetrics.set(id, metricsRow(this.names, pick(tr, m), val ? pick(val, m) : undefined)));
    }
    await this.checkpoint();
    this.own?.dispose();
    const final = allIds.map((id) => this.partialMetrics.get(id) ?? this.lastMetrics.get(id) ?? { loss: NaN });
    const lastStep = (id: number) => Math.max(0, (retired.find((r) => r.member === id)?.step ?? step) - 1);
    const rates = allIds.map((id) => memberLr(this.setup.hyper, this.lr, id, lastStep(id)));
    return trainResult(population, store, { position: this.position(), steps: step, seconds, memberStepsPerSecond: step > this.first ? this.trained / seconds : 0, final, lr: rates, retired, memberIds: allIds, copied: this.copies.all() });
  }
}

/**
 * The result of a run: trained in waves or shards, the members are put on the device only when asked for
 * (all of them at once may not fit: what --resident is for). Made outside the run's methods, so that the
 * result does not keep the run (its per-member maps and sums) alive.
 */
function trainResult(population: Population | undefined, store: HostStore | undefined, rest: Omit<TrainResult, 'population' | 'dispose'>): TrainResult {
  let resident = population;
  return {
    get population() {
      return (resident ??= store!.materialize());
    },
    dispose: () => resident?.dispose(),
    ...rest,
  };
}

/** About how often the resident loop lets the event loop run (timers, signals, output), in milliseconds. */
const YIELD_MS = 50;

/** A step's per-member values on the host, by name: loss, then each metric. */
type StepValues = { loss: ArrayLike<number> } & Record<string, ArrayLike<number>>;

/** NETC_STEPS_PER_CALL where a process has it (1: a call a step), else 256. */
function defaultStepsPerCall(): number {
  const given = Number(envVar('NETC_STEPS_PER_CALL'));
  return Number.isInteger(given) && given >= 1 ? given : 256;
}

/**
 * The one place the trainer reads a step's losses and metrics: at once with dataSync() where that is a
 * plain read (`sync`), else with data(), a promise.
 */
function stepValues(losses: Tensor, metrics: Record<string, Tensor>, names: readonly string[], sync: boolean): StepValues | Promise<StepValues> {
  if (sync) {
    const values: StepValues = { loss: losses.dataSync() as Float32Array };
    for (const name of names) values[name] = metrics[name].dataSync() as Float32Array;
    return values;
  }
  return Promise.all([losses, ...names.map((name) => metrics[name])].map((t) => t.data() as Promise<Float32Array>)).then(([loss, ...rest]) => {
    const values: StepValues = { loss };
    names.forEach((name, k) => (values[name] = rest[k]));
    return values;
  });
}

export type { LabelEncoding };
