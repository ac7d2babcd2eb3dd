// Members best first: by the validation metric (validation accuracy if there is one, else validation
// loss, else training loss), the order of the leaderboard, the report and `netc extract --best`.
import type { MemberMetrics } from '../train/member-metrics.js';

export interface MemberRow {
  member: number;
  hyperparameters: Record<string, number>;
  metrics: MemberMetrics;
  /** members that left the population early (halving, early stopping, divergence) */
  stopped?: { step: number; reason: string };
}

export function rankKey(rows: MemberRow[]): { key: keyof MemberMetrics; higherIsBetter: boolean } {
  const has = (k: keyof MemberMetrics) => rows.some((r) => r.metrics[k] !== undefined);
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

/** rank(rows, metric)[0] by one pass, without sorting (a progress line at 100,000 members); undefined for none. */
export function best(rows: MemberRow[], metric?: keyof MemberMetrics): MemberRow | undefined {
  const order = rankOrder(rows, metric);
  let top: MemberRow | undefined;
  for (const r of rows) if (top === undefined || order(r, top) < 0) top = r;
  return top;
}

/** rank's comparison: negative where `a` ranks before `b`. */
function rankOrder(rows: MemberRow[], metric?: keyof MemberMetrics): (a: MemberRow, b: MemberRow) => number {
  const { key, higherIsBetter } = metric ? { key: metric, higherIsBetter: metric.endsWith('accuracy') } : rankKey(rows);
  const tie: keyof MemberMetrics | undefined = metric ? undefined : key === 'val_accuracy' ? 'val_loss' : 'loss';
  const score = (r: MemberRow, k: keyof MemberMetrics | undefined, higher: boolean) => {
    const v = k && r.metrics[k];
    return v === undefined || !Number.isFinite(v) ? -Infinity : higher ? v : -v;
  };
  return (a, b) => score(b, key, higherIsBetter) - score(a, key, higherIsBetter) || score(b, tie, false) - score(a, tie, false) || a.member - b.member;
}
