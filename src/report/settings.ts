// The report's cross-validation section (runs with `split: kfold(k)`): each setting of the varied
// hyperparameters with its members, one per fold, and the mean ± standard deviation of every metric
// over them, best first; and the leaderboard's members grouped by setting, in that order.
import type { MemberRow } from './rank.js';
import { escapeHtml, formatHyper, formatMetric } from './format.js';
import type { RunSummary } from './run-data.js';

export type CrossValidation = NonNullable<RunSummary['cross_validation']>;

/** The settings table, best setting first. */
export function settingsTable(cv: CrossValidation, key: string): string {
  const hyper = [...new Set(cv.settings.flatMap((s) => Object.keys(s.hyperparameters)))];
  const metrics = [...new Set(cv.settings.flatMap((s) => Object.keys(s.metrics)))];
  const head = ['rank', 'setting', 'members', ...hyper, ...metrics].map((h) => `<th${h === key ? ' class="key"' : ''}>${escapeHtml(h)}</th>`).join('');
  const rows = cv.settings
    .map((s, i) => {
      const cells = [
        `<td>${i + 1}</td>`,
        `<td>${s.setting}</td>`,
        `<td>${escapeHtml(s.members.join(', '))}</td>`,
        ...hyper.map((h) => `<td>${formatHyper(s.hyperparameters[h])}</td>`),
        ...metrics.map((m) => `<td${m === key ? ' class="key"' : ''}>${s.metrics[m] ? `${formatMetric(s.metrics[m].mean)} ± ${formatMetric(s.metrics[m].sd)}` : ''}</td>`),
      ];
      return `<tr data-setting="${s.setting}"${i === 0 ? ' class="best"' : ''}>${cells.join('')}</tr>`;
    })
    .join('\n');
  const note = `<p>Split: kfold(${cv.k}). The ${cv.k} members of a setting share every varied hyperparameter; member i validates on fold i mod ${cv.k} of the training examples and trains on the others. Each metric is the mean ± standard deviation (over the folds, ddof 0) of the members' final values, each on its own held-out fold.</p>`;
  return `${note}\n<table class="settings">\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>`;
}

/** The members in the settings' order (best setting first), each setting's members by fold. */
export function groupBySetting(rows: MemberRow[], cv: CrossValidation): MemberRow[] {
  const byMember = new Map(rows.map((r) => [r.member, r]));
  return cv.settings.flatMap((s) => s.members.flatMap((m) => (byMember.has(m) ? [byMember.get(m)!] : [])));
}
