// The table of members printed after training: hyperparameters and metrics, best first by the
// validation metric (validation accuracy if there is one, else validation loss, else training loss).
import Table from 'cli-table3';
import type { MemberMetrics } from '../runtime/trainer.js';
import { metricColumns } from '../vocabulary/losses.js';

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
  const { key, higherIsBetter } = metric ? { key: metric, higherIsBetter: metric.endsWith('accuracy') } : rankKey(rows);
  const tie: keyof MemberMetrics | undefined = metric ? undefined : key === 'val_accuracy' ? 'val_loss' : 'loss';
  const score = (r: MemberRow, k: keyof MemberMetrics | undefined, higher: boolean) => {
    const v = k && r.metrics[k];
    return v === undefined || !Number.isFinite(v) ? -Infinity : higher ? v : -v;
  };
  return [...rows].sort((a, b) => score(b, key, higherIsBetter) - score(a, key, higherIsBetter) || score(b, tie, false) - score(a, tie, false) || a.member - b.member);
}

const fmt = (v: number | undefined) => (v === undefined ? '' : Number.isFinite(v) ? (Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toExponential(2)) : String(v));

export function leaderboard(rows: MemberRow[], limit = 20): string {
  const ranked = rank(rows);
  const hyper = Object.keys(ranked[0]?.hyperparameters ?? {});
  const metrics = (metricColumns as (keyof MemberMetrics)[]).filter((k) => rows.some((r) => r.metrics[k] !== undefined));
  const table = new Table({
    head: ['rank', 'member', ...hyper, ...metrics],
    style: { head: [], border: [], compact: true },
    colAligns: ['right', 'right', ...hyper.map(() => 'right' as const), ...metrics.map(() => 'right' as const)],
  });
  const member = (r: MemberRow) => (r.stopped ? `${r.member} (stopped @${r.stopped.step})` : String(r.member));
  ranked.slice(0, limit).forEach((r, i) => table.push([i + 1, member(r), ...hyper.map((h) => fmt(r.hyperparameters[h])), ...metrics.map((m) => fmt(r.metrics[m]))]));
  const more = ranked.length > limit ? `\n(${ranked.length - limit} more members in summary.json)` : '';
  return table.toString() + more;
}
