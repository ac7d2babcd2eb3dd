// The training loop: batches from the data, fused steps, per-member metrics per epoch. It reports
// through callbacks and leaves files and printing to the CLI.
import type { EnsembleConfig, Program } from '../check/program.js';
import { hasSharedParams, type EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { ModelIR } from '../ir/model-ir.js';
import { randomUUID } from 'node:crypto';
import { batchRanges, epochOrder } from '../data/batches.js';
import type { Dataset, LabelEncoding } from '../data/dataset.js';
import { extraMetrics, losses as lossSpecs } from '../vocabulary/losses.js';
import { Population, type PopulationSpec } from './population.js';
import { restore, restoreHyperparameters, retiredMembers, type CheckpointManifest, type RetiredMember, type StateSource, type TrainPosition } from './checkpoint.js';
import type { Decisions, Schedule, ScheduleMetric } from './schedules.js';
import { decodeMetrics, encodeMetrics, HostSums, metricsRow, pick } from './member-metrics.js';
import { initMember } from './init.js';
import { memberHyperparameters, shownHyperparameters, type HyperTable } from './hyper.js';
import { lrPlan, memberLr } from './lr-schedule.js';
import { BestKept, memberParamsAt } from './best-weights.js';
import type { TF, Tensor } from './tf.js';
import { evaluatePopulation } from './evaluate.js';
import { HostStore } from './host-store.js';
import { NETC_VERSION } from '../version.js';
import { InProcess } from '../scale/in-process.js';
import { shards, type Transport } from '../scale/transport.js';
import { MemberData, memberBatches } from './member-data.js';
import { batcher, type EvaluateJob, type EvaluateResult, type RunContext, type TrainJob, type TrainResult as ShardTrainResult } from '../scale/shard-job.js';

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
  step?: PopulationSpec['step'];
  /** resume: the checkpoint to continue from */
  resume?: { manifest: CheckpointManifest; tensors: Map<string, Float32Array> };
  /** call callbacks.checkpoint every this many steps (0: only at the end and when stopped) */
  checkpointEvery?: number;
  /** schedules acting between intervals (PBT, halving, early stopping) */
  schedules?: Schedule[];
  /** keep at most this many members on the device, training the population in waves */
  resident?: number;
  /** train the population in shards through this transport (worker processes, a queue) */
  transport?: Transport;
}

/**
 * A member's metrics: `loss`, each computed metric (`accuracy`, `mse`, `mae`) and, with validation data,
 * their `val_` twins, in the order of metricColumns. The trainer fills them by name (computedMetrics).
 */
export interface MemberMetrics {
  loss: number;
  accuracy?: number;
  mse?: number;
  mae?: number;
  val_loss?: number;
  val_accuracy?: number;
  val_mse?: number;
  val_mae?: number;
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
  onStep?(p: Progress): void;
  onEpoch?(r: EpochReport): void;
  /** checked after every step: true stops training there (Ctrl-C), keeping what was trained */
  shouldStop?(): boolean;
  /** write a checkpoint of the population at this position (every checkpointEvery steps, and last) */
  checkpoint?(population: Population | StateSource, position: TrainPosition, retired: RetiredMember[], extra?: Map<string, Float32Array>): Promise<void>;
  /** a member stopped, or copied another (PBT) */
  onEvent?(e: PopulationEvent): void;
}

export interface TrainResult {
  /** the members still training at the end (all of them, resident, when trained in waves) */
  population: Population;
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
}

/** Optimizer steps per epoch: batches of the training set, or of each member's epoch under a split (src/data/member-splits.ts). */
export function batchesPerEpoch(setup: Pick<TrainSetup, 'program' | 'data'>): number {
  const split = setup.program.ensemble?.split;
  return split ? memberBatches(split, setup.data.train.count, setup.program.train!.batch) : batchRanges(setup.data.train.count, setup.program.train!.batch).length;
}

export async function train(setup: TrainSetup, callbacks: TrainCallbacks = {}): Promise<TrainResult> {
  const { tf, program } = setup;
  const config = program.train!;
  // the learning rate of every member at every step: lr_i * f_i(t) over the run's `steps` (T)
  const lr = lrPlan(config.lr_schedule, setup.hyper, setup.steps, batchesPerEpoch(setup));
  const allIds = setup.memberIds ?? Array.from({ length: setup.ensemble.members }, (_, i) => i);
  const spec = (ids: number[]): PopulationSpec => ({
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
  });
  const expects = lossSpecs.find((l) => l.name === config.loss.name)!.expects;
  // plateau acts first at an epoch end, on each member as it trained, so that a PBT exploit after it copies the updated state
  const schedules = [...(lr.schedule ? [lr.schedule] : []), ...(setup.schedules ?? [])];
  // the metrics besides the loss: what the train block asks for and what a schedule ranks by
  const extra = computedMetrics(config.metrics, schedules);
  const names = ['loss', ...extra];
  const batch = batcher(tf, { model: setup.model, loss: config.loss, train: setup.data.train });
  // members on data of their own: each member's batches and held-out set come from its own examples
  const split = program.ensemble?.split;
  const own = split && new MemberData(tf, { split, train: setup.data.train, seed: setup.seed, shuffle: config.shuffle, batch: config.batch, input: setup.model.ops[0].shape, loss: config.loss });
  const validates = !!(setup.data.validation || own);

  const ranges = own?.ranges ?? batchRanges(setup.data.train.count, config.batch);
  const perEpoch = ranges.length;
  const epochs = Math.ceil(setup.steps / perEpoch);
  const start = setup.resume?.manifest.position ?? { step: 0, epoch: 0, batch: 0 };
  let { step, epoch, batch: next } = start;
  const first = step;

  // the members: resident in one population, or kept on the host and trained in shards (waves in this
  // process with `resident`, or jobs for workers through a transport)
  const resumed = setup.resume;
  if (resumed) restoreHyperparameters(setup.hyper, resumed.manifest);
  const active = resumed ? [...resumed.manifest.member_ids] : [...allIds];
  const retired: RetiredMember[] = resumed ? retiredMembers(resumed.manifest, resumed.tensors) : [];
  const sharedLayers = hasSharedParams(setup.ensemble);
  if (sharedLayers && (setup.transport || setup.resident !== undefined)) {
    throw new Error("a population with shared layers trains in one process: their parameters have no member axis to cut into shards or waves");
  }
  const transport = setup.transport ?? (setup.resident !== undefined && setup.resident < active.length ? new InProcess(tf) : undefined);
  // early stopping's restore_best: every member's parameters at its best epoch so far
  const bestKept = resumed ? BestKept.fromCheckpoint(resumed.manifest, resumed.tensors) : new BestKept();
  let population: Population | undefined;
  let store: HostStore | undefined;
  let context: RunContext | undefined;
  if (transport) {
    store = await HostStore.create(spec, active, resumed);
    context = { id: randomUUID(), version: NETC_VERSION, model: setup.model, ensemble: setup.ensemble, seed: setup.seed, optimizer: config.optimizer.name, loss: config.loss, batch: config.batch, shuffle: config.shuffle, metrics: extra, train: setup.data.train, validation: setup.data.validation, ...(split ? { split } : {}) };
    await transport.open(context);
  } else {
    population = new Population(spec(active));
    if (resumed) restore(population, resumed.manifest, resumed.tensors);
  }

  const epochSums = new HostSums(start.sums);
  // each schedule ranks by its own interval's sums: two schedules with different intervals never share them
  const scheduleSums = schedules.map((_, i) => new HostSums(start.schedules?.sums[i]));
  start.schedules?.state.forEach((s, i) => s !== undefined && schedules[i]?.restore?.(s));
  // the metrics of each member's last ended epoch; a final partial epoch's are kept apart (a resumed run supersedes them)
  const lastMetrics = new Map<number, MemberMetrics>(start.metrics?.map(([id, m]) => [id, decodeMetrics(m)]));
  const partialMetrics = new Map<number, MemberMetrics>();
  // the step at which the schedules due there have acted (a checkpoint at the run's last step may precede them)
  let actedAt = start.schedules?.pending ? -1 : step;
  let best = NaN;
  let stopped = false;
  let trained = 0;
  const started = performance.now();
  let epochStarted = started;
  const rate = () => trained / Math.max(1e-9, (performance.now() - started) / 1000);
  const every = setup.checkpointEvery ?? 0;
  const due = (s: number) => (s > 0 ? schedules.filter((sc) => s % sc.everySteps(perEpoch) === 0) : []);
  const position = (): TrainPosition => ({
    step,
    total: setup.steps,
    epoch,
    batch: next,
    sums: epochSums.toJSON(),
    schedules: { pending: due(step).length > 0 && actedAt !== step, sums: scheduleSums.map((s) => s.toJSON()), state: schedules.map((s) => s.state?.()) },
    metrics: [...lastMetrics].map(([id, m]) => [id, encodeMetrics(m)]),
    ...(bestKept.position().length ? { best: bestKept.position() } : {}),
  });
  const checkpoint = async () => {
    if (!callbacks.checkpoint) return;
    const source = population ?? store!.source(setup.hyper);
    await callbacks.checkpoint(source, position(), retired, bestKept.tensors());
  };

  /** A member's loss and metrics on a batch, into the epoch's and every schedule's sums; non-finite losses stay out. */
  const addToSums = (id: number, values: Record<string, number>, size: number) => {
    if (!Number.isFinite(values.loss)) return;
    epochSums.add(id, values, size);
    for (const sums of scheduleSums) sums.add(id, values, size);
  };

  /**
   * Trains a population on batches [from, to) of the current epoch, stopping after a batch where a member's
   * loss went non-finite; returns those members and how many batches ran.
   */
  const runSteps = async (pop: Population, from: number, to: number, order: Int32Array): Promise<{ diverged: number[]; ran: number }> => {
    const diverged: number[] = [];
    let b = from;
    while (b < to && !diverged.length) {
      const [s0, s1] = ranges[b];
      const { x, y, size } = own ? own.batch(pop.memberIds, epoch, b) : batch(setup.data.train, order, s0, s1);
      let metrics: Record<string, Tensor> = {};
      const losses = pop.trainStep(x, y, { names: extra, take: (v) => (metrics = v) });
      const values: Record<string, number[]> = { loss: Array.from(await losses.data()) };
      for (const name of extra) values[name] = Array.from(await metrics[name].data());
      tf.dispose([x, y, losses, ...Object.values(metrics)]);
      pop.memberIds.forEach((id, m) => {
        if (!Number.isFinite(values.loss[m])) diverged.push(id);
        else addToSums(id, pick(values, m), size);
      });
      trained += pop.n;
      b++;
    }
    return { diverged, ran: b - from };
  };

  /** The active members cut into shards: at most `resident` each in this process, one per worker elsewhere. */
  const shardJobs = <J>(make: (ids: number[]) => J): J[] =>
    shards(store!.ids, transport!.slots, transport instanceof InProcess ? (setup.resident ?? Infinity) : Infinity).map(make);
  const jobState = (ids: number[]) => ({ context: context!.id, ...store!.slice(ids), hyper: ids.map((id) => memberHyperparameters(setup.hyper, id)), step: store!.step });

  /**
   * Trains every shard for batches [from, to) and returns the members that diverged. A divergence ends the
   * interval at its step, as it does for a resident population: the shards that ran past it run again,
   * from their interval's start, up to there, so the stop is recorded where all-at-once records it.
   */
  const runShards = async (from: number, to: number): Promise<{ diverged: number[]; ran: number }> => {
    const factors = (ids: number[]) => (lr.factor ? { lrFactors: ids.map((id) => Array.from({ length: to - from }, (_, k) => lr.factor!(id, store!.step + k))) } : {});
    const jobs: TrainJob[] = shardJobs((ids) => ({ kind: 'train', ...jobState(ids), epoch, from, to, resident: setup.resident, ...factors(ids) }));
    const results = (await transport!.run(jobs)) as ShardTrainResult[];
    const end = Math.min(...results.map((r) => from + r.ran));
    const again = jobs.map((_, i) => i).filter((i) => from + results[i].ran > end);
    const redone = again.length ? ((await transport!.run(again.map((i) => ({ ...jobs[i], to: end })))) as ShardTrainResult[]) : [];
    again.forEach((i, k) => (results[i] = redone[k]));
    for (const r of results) {
      store!.put(r);
      for (const b of r.batches) r.memberIds.forEach((id, m) => addToSums(id, pick({ loss: b.loss, ...b.metrics }, m), b.size));
      trained += r.ran * r.memberIds.length;
    }
    return { diverged: results.flatMap((r) => r.diverged), ran: end - from };
  };

  // the run this resumes ended where schedules were due, before they acted
  if (actedAt !== step && step < setup.steps) await actOnSchedules();
  while (step < setup.steps && !stopped) {
    // the shared order of the epoch's examples (members on their own data have their own, in MemberData)
    const order = own ? new Int32Array(0) : epochOrder(setup.data.train.count, config.shuffle, setup.seed, epoch);
    while (next < perEpoch && step < setup.steps) {
      // the next boundary: a step where a schedule acts, a checkpoint is due, the epoch ends, or training does
      let to = next + 1;
      while (to < perEpoch && step + (to - next) < setup.steps && !boundary(step + (to - next))) to++;
      let diverged: number[] = [];
      if (population) {
        for (let b = next; b < to; b++) {
          diverged = (await runSteps(population, b, b + 1, order)).diverged;
          step++;
          next++;
          callbacks.onStep?.({ step, steps: setup.steps, epoch: epoch + 1, epochs, memberStepsPerSecond: rate(), bestLoss: best });
          if (diverged.length) break;
          if (step % 20 === 0) await new Promise((r) => setImmediate(r));
          if (callbacks.shouldStop?.()) {
            stopped = true;
            break;
          }
        }
      } else {
        const r = await runShards(next, to);
        diverged = r.diverged;
        step += r.ran;
        next += r.ran;
        // every shard starts the interval at the same step (it names the dropout streams); the store moves on after all of them
        store!.step = step;
        callbacks.onStep?.({ step, steps: setup.steps, epoch: epoch + 1, epochs, memberStepsPerSecond: rate(), bestLoss: best });
        await new Promise((r) => setImmediate(r));
        if (callbacks.shouldStop?.()) stopped = true;
      }
      if (diverged.length) {
        // under waves too: the members of a diverged member's wave are poisoned as they would be all at once
        const who = `member${diverged.length > 1 ? 's' : ''} ${diverged.join(', ')} diverged (a non-finite loss) at step ${step}`;
        if (setup.ensemble.lowering === 'blockdiag' && (population?.n ?? store!.ids.length) > diverged.length) {
          throw new DivergenceError(
            `${who}; under the blockdiag lowering a non-finite member spreads to every other (0 x NaN = NaN in the masked matMul), so the population is no longer valid. Use --lowering grouped, which stops a diverged member and leaves the others untouched.`,
          );
        }
        if (sharedLayers && (population?.n ?? store!.ids.length) > diverged.length) {
          throw new DivergenceError(
            `${who}; its gradient reached the shared layers, whose one set of weights every member reads, so every member is now non-finite and the population is no longer valid. Lower the learning rates (the shared layers train with the file's), or add clipnorm.`,
          );
        }
        await apply({ stop: diverged.map((member) => ({ member, reason: `diverged: a non-finite loss at step ${step}` })), exploit: [] });
      }
      // an epoch that ends here is reported before schedules act on it, so every member's last epoch shows
      const epochEnded = next >= perEpoch || (step >= setup.steps && !stopped);
      if (epochEnded) await reportEpoch();
      // nothing is left to gain from a schedule acting after the last step; a checkpoint there says they are pending
      if (step < setup.steps) await actOnSchedules();
      if (every > 0 && step % every === 0 && step < setup.steps) await checkpoint();
      if (!(population?.n ?? store!.ids.length)) stopped = true;
      if (stopped) break;
    }
    if (next >= perEpoch) {
      epoch++;
      next = 0;
    }
  }

  async function reportEpoch() {
    const ids = population?.memberIds ?? store!.ids;
    const val = validates && ids.length ? await evaluateMembers('validation') : undefined;
    const metrics = ids.map((id, m) => {
      const row = metricsRow(names, epochSums.mean(id, names), val && pick(val, m));
      (next >= perEpoch ? lastMetrics : partialMetrics).set(id, row);
      return row;
    });
    // a partial epoch (the step budget ended mid-epoch) keeps its sums: a resumed run continues them
    if (next >= perEpoch) epochSums.clear();
    best = Math.min(Number.isNaN(best) ? Infinity : best, ...metrics.map((m) => m.loss).filter((l) => Number.isFinite(l)));
    const now = performance.now();
    const rates = ids.map((id) => memberLr(setup.hyper, lr, id, step - 1));
    callbacks.onEpoch?.({ epoch: epoch + 1, step, members: ids, metrics, lr: rates, seconds: (now - epochStarted) / 1000 });
    epochStarted = now;
  }

  /** The schedules due at this step act, in the file's order, each on the members the previous left. */
  async function actOnSchedules() {
    for (const sc of due(step)) {
      const ids = population?.memberIds ?? store!.ids;
      if (!ids.length) break;
      const metric = await scheduleMetric(sc, ids);
      await apply(sc.decide({ step, members: ids, metric, hyper: (key, m) => setup.hyper.value(key, m) }));
    }
    actedAt = step;
  }

  function boundary(s: number): boolean {
    return due(s).length > 0 || (every > 0 && s % every === 0);
  }

  /** The metric a schedule ranks by, for the active members: validation evaluated now, or the interval's training average. */
  async function scheduleMetric(schedule: Schedule, ids: number[]): Promise<number[]> {
    const sums = scheduleSums[schedules.indexOf(schedule)];
    let metric: ScheduleMetric = schedule.metric;
    // without validation data a val_ metric falls back to its training counterpart (the checker warns, NET3014)
    if (metric.startsWith('val_') && !validates) metric = metric.slice(4) as ScheduleMetric;
    const values = metric.startsWith('val_') ? (await evaluateMembers('validation'))[metric.slice(4)] : ids.map((id) => sums.mean(id, names)[metric]);
    sums.clear();
    return values;
  }

  /** Each active member's loss and metrics on the validation data (each member's own held-out set under a split) or the training data. */
  async function evaluateMembers(dataset: 'train' | 'validation'): Promise<Record<string, number[]>> {
    if (population && own) return own.evaluate(population, dataset, Math.max(config.batch, 64), extra);
    if (population) return evaluatePopulation(tf, population, dataset === 'train' ? setup.data.train : setup.data.validation!, batch, config.batch, extra);
    const results = (await transport!.run(shardJobs((ids): EvaluateJob => ({ kind: 'evaluate', ...jobState(ids), dataset })))) as EvaluateResult[];
    return Object.fromEntries(names.map((name) => [name, results.flatMap((r) => r.metrics[name])]));
  }

  /** Copies of the members' parameters now, when their metric is their best so far (restore_best). */
  async function keepBest(members: number[]) {
    const ids = population?.memberIds ?? store!.ids;
    const state = population ? await population.exportState() : store!.state;
    const kept = members.filter((id) => ids.includes(id));
    bestKept.keep(kept.map((id) => ({ member: id, params: memberParamsAt(setup.model, state, ids.indexOf(id)), metrics: lastMetrics.has(id) ? encodeMetrics(lastMetrics.get(id)!) : undefined })), step);
  }

  /** Carries out a schedule's decisions: best copies kept, stops (their members leave), then PBT's copies. */
  async function apply(d: Decisions) {
    if (d.best?.length) await keepBest(d.best);
    const ids = population?.memberIds ?? store!.ids;
    const stopping = d.stop.filter((s) => ids.includes(s.member));
    if (stopping.length) {
      const state = population ? await population.exportState() : store!.state;
      for (const s of stopping) {
        // restore_best: the member retires with its best epoch's parameters and metrics
        const kept = bestKept.take(s.member);
        const best = s.restore ? kept : undefined;
        const params = best?.params ?? memberParamsAt(setup.model, state, ids.indexOf(s.member));
        const reason = best ? `${s.reason}; it keeps the weights of step ${best.step}, its best` : s.reason;
        const hyperparameters = memberHyperparameters(setup.hyper, s.member);
        retired.push({ member: s.member, step, reason, params, hyperparameters });
        if (best?.metrics) lastMetrics.set(s.member, decodeMetrics(best.metrics));
        if (!lastMetrics.has(s.member)) lastMetrics.set(s.member, { loss: epochSums.mean(s.member, names).loss });
        callbacks.onEvent?.({ step, event: 'stop', member: s.member, reason });
      }
      const keep = ids.map((id, m) => (stopping.some((s) => s.member === id) ? -1 : m)).filter((m) => m >= 0);
      if (population) {
        const next = population.gather(keep);
        population.dispose();
        population = next;
      } else store!.keep(keep);
    }
    const now = population?.memberIds ?? store!.ids;
    const exploit = d.exploit.filter((e) => now.includes(e.member) && now.includes(e.source));
    if (exploit.length) {
      const sources = now.map((id) => {
        const e = exploit.find((x) => x.member === id);
        return now.indexOf(e ? e.source : id);
      });
      for (const e of exploit) {
        for (const [key, value] of Object.entries(e.hyperparameters)) setup.hyper.set(key, e.member, value);
        callbacks.onEvent?.({ step, event: 'exploit', member: e.member, source: e.source, hyperparameters: shown(e.member) });
      }
      for (const sc of schedules) sc.copied?.(exploit.map((e) => ({ member: e.member, source: e.source })));
      if (population) {
        const next = population.gather(sources, now);
        population.dispose();
        population = next;
      } else store!.copy(sources);
    }
  }

  function shown(member: number): Record<string, number> {
    return shownHyperparameters(setup.hyper, (key) => setup.hyper.value(key, member), false);
  }

  const seconds = (performance.now() - started) / 1000;
  if (!lastMetrics.size && !partialMetrics.size && (population?.n || store?.ids.length)) {
    const ids = population?.memberIds ?? store!.ids;
    const tr = await evaluateMembers('train');
    const val = validates && (await evaluateMembers('validation'));
    ids.forEach((id, m) => partialMetrics.set(id, metricsRow(names, pick(tr, m), val ? pick(val, m) : undefined)));
  }
  await checkpoint();
  own?.dispose();
  const final = allIds.map((id) => partialMetrics.get(id) ?? lastMetrics.get(id) ?? { loss: NaN });
  const lastStep = (id: number) => Math.max(0, (retired.find((r) => r.member === id)?.step ?? step) - 1);
  const rates = allIds.map((id) => memberLr(setup.hyper, lr, id, lastStep(id)));
  const resultPopulation = population ?? store!.materialize();
  return { population: resultPopulation, position: position(), steps: step, seconds, memberStepsPerSecond: step > first ? trained / seconds : 0, final, lr: rates, retired, memberIds: allIds };
}

/** The metrics computed besides the loss: those the train block asks for and those a schedule ranks by, in the order shown. */
export function computedMetrics(requested: readonly string[], schedules: readonly Pick<Schedule, 'metric'>[] = []): string[] {
  const wanted = new Set([...requested, ...schedules.map((s) => s.metric.replace(/^val_/, ''))]);
  return extraMetrics.filter((m) => wanted.has(m));
}

export type { LabelEncoding };
