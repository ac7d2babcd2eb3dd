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

/** Per-member example-weighted sums of each metric (by name), on the host, keyed by member id. */
export class HostSums {
  private sums = new Map<number, { values: Record<string, number>; count: number }>();
  constructor(from?: SumsState) {
    this.restore(from);
  }

  /** Replaces the sums with what toJSON() gave. */
  restore(from?: SumsState): void {
    this.sums.clear();
    if (!from?.ids) return;
    from.ids.forEach((id, i) => this.sums.set(id, { values: Object.fromEntries(Object.entries(from.values).map(([name, v]) => [name, v[i] ?? 0])), count: from.counts?.[i] ?? from.count }));
  }

  add(id: number, values: Record<string, number>, size: number): void {
    const s = this.sums.get(id) ?? { values: {}, count: 0 };
    for (const [name, v] of Object.entries(values)) s.values[name] = (s.values[name] ?? 0) + v * size;
    s.count += size;
    this.sums.set(id, s);
  }

  /** Each named metric's mean over the examples summed; NaN for a member with none. */
  mean(id: number, names: readonly string[]): { loss: number } & Record<string, number> {
    const s = this.sums.get(id);
    return Object.fromEntries(names.map((name) => [name, s && s.count && s.values[name] !== undefined ? s.values[name] / s.count : NaN])) as { loss: number } & Record<string, number>;
  }

  clear(): void {
    this.sums.clear();
  }

  toJSON(): SumsState {
    const ids = [...this.sums.keys()];
    const v = ids.map((id) => this.sums.get(id)!);
    const names = [...new Set(v.flatMap((x) => Object.keys(x.values)))];
    return { count: v[0]?.count ?? 0, ids, counts: v.map((x) => x.count), values: Object.fromEntries(names.map((name) => [name, v.map((x) => x.values[name] ?? 0)])) };
  }
}
