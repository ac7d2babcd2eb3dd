// The report's HTML: one self-contained page (inline CSS and SVG, no script, nothing fetched) with a
// title block, the charts, the leaderboard and, for a population-based run, the lineage.
import type { MemberRow } from './rank.js';
import { escapeHtml, formatHyper, formatMetric, hyperCell } from './format.js';
import { isExploit, isStop, metricNames, type MetricName, type RunEvent, type RunSummary } from './run-data.js';
import { BEST_COLOR, FONT } from './chart.js';
import { groupBySetting, settingsTable } from './settings.js';
import { EVENT_ROWS, TABLE_ROWS } from './sample.js';

export interface Figure {
  id: string;
  title: string;
  caption: string;
  svg: string;
}

export interface PageInput {
  summary: RunSummary;
  /** members best first */
  ranked: MemberRow[];
  rankedBy: { key: MetricName; higherIsBetter: boolean };
  finishedAt?: Date | string;
  curves: Figure[];
  scatters: Figure[];
  /** hyperparameters every member shares, shown when none varies */
  shared: Record<string, number>;
  /** the hyperparameters that differ between members (with no scatter: none has a finite final metric) */
  varied?: string[];
  /** why there are no curves, when there are none */
  noCurves?: string;
  /** undefined: the run has no events.jsonl */
  lineage?: { figure?: Figure; events: RunEvent[] };
}

const formatHypers = (h: Record<string, number>): string =>
  Object.entries(h)
    .map(([k, v]) => `${k} = ${formatHyper(v)}`)
    .join(', ');

function formatTime(t: Date | string | undefined): string | undefined {
  if (t === undefined) return undefined;
  const d = typeof t === 'string' ? new Date(t) : t;
  return Number.isNaN(d.getTime()) ? String(t) : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function page(p: PageInput): string {
  const s = p.summary;
  const name = s.model ?? 'run';
  const best = p.ranked[0];
  const title = `netc report: ${name}${s.file ? ` (${s.file})` : ''}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<main>
${header(p)}
${s.unfinished ? unfinishedNote(s.unfinished) : ''}
${best ? '' : '<p class="note">This run has no members.</p>'}
${section('curves', 'Learning curves', p.curves.length ? p.curves.map(figure).join('\n') : `<p class="note">${escapeHtml(p.noCurves ?? 'There are no curves.')}</p>`)}
${section('hyperparameters', 'Hyperparameters', hyperparameters(p))}
${s.cross_validation ? section('cross-validation', 'Cross-validation', settingsTable(s.cross_validation, p.rankedBy.key)) : ''}
${section('leaderboard', 'Leaderboard', leaderboardTable(p))}
${p.lineage ? section('lineage', 'Lineage', lineage(p.lineage)) : ''}
<footer>Written by netc from ${s.unfinished ? 'run.json' : 'summary.json'} and metrics.jsonl${p.lineage ? ' and events.jsonl' : ''}.</footer>
</main>
</body>
</html>
`;
}

function header(p: PageInput): string {
  const s = p.summary;
  const facts: [string, string | undefined][] = [
    ['members', s.members !== undefined ? String(s.members) : String(p.ranked.length)],
    ['steps', s.steps !== undefined ? `${s.steps}${s.epochs !== undefined ? ` (${s.epochs} epoch${s.epochs === 1 ? '' : 's'})` : ''}${s.stopped_early ? ', stopped early' : ''}${typeof s.resumed_from_step === 'number' ? `, resumed at step ${s.resumed_from_step}` : ''}` : undefined],
    ['backend', s.backend],
    ['lowering', s.lowering],
    ['seed', s.seed !== undefined ? String(s.seed) : undefined],
    ['training time', s.train_seconds !== undefined ? `${s.train_seconds.toFixed(1)} s${s.member_steps_per_second !== undefined ? ` (${Math.round(s.member_steps_per_second)} member-steps/s)` : ''}` : undefined],
    ['finished', formatTime(p.finishedAt)],
  ];
  const best = p.ranked[0];
  const bestLine = best
    ? `<p class="best">Best member: <span class="swatch"></span><strong>member ${best.member}</strong>, ${p.rankedBy.key} ${formatMetric(best.metrics[p.rankedBy.key])}` +
      `${Object.keys(best.hyperparameters).length ? ` (${escapeHtml(formatHypers(best.hyperparameters))})` : ''}. ` +
      `Members are ranked by ${p.rankedBy.key} (${p.rankedBy.higherIsBetter ? 'higher' : 'lower'} is better).</p>`
    : '';
  return `<header>
<h1>${escapeHtml(s.model ?? 'run')}${s.file ? ` <span class="file">${escapeHtml(s.file)}</span>` : ''}</h1>
<dl class="facts">${facts
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `<div><dt>${k}</dt><dd>${escapeHtml(v)}</dd></div>`)
    .join('')}</dl>
${bestLine}
</header>`;
}

const unfinishedNote = (u: NonNullable<RunSummary['unfinished']>) =>
  `<p class="note">This run has not finished: it has no summary.json, so this report is drawn from metrics.jsonl, up to step ${u.step}. Finish it with <code>${escapeHtml(u.resume)}</code>, which rewrites this report.</p>`;

const section = (id: string, title: string, body: string) => `<section id="${id}">\n<h2>${escapeHtml(title)}</h2>\n${body}\n</section>`;

const figure = (f: Figure) => `<figure id="${f.id}">\n<figcaption><strong>${escapeHtml(f.title)}.</strong> ${escapeHtml(f.caption)}</figcaption>\n${f.svg}\n</figure>`;

function hyperparameters(p: PageInput): string {
  if (p.scatters.length) return `<div class="grid">\n${p.scatters.map(figure).join('\n')}\n</div>`;
  if (p.varied?.length) {
    const names = p.varied.join(' and ');
    return `<p class="note">${escapeHtml(`${names} ${p.varied.length > 1 ? 'vary' : 'varies'}, but no member has a finite final ${p.rankedBy.key}, so there is nothing to plot.`)}</p>`;
  }
  const shared = Object.keys(p.shared).length ? ` (${escapeHtml(formatHypers(p.shared))} for all)` : '';
  return `<p class="note">No hyperparameter differs between the members${shared}: they differ only in their random initialisation.</p>`;
}

function leaderboardTable(p: PageInput): string {
  if (!p.ranked.length) return '<p class="note">No members.</p>';
  const hyper = [...new Set(p.ranked.flatMap((r) => Object.keys(r.hyperparameters)))];
  const metrics = metricNames.filter((k) => p.ranked.some((r) => r.metrics[k] !== undefined));
  const stopped = new Map<number, { step: number; reason: string }>();
  for (const e of p.lineage?.events.filter(isStop) ?? []) if (!stopped.has(e.member)) stopped.set(e.member, { step: e.step, reason: e.reason ?? '' });
  const withStopped = stopped.size > 0;
  // under kfold the members are grouped by setting, best setting first, each with its fold
  const cv = p.summary.cross_validation;
  const fold = cv ? new Map(p.summary.per_member.map((m) => [m.member, m])) : undefined;
  const rowsInOrder = cv ? groupBySetting(p.ranked, cv) : p.ranked;
  const place = cv ? ['setting', 'fold'] : [];
  const head = ['rank', 'member', ...place, ...hyper, ...metrics, ...(withStopped ? ['stopped'] : [])]
    .map((h) => `<th${h === p.rankedBy.key ? ' class="key"' : h === 'stopped' ? ' class="text"' : ''}>${escapeHtml(h)}</th>`)
    .join('');
  // a row's rank is its place, but where kfold groups the rows by setting (two maps of every member only then)
  const rank = cv ? new Map(p.ranked.map((r, i) => [r.member, i + 1])) : undefined;
  const rows = rowsInOrder
    .slice(0, TABLE_ROWS)
    .map((r, j) => {
      const i = rank ? rank.get(r.member)! - 1 : j;
      const cells = [
        `<td>${i + 1}</td>`,
        `<td>${r.member}${r.copied ? ` (copied ${r.copied.source} @${r.copied.step})` : ''}</td>`,
        ...(fold ? [`<td>${fold.get(r.member)?.setting ?? ''}</td>`, `<td>${fold.get(r.member)?.fold ?? ''}</td>`] : []),
        ...hyper.map((h) => `<td>${hyperCell(r, h, formatHyper)}</td>`),
        ...metrics.map((m) => `<td${m === p.rankedBy.key ? ' class="key"' : ''}>${formatMetric(r.metrics[m])}</td>`),
        ...(withStopped ? [stoppedCell(stopped.get(r.member))] : []),
      ];
      return `<tr data-member="${r.member}"${i === 0 ? ' class="best"' : ''}>${cells.join('')}</tr>`;
    })
    .join('\n');
  const more = rowsInOrder.length > TABLE_ROWS ? `\n<p class="note">The first ${TABLE_ROWS} of ${rowsInOrder.length} members; every member is in summary.json.</p>` : '';
  const copied = p.ranked.some((r) => r.copied) ? `\n<p class="note">${escapeHtml(COPIED_NOTE)}</p>` : '';
  return `<table class="leaderboard">\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>${more}${copied}`;
}

const COPIED_NOTE =
  "copied K @S: the run stopped after PBT gave the member K's weights at step S, before its next metrics; a → b: its metrics were measured under a, it goes on with b.";

/** Where a member was stopped; the reason (often long) is in the events table and in the cell's tooltip. */
const stoppedCell = (s: { step: number; reason: string } | undefined) => (s ? `<td class="text" title="${escapeHtml(s.reason)}">step ${s.step}</td>` : '<td></td>');

function lineage(l: NonNullable<PageInput['lineage']>): string {
  const chart = l.figure ? figure(l.figure) : '<p class="note">events.jsonl holds no exploit or stop events.</p>';
  if (!l.events.length) return chart;
  const rows = [...l.events]
    .sort((a, b) => a.step - b.step)
    .slice(0, EVENT_ROWS)
    .map((e) => {
      const detail = isExploit(e) ? formatHypers(e.hyperparameters ?? {}) : isStop(e) ? e.reason ?? '' : otherDetail(e);
      const source = isExploit(e) ? String(e.source) : '';
      return `<tr><td>${e.step}</td><td class="text">${escapeHtml(String(e.event))}</td><td>${e.member}</td><td>${source}</td><td class="text">${escapeHtml(detail)}</td></tr>`;
    })
    .join('\n');
  const more = l.events.length > EVENT_ROWS ? `\n<p class="note">The first ${EVENT_ROWS} of ${l.events.length} events; every event is in events.jsonl.</p>` : '';
  const table = `<table class="events">\n<thead><tr><th>step</th><th class="text">event</th><th>member</th><th>source</th><th class="text">hyperparameters / reason</th></tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>${more}`;
  return `${chart}\n<details${l.events.length <= 30 ? ' open' : ''}>\n<summary>${l.events.length} event${l.events.length === 1 ? '' : 's'}</summary>\n${table}\n</details>`;
}

function otherDetail(e: RunEvent): string {
  const { step: _s, event: _e, member: _m, ...rest } = e as unknown as Record<string, unknown>;
  return Object.keys(rest).length ? JSON.stringify(rest) : '';
}

const css = `
:root { color-scheme: light; }
body { margin: 0; background: #f8f9fa; color: #1f2937; font: 14px/1.45 ${FONT}; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 40px; background: white; min-height: 100vh; box-sizing: border-box; }
h1 { font-size: 24px; margin: 0 0 10px; font-weight: 600; }
h1 .file { font: 14px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: #6b7280; font-weight: normal; margin-left: 8px; }
h2 { font-size: 18px; font-weight: 600; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #e5e7eb; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 28px; margin: 0 0 12px; }
.facts div { display: flex; flex-direction: column; }
.facts dt { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: #6b7280; }
.facts dd { margin: 0; font-weight: 500; }
.best { margin: 8px 0 0; }
.swatch { display: inline-block; width: 18px; height: 4px; background: ${BEST_COLOR}; vertical-align: middle; margin-right: 6px; border-radius: 2px; }
figure { margin: 12px 0 20px; }
figcaption { color: #4b5563; margin-bottom: 4px; }
figcaption strong { color: #1f2937; }
svg { max-width: 100%; height: auto; display: block; }
.grid { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.grid figure { margin: 8px 0; }
.note { color: #6b7280; font-style: italic; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 8px 0; }
th, td { padding: 4px 12px; text-align: right; border-bottom: 1px solid #eef0f2; white-space: nowrap; }
th { font-weight: 600; border-bottom: 2px solid #d1d5db; background: #f9fafb; position: sticky; top: 0; }
td.text, th.text { text-align: left; white-space: normal; }
th.key, td.key { background: #f3f4f6; }
tr.best td { background: #fff4e6; font-weight: 600; }
tr.best td:first-child { box-shadow: inset 4px 0 0 ${BEST_COLOR}; }
details summary { cursor: pointer; color: #4b5563; margin: 8px 0; }
footer { margin-top: 36px; color: #9ca3af; font-size: 12px; }
`;
