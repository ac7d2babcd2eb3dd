// Members' metrics on the host as the trainer keeps them: example-weighted sums per member, a member's row
// by metric name, and the row's JSON in a checkpoint.
import type { SumsState } from './checkpoint.js';
import { fromJsonNumber, jsonNumber } from './schedules.js';

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

/** A member's metrics for a checkpoint's JSON, and back: non-finite values travel as strings. */
export const encodeMetrics = (m: MemberMetrics) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, jsonNumber(v)]));
export const decodeMetrics = (m: Record<string, number | string | null>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, fromJsonNumber(v)])) as unknown as MemberMetrics;

/** Member m's value of each metric. */
export const pick = (values: Record<string, ArrayLike<number>>, m: number): Record<string, number> => Object.fromEntries(Object.entries(values).map(([name, v]) => [name, v[m]]));

/** A member's row: the training value of each metric, then with validation data each one's val_ twin. */
export function metricsRow(names: readonly string[], train: Record<string, number>, val?: Record<string, number>): MemberMetrics {
  const row: Record<string, number> = {};
  for (const name of names) row[name] = train[name];
  if (val) for (const name of names) row[`val_${name}`] = val[name];
  return row as unknown as MemberMetrics;
}

/**
 * Per-member example-weighted sums of each metric (by name), on the host, keyed by member id. A batch is
 * added for all members at once into one Float64Array per metric (no object per member and step); each
 * member's sum of a metric is still its values × batch size added one batch after another, in float64.
 */
export class HostSums {
  /** each member's position in the arrays, in the order members were first summed (toJSON's order) */
  private readonly slots = new Map<number, number>();
  private ids: number[] = [];
  private counts = new Float64Array(0);
  /** by metric, in the order the names were first summed */
  private readonly sums = new Map<string, Float64Array>();
  /** addBatch's scratch: each batch member's position, -1 for one left out */
  private at = new Int32Array(0);
  /** the positions of every member of one ids array, all given (positions()); forgotten with the slots */
  private known?: { ids: readonly number[]; at: Int32Array };
  /** the arrays of the metrics before the last clear(), for the next epoch to reuse */
  private readonly spare = new Map<string, Float64Array>();

  constructor(from?: SumsState) {
    this.restore(from);
  }

  /** Replaces the sums with what toJSON() gave. */
  restore(from?: SumsState): void {
    this.clear();
    if (!from?.ids?.length) return;
    const at = from.ids.map((id) => this.slot(id));
    at.forEach((p, i) => (this.counts[p] = from.counts?.[i] ?? from.count));
    for (const [name, v] of Object.entries(from.values)) {
      const sums = this.metric(name);
      at.forEach((p, i) => (sums[p] = v[i] ?? 0));
    }
  }

  /**
   * One batch of `size` examples: for each member m of `ids` whose loss is finite, each metric's
   * values[name][m] × size is added to its sums and `size` to its count. `rows`, where a member's batch
   * is padded (src/runtime/member-data.ts), gives each member's real rows, which count in place of `size`.
   */
  addBatch(ids: readonly number[], values: Record<string, ArrayLike<number>>, size: number, rows?: ArrayLike<number>): void {
    const at = this.positions(ids, values.loss);
    for (let m = 0; m < ids.length; m++) if (at[m] >= 0) this.counts[at[m]] += rows ? rows[m] : size;
    for (const name in values) {
      const sums = this.metric(name);
      const v = values[name];
      for (let m = 0; m < ids.length; m++) if (at[m] >= 0) sums[at[m]] += v[m] * (rows ? rows[m] : size);
    }
  }

  /** Each named metric's mean over the examples summed; NaN for a member with none. */
  mean(id: number, names: readonly string[]): { loss: number } & Record<string, number> {
    const i = this.slots.get(id);
    const count = i === undefined ? 0 : this.counts[i];
    const row: Record<string, number> = {};
    for (const name of names) {
      const sums = this.sums.get(name);
      row[name] = count && sums ? sums[i!] / count : NaN;
    }
    return row as { loss: number } & Record<string, number>;
  }

  /** Forgets every member and metric (an epoch's end), keeping the arrays for the next. */
  clear(): void {
    this.slots.clear();
    this.known = undefined;
    this.ids = [];
    this.counts.fill(0);
    for (const [name, sums] of this.sums) this.spare.set(name, sums);
    this.sums.clear();
  }

  toJSON(): SumsState {
    const n = this.ids.length;
    const counts = Array.from(this.counts.subarray(0, n));
    const values = Object.fromEntries([...this.sums].map(([name, sums]) => [name, Array.from(sums.subarray(0, n))]));
    return { count: counts[0] ?? 0, ids: [...this.ids], counts, values };
  }

  /**
   * Each member's position (slot()), -1 for one whose loss is not finite. A batch whose every loss is
   * finite has given every member of `ids` its position: the next batches of the same array take them
   * from there, without a lookup by id per member and batch.
   */
  private positions(ids: readonly number[], loss: ArrayLike<number>): Int32Array {
    if (this.at.length < ids.length) this.at = new Int32Array(ids.length);
    const at = this.at;
    const known = this.known?.ids === ids ? this.known.at : undefined;
    let finite = true;
    for (let m = 0; m < ids.length; m++) {
      if (!Number.isFinite(loss[m])) {
        at[m] = -1;
        finite = false;
      } else at[m] = known ? known[m] : this.slot(ids[m]);
    }
    if (!known && finite) this.known = { ids, at: at.slice(0, ids.length) };
    return at;
  }

  /** The member's position, given one (zero sums) the first time it is seen. */
  private slot(id: number): number {
    let i = this.slots.get(id);
    if (i !== undefined) return i;
    i = this.ids.length;
    this.slots.set(id, i);
    this.ids.push(id);
    if (i >= this.counts.length) this.grow(Math.max(8, 2 * this.counts.length));
    return i;
  }

  /** A metric's sums, zero for every member so far the first time it is seen. */
  private metric(name: string): Float64Array {
    let sums = this.sums.get(name);
    if (sums) return sums;
    const spare = this.spare.get(name);
    sums = spare?.length === this.counts.length ? spare.fill(0) : new Float64Array(this.counts.length);
    this.spare.delete(name);
    this.sums.set(name, sums);
    return sums;
  }

  private grow(capacity: number): void {
    const wider = (a: Float64Array) => {
      const b = new Float64Array(capacity);
      b.set(a);
      return b;
    };
    this.counts = wider(this.counts);
    for (const [name, sums] of this.sums) this.sums.set(name, wider(sums));
  }
}
