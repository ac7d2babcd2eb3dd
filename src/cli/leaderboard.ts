// The table of members printed after training: hyperparameters and metrics, best first (report/rank.ts).
import Table from 'cli-table3';
import type { MemberMetrics } from '../train/member-metrics.js';
import { metricColumns } from '../vocabulary/losses.js';
import { formatMetric } from '../report/format.js';
import { rank, type MemberRow } from '../report/rank.js';

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
  ranked.slice(0, limit).forEach((r, i) => table.push([i + 1, member(r), ...hyper.map((h) => formatMetric(r.hyperparameters[h])), ...metrics.map((m) => formatMetric(r.metrics[m]))]));
  const more = ranked.length > limit ? `\n(${ranked.length - limit} more members in summary.json)` : '';
  return table.toString() + more;
}
