// The table of members printed after training: hyperparameters and metrics, best first (report/rank.ts).
import Table from 'cli-table3';
import type { MemberMetrics } from '../train/member-metrics.js';
import { metricColumns } from '../vocabulary/losses.js';
import { formatMetric, hyperCell } from '../report/format.js';
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
  const member = (r: MemberRow) => [String(r.member), ...(r.copied ? [`(copied ${r.copied.source} @${r.copied.step})`] : []), ...(r.stopped ? [`(stopped @${r.stopped.step})`] : [])].join(' ');
  ranked.slice(0, limit).forEach((r, i) => table.push([i + 1, member(r), ...hyper.map((h) => hyperCell(r, h, formatMetric)), ...metrics.map((m) => formatMetric(r.metrics[m]))]));
  const more = ranked.length > limit ? `\n(${ranked.length - limit} more members in summary.json)` : '';
  const copied = ranked.slice(0, limit).some((r) => r.copied) ? `\n${COPIED_NOTE}` : '';
  return table.toString() + more + copied;
}

const COPIED_NOTE = "(copied K @S: at step S, after its metrics, the member took member K's weights; a → b: its metrics were measured under a, it goes on with b)";
