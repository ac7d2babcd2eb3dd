// Members best first: by the validation metric (validation accuracy if there is one, else validation
// loss, else training loss), the order of the leaderboard, the report and `netc extract --best`.
import type { MemberMetrics } from '../train/member-metrics.js';

export interface MemberRow {
  member: number;
  hyperparameters: Record<string, number>;
  metrics: MemberMetrics;
  /** members that left the population early (halving, early stopping, divergence) */
  stopped?: { step: number; reason: string };
  /**
   * PBT copied member `source`'s weights into this member at `step`, after its metrics: `hyperparameters` are
   * its values since, the row's own those its metrics were measured under
   */
  copied?: { step: number; source: number; hyperparameters: Record<string, number> };
}

export function rankKey(rows: MemberRow[]): { key: keyof MemberMetrics; higherIsBetter: boolean } {
  return keyFor((k) => rows.some((r) => r.metrics[k] !== undefined));
}

/** rankKey where `has(k)`: some member has metric k. */
function keyFor(has: (k: keyof MemberMetrics) => boolean): { key: keyof MemberMetrics; higherIsBetter: boolean } {
  if (has('val_accuracy')) return { key: 'val_accuracy', higherIsBetter: true };
  if (has('val_loss')) return { key: 'val_loss', higherIsBetter: false };
  return { key: 'loss', higherIsBetter: false };
}

/**
 * Rows best first; non-finite values (diverged members) last. By default by rankKey's metric, ties broken
 * by the loss of the same split; with `metric`, by that metric alone (accuracies higher, losses lower).
 */
export function rank(rows: MemberRow[], metric?: keyof MemberMetrics): MemberRow[] {
  return [...rows].sort(rankOrder(rows, metric));
}

/** rank's comparison: negative where `a` ranks before `b`. */
function rankOrder(rows: MemberRow[], metric?: keyof MemberMetrics): (a: MemberRow, b: MemberRow) => number {
  const order = metricsOrder(metric ? undefined : rankKey(rows), metric);
  return (a, b) => order(a.metrics, a.member, b.metrics, b.member);
}

/** The comparison of two members by their metrics and ids, by `metric` alone or else by `ranked`'s key and its tie. */
function metricsOrder(ranked: ReturnType<typeof rankKey> | undefined, metric?: keyof MemberMetrics): (a: MemberMetrics, am: number, b: MemberMetrics, bm: number) => number {
  const { key, higherIsBetter } = metric ? { key: metric, higherIsBetter: metric.endsWith('accuracy') } : ranked!;
  const tie: keyof MemberMetrics | undefined = metric ? undefined : key === 'val_accuracy' ? 'val_loss' : 'loss';
  const score = (m: MemberMetrics, k: keyof MemberMetrics | undefined, higher: boolean) => {
    const v = k && m[k];
    return v === undefined || !Number.isFinite(v) ? -Infinity : higher ? v : -v;
  };
  return (a, am, b, bm) => score(b, key, higherIsBetter) - score(a, key, higherIsBetter) || score(b, tie, false) - score(a, tie, false) || am - bm;
}

/**
 * The position of rank()'s first member among `members` (ids) with their `metrics`, by one pass without
 * sorting and without a row object each (the progress line at the end of every epoch of 100,000 members);
 * by `metric` alone where given, as rank(rows, metric); -1 for none.
 */
export function bestIndex(members: readonly number[], metrics: readonly MemberMetrics[], metric?: keyof MemberMetrics): number {
  const order = metricsOrder(metric ? undefined : keyFor((k) => metrics.some((m) => m[k] !== undefined)), metric);
  let top = -1;
  for (let i = 0; i < metrics.length; i++) if (top < 0 || order(metrics[i], members[i], metrics[top], members[top]) < 0) top = i;
  return top;
}
