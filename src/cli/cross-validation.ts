// Cross-validation under `split: kfold(k)`: the k members of a setting (members s*k ... s*k + k - 1, one
// per fold) share every varied value, so the setting is scored by the mean of its members' metrics, each
// on its own held-out fold, with their standard deviation (over the folds, ddof 0, as scikit-learn's
// cross_validate and GridSearchCV report it). The settings are ranked as the leaderboard ranks members.
import Table from 'cli-table3';
import type { MemberMetrics } from '../train/member-metrics.js';
import { metricColumns } from '../vocabulary/losses.js';
import { settingOf, type MemberSplit } from '../vocabulary/splits.js';
import { rank, type MemberRow } from '../report/rank.js';

/** One setting: its members (one per fold), their shared hyperparameters and each metric's mean and sd. */
export interface SettingSummary {
  setting: number;
  members: number[];
  hyperparameters: Record<string, number>;
  /** by metric name: the mean over the setting's members and the standard deviation (ddof 0) */
  metrics: Record<string, { mean: number; sd: number }>;
}

/** The settings of a kfold run, best first. */
export function crossValidation(rows: MemberRow[], split: MemberSplit): SettingSummary[] {
  const bySetting = new Map<number, MemberRow[]>();
  for (const r of rows) {
    const s = settingOf(split, r.member);
    bySetting.set(s, [...(bySetting.get(s) ?? []), r]);
  }
  const settings = [...bySetting].map(([setting, members]) => settingSummary(setting, members));
  // ranked by the means, as the leaderboard ranks members by their values
  const asRows: MemberRow[] = settings.map((s) => ({ member: s.setting, hyperparameters: s.hyperparameters, metrics: means(s) }));
  return rank(asRows).map((r) => settings.find((s) => s.setting === r.member)!);
}

function settingSummary(setting: number, members: MemberRow[]): SettingSummary {
  const names = (metricColumns as (keyof MemberMetrics)[]).filter((k) => members.some((r) => r.metrics[k] !== undefined));
  const metrics = Object.fromEntries(names.map((name) => [name, meanAndSd(members.map((r) => r.metrics[name] ?? NaN))]));
  return { setting, members: members.map((r) => r.member).sort((a, b) => a - b), hyperparameters: members[0].hyperparameters, metrics };
}

/** The mean and the standard deviation (ddof 0) of values; NaN where any is not finite. */
export function meanAndSd(values: number[]): { mean: number; sd: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
  return { mean, sd: Math.sqrt(variance) };
}

const means = (s: SettingSummary) => Object.fromEntries(Object.entries(s.metrics).map(([k, v]) => [k, v.mean])) as unknown as MemberMetrics;

const fmt = (v: number) => (Number.isFinite(v) ? (Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toExponential(2)) : String(v));

/** `0.8123 ± 0.0121` */
export const formatMeanSd = ({ mean, sd }: { mean: number; sd: number }): string => `${fmt(mean)} ± ${fmt(sd)}`;

/** The settings table printed after a kfold run: each setting's hyperparameters and cross-validated metrics. */
export function settingsLeaderboard(settings: SettingSummary[], k: number, limit = 20): string {
  const hyper = Object.keys(settings[0]?.hyperparameters ?? {});
  const metrics = metricColumns.filter((k) => settings.some((s) => s.metrics[k] !== undefined));
  const table = new Table({
    head: ['rank', 'setting', 'members', ...hyper, ...metrics],
    style: { head: [], border: [], compact: true },
    colAligns: ['right', 'right', 'right', ...hyper.map(() => 'right' as const), ...metrics.map(() => 'right' as const)],
  });
  const members = (s: SettingSummary) => (s.members.length > 1 ? `${s.members[0]}-${s.members[s.members.length - 1]}` : String(s.members[0]));
  settings.slice(0, limit).forEach((s, i) => table.push([i + 1, s.setting, members(s), ...hyper.map((h) => fmt(s.hyperparameters[h])), ...metrics.map((m) => formatMeanSd(s.metrics[m]))]));
  const more = settings.length > limit ? `\n(${settings.length - limit} more settings in summary.json)` : '';
  return `cross-validated over ${k} folds: each setting's mean ± standard deviation over its members, each scored on its own held-out fold\n` + table.toString() + more;
}
