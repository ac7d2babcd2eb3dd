// The training loop: batches from the data, fused steps, per-member metrics per epoch. It reports
// through callbacks and leaves files and printing to the CLI.
import type { Program } from '../check/program.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { ModelIR } from '../ir/model-ir.js';
import { batchRanges, epochOrder, gatherBatch, labelEncoding } from '../data/batches.js';
import type { Dataset, LabelEncoding } from '../data/dataset.js';
import { losses as lossSpecs } from '../vocabulary/losses.js';
import { Population, type PopulationSpec } from './population.js';
import { restore, type CheckpointManifest, type TrainPosition } from './checkpoint.js';
import { initMember } from './init.js';
import type { HyperTable } from './hyper.js';
import type { TF, Tensor } from './tf.js';

export interface TrainSetup {
  tf: TF;
  /** only the train block is read */
  program: Pick<Program, 'train'>;
  model: ModelIR;
  ensemble: EnsembleIR;
  hyper: HyperTable;
  data: { train: Dataset; validation?: Dataset };
  /** total optimizer steps (from --steps, or epochs times batches per epoch) */
  steps: number;
  seed: number;
  memberIds?: number[];
  /** a compiled module's straight-line forward pass (see PopulationSpec.forward) */
  forward?: PopulationSpec['forward'];
  /** resume: the checkpoint to continue from */
  resume?: { manifest: CheckpointManifest; tensors: Map<string, Float32Array> };
  /** call callbacks.checkpoint every this many steps (0: only at the end and when stopped) */
  checkpointEvery?: number;
}

export interface MemberMetrics {
  loss: number;
  accuracy?: number;
  val_loss?: number;
  val_accuracy?: number;
}

export interface EpochReport {
  epoch: number;
  step: number;
  /** per member, in population order */
  metrics: MemberMetrics[];
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
  checkpoint?(population: Population, position: TrainPosition): Promise<void>;
}

export interface TrainResult {
  population: Population;
  /** where training stopped: the end, or where shouldStop() stopped it */
  position: TrainPosition;
  steps: number;
  seconds: number;
  memberStepsPerSecond: number;
  /** the last epoch's metrics (the untrained population's, evaluated, after --steps 0) */
  final: MemberMetrics[];
}

export function batchesPerEpoch(setup: Pick<TrainSetup, 'program' | 'data'>): number {
  return batchRanges(setup.data.train.count, setup.program.train!.batch).length;
}

export async function train(setup: TrainSetup, callbacks: TrainCallbacks = {}): Promise<TrainResult> {
  const { tf, program } = setup;
  const config = program.train!;
  const memberIds = setup.memberIds ?? Array.from({ length: setup.ensemble.members }, (_, i) => i);
  const population = new Population({
    tf,
    ensemble: setup.ensemble,
    memberIds,
    seed: setup.seed,
    optimizer: config.optimizer.name,
    loss: config.loss,
    hyper: (key, m) => setup.hyper.value(key, m),
    initial: (m) => initMember(setup.model, setup.seed, m),
    forward: setup.forward,
  });
  const expects = lossSpecs.find((l) => l.name === config.loss.name)!.expects;
  const encoding = labelEncoding(expects, setup.data.train.labels);
  const classes = setup.data.train.labels.kind === 'classes' ? setup.data.train.labels.classes : 0;
  const withAccuracy = config.metrics.includes('accuracy') && expects !== 'regression';
  const input = setup.model.ops[0].shape;
  const batch = (ds: Dataset, order: Int32Array, start: number, end: number) => {
    const b = gatherBatch(ds, order, start, end, encoding, classes);
    return { x: tf.tensor(b.x, [b.size, ...input]), y: tf.tensor(b.y, [b.size, b.yWidth]), size: b.size };
  };

  const ranges = batchRanges(setup.data.train.count, config.batch);
  const epochs = Math.ceil(setup.steps / ranges.length);
  const n = memberIds.length;
  if (setup.resume) restore(population, setup.resume.manifest, setup.resume.tensors);
  const start = setup.resume?.manifest.position ?? { step: 0, epoch: 0, batch: 0 };
  let { step, epoch, batch: next } = start;
  const first = step;
  const sums = new Sums(tf, n, start.sums);
  let best = NaN;
  let final: MemberMetrics[] = [];
  let stopped = false;
  const started = performance.now();
  const rate = () => (n * (step - first)) / Math.max(1e-9, (performance.now() - started) / 1000);
  const position = async (): Promise<TrainPosition> => ({ step, epoch, batch: next, sums: await sums.snapshot() });
  const every = setup.checkpointEvery ?? 0;

  while (step < setup.steps && !stopped) {
    const order = epochOrder(setup.data.train.count, config.shuffle, setup.seed, epoch);
    while (next < ranges.length && step < setup.steps) {
      const [start, end] = ranges[next];
      const { x, y, size } = batch(setup.data.train, order, start, end);
      let acc: Tensor | undefined;
      const losses = population.trainStep(x, y, withAccuracy ? (a) => (acc = a) : undefined);
      sums.add('loss', losses, size);
      if (acc) sums.add('accuracy', acc, size);
      tf.dispose([x, y]);
      step++;
      next++;
      callbacks.onStep?.({ step, steps: setup.steps, epoch: epoch + 1, epochs, memberStepsPerSecond: rate(), bestLoss: best });
      if (every > 0 && step % every === 0 && step < setup.steps && callbacks.checkpoint) await callbacks.checkpoint(population, await position());
      // let the progress bar draw and signals arrive
      if (step % 20 === 0) await new Promise((r) => setImmediate(r));
      if (callbacks.shouldStop?.()) {
        stopped = true;
        break;
      }
    }
    // an epoch cut short by a stop is not reported: its sums go into the checkpoint and continue on resume
    if (stopped && next < ranges.length) break;
    const metrics = await sums.means();
    const val = setup.data.validation && (await evaluate(setup, population, setup.data.validation, batch, withAccuracy));
    final = metrics.loss.map((loss, m) => ({
      loss,
      ...(withAccuracy ? { accuracy: metrics.accuracy[m] } : {}),
      ...(val ? { val_loss: val.loss[m], ...(withAccuracy ? { val_accuracy: val.accuracy[m] } : {}) } : {}),
    }));
    best = Math.min(Number.isNaN(best) ? Infinity : best, ...metrics.loss.filter((l) => Number.isFinite(l)));
    callbacks.onEpoch?.({ epoch: epoch + 1, step, metrics: final });
    if (next >= ranges.length) {
      epoch++;
      next = 0;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  if (!final.length) final = await evaluateAll(setup, population, batch, withAccuracy);
  const end = await position();
  await callbacks.checkpoint?.(population, end);
  return { population, position: end, steps: step, seconds, memberStepsPerSecond: step > first ? (n * (step - first)) / seconds : 0, final };
}

type BatchFn = (ds: Dataset, order: Int32Array, start: number, end: number) => { x: Tensor; y: Tensor; size: number };

/** Loss and accuracy per member over a whole dataset, without training. */
export async function evaluate(setup: TrainSetup, population: Population, ds: Dataset, batch: BatchFn, withAccuracy: boolean) {
  const { tf } = setup;
  const sums = new Sums(tf, population.n);
  const order = epochOrder(ds.count, false, 0, 0);
  for (const [start, end] of batchRanges(ds.count, Math.max(setup.program.train!.batch, 64))) {
    const { x, y, size } = batch(ds, order, start, end);
    const { loss, accuracy } = population.evaluate(x, y);
    sums.add('loss', loss, size);
    if (withAccuracy) sums.add('accuracy', accuracy, size);
    else accuracy.dispose();
    tf.dispose([x, y]);
  }
  return sums.means();
}

/** The untrained population's metrics, for --steps 0. */
async function evaluateAll(setup: TrainSetup, population: Population, batch: BatchFn, withAccuracy: boolean): Promise<MemberMetrics[]> {
  const train = await evaluate(setup, population, setup.data.train, batch, withAccuracy);
  const val = setup.data.validation && (await evaluate(setup, population, setup.data.validation, batch, withAccuracy));
  return train.loss.map((loss, m) => ({
    loss,
    ...(withAccuracy ? { accuracy: train.accuracy[m] } : {}),
    ...(val ? { val_loss: val.loss[m], ...(withAccuracy ? { val_accuracy: val.accuracy[m] } : {}) } : {}),
  }));
}

/** Example-weighted sums of per-member values, kept on the device until read. */
class Sums {
  private totals = new Map<string, Tensor>();
  private count = 0;
  constructor(
    private tf: TF,
    private n: number,
    from?: TrainPosition['sums'],
  ) {
    if (!from) return;
    this.count = from.count;
    for (const [name, values] of Object.entries(from.values)) this.totals.set(name, tf.tensor(values));
  }

  /** The sums as they stand, read without resetting them (for a checkpoint). */
  async snapshot(): Promise<NonNullable<TrainPosition['sums']>> {
    const values: Record<string, number[]> = {};
    for (const [name, t] of this.totals) values[name] = Array.from(await t.data());
    return { count: this.count, values };
  }

  add(name: string, values: Tensor, size: number): void {
    const { tf } = this;
    const prev = this.totals.get(name);
    const next = tf.tidy(() => (prev ? tf.add(prev, tf.mul(values, size)) : tf.mul(values, size)));
    prev?.dispose();
    values.dispose();
    this.totals.set(name, next);
    if (name === 'loss') this.count += size;
  }

  async means(): Promise<Record<string, number[]>> {
    const out: Record<string, number[]> = { loss: new Array(this.n).fill(NaN), accuracy: new Array(this.n).fill(NaN) };
    for (const [name, t] of this.totals) {
      out[name] = Array.from(await t.data()).map((v) => v / this.count);
      t.dispose();
    }
    this.totals.clear();
    this.count = 0;
    return out;
  }
}

export type { LabelEncoding };
