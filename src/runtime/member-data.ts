// Batches and evaluation for members on data of their own (`split:`). The training set is encoded once;
// each step gathers every member's own rows out of it into one batch, [N, B, ...], so the first layer
// runs per member on its own inputs. Where the backend keeps tensors in host memory (cpu, wasm) the rows
// are copied on the host and the batch uploaded: measured on wasm for 10 members x 64 MNIST rows, 2 ms,
// against 13 ms for tf.gather on a device-resident set (33 ms on cpu). Elsewhere (webgpu, tfjs-node) the
// set is uploaded once and gathered on the device, so only the N*B indices travel each step. The values
// are the same copies either way. Which rows a member reads is src/data/member-splits.ts: a function of
// its id, never of the other members.
import { batchRanges, gatherBatch, labelEncoding } from '../data/batches.js';
import type { Dataset } from '../data/dataset.js';
import { epochLength, memberEpochOrder, memberExamples, type MemberExamples } from '../data/member-splits.js';
import { losses as lossSpecs } from '../vocabulary/losses.js';
import type { MemberSplit } from '../vocabulary/splits.js';
import { exampleLosses, exampleMetric } from '../kernels/losses.js';
import type { Population } from './population.js';
import type { TF, Tensor } from '../kernels/tf.js';
import { maxOf } from '../util/extrema.js';

export interface MemberDataSpec {
  split: MemberSplit;
  /** the training set the members' examples are drawn from */
  train: Dataset;
  seed: number;
  shuffle: boolean;
  batch: number;
  /** the model's input shape, one example */
  input: number[];
  loss: { name: string; args: Record<string, unknown> };
  /** where rows are gathered (default: on the host for cpu and wasm, on the device elsewhere) */
  gatherOn?: 'host' | 'device';
}

/** A batch of every member's own rows: x [N, B, ...input], y [N, B, label width]. */
export interface MemberBatch {
  x: Tensor;
  y: Tensor;
  /** B, each member's rows */
  size: number;
  /**
   * each member's real rows [N], the first of its B, in an epoch's last batch under kfold when k does not
   * divide n (a short member's padding lies there, and only there): the rows after them are padding, of
   * weight 0, which its loss, metrics, gradient and batch statistics never see. Given for that batch
   * whichever members are in it, so that how a member's step computes never depends on the others
   */
  rows?: Int32Array;
}

export class MemberData {
  /** examples in every member's epoch (src/data/member-splits.ts) */
  readonly length: number;
  /** [start, end) of each batch of an epoch */
  readonly ranges: [number, number][];
  private readonly own = new Map<number, MemberExamples>();
  private orders = { epoch: -1, byMember: new Map<number, Int32Array>() };
  private readonly host: { x: Float32Array; y: Float32Array; yWidth: number };
  private device?: { x: Tensor; y: Tensor };
  /** gather on the device (backends whose memory is not the host's), or on the host */
  private readonly onDevice: boolean;
  /** whether some members are one example short (kfold, k not dividing n): their epochs' last batches are padded */
  private readonly padded: boolean;

  constructor(
    private readonly tf: TF,
    private readonly spec: MemberDataSpec,
  ) {
    const ds = spec.train;
    // the checker's and netc train's NET4060; here for programs that call train() themselves
    if (spec.split.kind === 'kfold' && ds.count < spec.split.k) throw new Error(`split: kfold(${spec.split.k}) needs at least ${spec.split.k} training examples, one per fold; there are ${ds.count}`);
    this.length = epochLength(spec.split, ds.count);
    this.padded = spec.split.kind === 'kfold' && ds.count % spec.split.k !== 0;
    this.ranges = batchRanges(this.length, spec.batch);
    const expects = lossSpecs.find((l) => l.name === spec.loss.name)!.expects;
    const classes = ds.labels.kind === 'classes' ? ds.labels.classes : 0;
    const all = Int32Array.from({ length: ds.count }, (_, i) => i);
    this.host = gatherBatch(ds, all, 0, ds.count, labelEncoding(expects, ds.labels), classes);
    this.onDevice = (spec.gatherOn ?? (['cpu', 'wasm'].includes(tf.getBackend()) ? 'host' : 'device')) === 'device';
  }

  /** Member id's training and held-out examples. */
  examples(id: number): MemberExamples {
    let e = this.own.get(id);
    if (!e) this.own.set(id, (e = memberExamples(this.spec.split, this.spec.train.count, this.spec.seed, id)));
    return e;
  }

  /** Batch b of `epoch` for the members `ids`: each member's rows of its own epoch order, padded where it has fewer. */
  batch(ids: readonly number[], epoch: number, b: number): MemberBatch {
    const [start, end] = this.ranges[b];
    const size = end - start;
    const rows = new Int32Array(ids.length * size);
    ids.forEach((id, m) => rows.set(this.order(id, epoch).subarray(start, end), m * size));
    const batch = { ...this.gather(rows, ids.length, size), size };
    if (!this.padded || b !== this.ranges.length - 1) return batch;
    return { ...batch, rows: Int32Array.from(ids, (id) => realRows(this.examples(id).train.length, start, end)) };
  }

  /**
   * Each member's loss and metrics (`accuracy`, ...) over its own held-out examples (`validation`) or
   * its own training examples (`train`), in inference mode, by name in the members' order. Every batch
   * holds `evalBatch` rows per member, a member with fewer padded with rows that are not counted, so
   * that a member's values never depend on the others; the sums run on the host in float64. A member
   * with no such examples (an out-of-bag set that is empty) gets NaN.
   */
  async evaluate(pop: Population, which: 'train' | 'validation', evalBatch: number, metrics: readonly string[]): Promise<Record<string, number[]>> {
    const ids = pop.memberIds;
    const sets = ids.map((id) => (which === 'train' ? this.examples(id).train : this.examples(id).held));
    const names = ['loss', ...metrics];
    const sums = names.map(() => new Float64Array(ids.length));
    const longest = Math.max(0, maxOf(sets.map((s) => s.length)));
    for (let start = 0; start < longest; start += evalBatch) {
      const rows = new Int32Array(ids.length * evalBatch);
      sets.forEach((set, m) => {
        for (let r = 0; r < evalBatch; r++) rows[m * evalBatch + r] = set.length ? set[Math.min(start + r, set.length - 1)] : 0;
      });
      const values = await this.exampleValues(pop, rows, evalBatch, metrics);
      values.forEach((v, i) =>
        sets.forEach((set, m) => {
          for (let r = 0; r < Math.min(evalBatch, set.length - start); r++) sums[i][m] += v[m * evalBatch + r];
        }),
      );
    }
    return Object.fromEntries(names.map((name, i) => [name, Array.from(sums[i], (s, m) => (sets[m].length ? s / sets[m].length : NaN))]));
  }

  dispose(): void {
    if (this.device) this.tf.dispose([this.device.x, this.device.y]);
    this.device = undefined;
  }

  /** Member id's epoch order, computed once per epoch. */
  private order(id: number, epoch: number): Int32Array {
    if (this.orders.epoch !== epoch) this.orders = { epoch, byMember: new Map() };
    let o = this.orders.byMember.get(id);
    if (!o) {
      const { split, train, seed, shuffle } = this.spec;
      this.orders.byMember.set(id, (o = memberEpochOrder(split, train.count, seed, shuffle, id, epoch, this.examples(id).train)));
    }
    return o;
  }

  /** Rows of the training set, member after member, as [N, B, ...input] and [N, B, label width]. */
  private gather(rows: Int32Array, n: number, size: number): { x: Tensor; y: Tensor } {
    const { tf } = this;
    const input = this.spec.input;
    const yWidth = this.host.yWidth;
    if (!this.onDevice) {
      const xWidth = input.reduce((a, b) => a * b, 1);
      return { x: tf.tensor(copyRows(this.host.x, rows, xWidth), [n, size, ...input]), y: tf.tensor(copyRows(this.host.y, rows, yWidth), [n, size, yWidth]) };
    }
    if (!this.device) {
      const count = this.spec.train.count;
      this.device = { x: tf.tensor(this.host.x, [count, ...this.spec.input]), y: tf.tensor(this.host.y, [count, this.host.yWidth]) };
    }
    const { x, y } = this.device;
    return tf.tidy(() => {
      const at = tf.tensor1d(rows, 'int32');
      return { x: tf.reshape(tf.gather(x, at), [n, size, ...this.spec.input]), y: tf.reshape(tf.gather(y, at), [n, size, this.host.yWidth]) };
    });
  }

  /** The loss and each metric of every row, in inference mode: one array [N * rows] per name. */
  private async exampleValues(pop: Population, rows: Int32Array, size: number, metrics: readonly string[]): Promise<Float32Array[]> {
    const { tf } = this;
    const { x, y } = this.gather(rows, pop.n, size);
    const { name, args } = this.spec.loss;
    const values = tf.tidy(() => {
      const out = pop.forward(x, false);
      return [exampleLosses(tf, name, args, out, y), ...metrics.map((metric) => exampleMetric(tf, metric, name, out, y))];
    });
    const data = await Promise.all(values.map((v) => v.data() as Promise<Float32Array>));
    tf.dispose([x, y, ...values]);
    return data;
  }
}

/**
 * A member's real rows in the batch [start, end) of an epoch of its `own` examples (src/data/member-splits.ts
 * pads the epoch after them). A batch that would hold none (the epoch's last batch one row long, and the
 * member one example short) keeps its one padding row as a real one: the member then takes that step on
 * its first example again, as it did before padding existed (docs/language.md says so, and netc train
 * prints a note), since a step with no rows still moves a member whose optimizer has momentum.
 */
export function realRows(own: number, start: number, end: number): number {
  const real = Math.min(end, own) - start;
  return real > 0 ? real : end - start;
}

/** Rows `rows` of a row-major array of rows `width` numbers wide, one after another. */
function copyRows(all: Float32Array, rows: Int32Array, width: number): Float32Array {
  const out = new Float32Array(rows.length * width);
  rows.forEach((r, i) => out.set(all.subarray(r * width, (r + 1) * width), i * width));
  return out;
}

/** Optimizer steps per epoch under a split: batches of L examples, L every member's epoch length. */
export function memberBatches(split: MemberSplit, count: number, batch: number): number {
  return batchRanges(epochLength(split, count), batch).length;
}
