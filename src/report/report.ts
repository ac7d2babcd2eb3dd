// The training report: RUN/report.html, one self-contained page (inline SVG charts drawn by
// render-svg.ts, inline CSS, no script) with the learning curves, each varied hyperparameter against the
// ranking metric, the leaderboard and, when the run has events.jsonl, the lineage of the population.
import { writeAtomic } from '../util/write-atomic.js';
import { join } from 'node:path';
import type { Chart as ChartSpec } from './chart.js';
import { rank, rankKey } from './rank.js';
import { curvesSpec, type CurveMetric } from './curves-spec.js';
import { extraMetrics } from '../vocabulary/losses.js';
import { lrCaption, lrMovers, lrSpec } from './lr-spec.js';
import { lineageSpec } from './lineage-spec.js';
import { page, type Figure } from './page.js';
import { renderSvg } from './render-svg.js';
import { isExploit, readRun, type MetricsLine, type ReportInput, type RunSummary } from './run-data.js';
import { CURVE_MEMBERS, LINEAGE_MEMBERS, SCATTER_MEMBERS, sampleNote, sampleRanked } from './sample.js';
import { useLogScale } from './scales.js';
import { scatterSpec, variedHyperparameters } from './scatter-spec.js';
import { maxOf } from '../util/extrema.js';
import { andList } from '../util/plural.js';

const curveMetrics: readonly CurveMetric[] = ['loss', ...extraMetrics];
const curveTitles: Record<CurveMetric, string> = { loss: 'Loss', accuracy: 'Accuracy', mse: 'Mean squared error', mae: 'Mean absolute error' };

/** A chart to draw: its figure id, caption and what to draw (src/report/chart.ts). */
interface Chart {
  id: string;
  title: string;
  caption: string;
  spec: ChartSpec;
}

export type { ReportInput, RunSummary, MetricsLine, MemberSummary, RunEvent, ExploitEvent, StopEvent } from './run-data.js';
export { readRun, RunDataError } from './run-data.js';

/**
 * Reads summary.json, metrics.jsonl and (optional) events.jsonl in runDir and writes runDir/report.html
 * atomically; returns its path. `written`: the summary netc train has just written to summary.json, which
 * is then not read back, and `lines`: metrics.jsonl's lines as they would read back, which netc train kept.
 */
export async function writeReport(runDir: string, written?: RunSummary, lines?: MetricsLine[]): Promise<string> {
  return (await writeRunReport(runDir, written, lines)).path;
}

/** writeReport, also giving what the report was drawn from. */
export async function writeRunReport(runDir: string, written?: RunSummary, lines?: MetricsLine[]): Promise<{ path: string; input: ReportInput }> {
  // the members whose curves are drawn: the sample renderReport takes, so that the rest of metrics.jsonl is not kept
  const input = await readRun(runDir, (summary) => (summary.per_member.length > CURVE_MEMBERS ? new Set(sampleRanked(rank(summary.per_member), CURVE_MEMBERS).map((m) => m.member)) : undefined), written, lines);
  const html = await renderReport(input);
  const path = join(runDir, 'report.html');
  writeAtomic(path, html);
  return { path, input };
}

/** The report page for a run's data (pure: nothing is read or written). */
export async function renderReport(input: ReportInput): Promise<string> {
  const members = input.summary.per_member;
  const ranked = rank(members);
  const rankedBy = rankKey(members);
  const best = ranked[0]?.member ?? -1;
  const bestNote = ranked.length ? `Grey: each member; coloured: member ${best}, the best by final ${rankedBy.key}.` : '';

  // a large population draws a sample of its members, evenly by rank (src/report/sample.ts)
  const curveSet = new Set(sampleRanked(ranked, CURVE_MEMBERS).map((m) => m.member));
  const curveLines = curveSet.size < members.length ? input.metrics.filter((l) => curveSet.has(l.member)) : input.metrics;
  const curveNote = bestNote + sampleNote(curveSet.size, members.length);
  const curves: Chart[] = [];
  for (const metric of curveMetrics) {
    const spec = curvesSpec(curveLines, metric, best);
    if (spec) curves.push({ id: `curve-${metric}`, title: curveTitles[metric], caption: `Per epoch, training and validation. ${curveNote}`, spec });
  }
  const rates = lrSpec(curveLines, best);
  if (rates) curves.push({ id: 'curve-lr', title: 'Learning rate', caption: `${lrCaption(lrMovers(curveLines, input.events))} ${curveNote}`, spec: rates });
  const scatters: Chart[] = [];
  const varied = variedHyperparameters(members);
  const scattered = sampleRanked(ranked, SCATTER_MEMBERS) as typeof members;
  for (const [i, param] of varied.entries()) {
    const spec = scatterSpec(scattered, param, rankedBy.key, best);
    const log = useLogScale(scattered.map((m) => m.hyperparameters[param]).filter((v) => Number.isFinite(v)));
    if (spec) scatters.push({ id: `hyper-${i}`, title: param, caption: `Each member's ${param}${log ? ' (log scale)' : ''} against its final ${rankedBy.key}.${sampleNote(scattered.length, members.length)}`, spec });
  }
  let lineage: Chart | undefined;
  if (input.events) {
    const steps = input.summary.steps ?? Math.max(0, maxOf(input.metrics.map((l) => l.step)));
    const drawn = sampleRanked(ranked, LINEAGE_MEMBERS).map((m) => m.member);
    const onChart = new Set(drawn);
    // with a sample, the events between members drawn
    const events = drawn.length < members.length ? input.events.filter((e) => onChart.has(e.member) && (!isExploit(e) || onChart.has(e.source))) : input.events;
    const spec = lineageSpec(events, drawn, steps, best);
    const caption = 'Each member from step 0 to where it stopped or the run ended; a segment where a member took the weights (and hyperparameters) of its source, the arrowhead on the member.';
    if (spec) lineage = { id: 'lineage-chart', title: 'Exploits and stops', caption: caption + sampleNote(drawn.length, members.length), spec };
  }

  const render = (c: Chart): Figure => ({ id: c.id, title: c.title, caption: c.caption, svg: renderSvg(c.spec) });
  const [curveFigures, scatterFigures, lineageFigure] = [curves.map(render), scatters.map(render), lineage ? render(lineage) : undefined];

  const first = members[0]?.hyperparameters ?? {};
  const shared = Object.fromEntries(Object.entries(first).filter(([k]) => !varied.includes(k)));
  return page({
    summary: input.summary,
    ranked,
    rankedBy,
    finishedAt: input.finishedAt,
    curves: curveFigures,
    scatters: scatterFigures,
    shared: varied.length ? {} : shared,
    varied,
    // read only where there are no curves: it scans every line for each metric
    noCurves: curveFigures.length ? undefined : noCurvesNote(input.metrics),
    lineage: input.events ? { figure: lineageFigure, events: input.events } : undefined,
  });
}

/** Why a run has no curves: no epoch ended, or every value logged is NaN or infinite. */
function noCurvesNote(lines: ReportInput['metrics']): string {
  if (!lines.length) return 'No epoch finished in this run (metrics.jsonl is empty), so there are no curves.';
  const logged = curveMetrics.filter((k) => lines.some((l) => l[k] !== undefined));
  return `There are no curves: every member's ${andList(logged)} is non-finite (NaN or infinite) in every epoch.`;
}
