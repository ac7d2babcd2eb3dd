// The learning-rate chart: each member's rate at each epoch end (metrics.jsonl's `lr`, the rate of the
// epoch's last step) drawn over that epoch, from step 0, against the step; every member thin and grey and
// the best one on top. Drawn only when a rate moved during the run (an lr_schedule, PBT's exploits): a
// constant rate is already in the leaderboard.
import { isExploit, type MetricsLine, type RunEvent } from './run-data.js';
import { bestLabel, lineKey, memberLines, OTHERS_LABEL, roleLegend } from './curves-spec.js';
import { BEST_COLOR, OTHER_COLOR, type Chart } from './chart.js';
import { decadeTicks, useLogScale } from './scales.js';

export interface LrPoint {
  step: number;
  member: number;
  lr: number;
  best: boolean;
  role: string;
}

/**
 * One point per member per epoch end that has a finite `lr` (a line written twice, by a resumed run, keeps
 * the last), and one at step 0 with the member's first rate: drawn step-before, each epoch's rate spans the
 * epoch, the first one from step 0.
 */
export function lrPoints(lines: MetricsLine[], best: number): LrPoint[] {
  const latest = new Map<number | string, MetricsLine>();
  for (const l of lines) if (typeof l.lr === 'number' && Number.isFinite(l.lr)) latest.set(lineKey(l), l);
  const points = [...latest.values()]
    .map((l) => ({ step: l.step, member: l.member, lr: l.lr!, best: l.member === best, role: l.member === best ? bestLabel(best) : OTHERS_LABEL }))
    .sort((a, b) => a.member - b.member || a.step - b.step);
  return points.flatMap((p, i) => (p.step > 0 && (i === 0 || points[i - 1].member !== p.member) ? [{ ...p, step: 0 }, p] : [p]));
}

/**
 * What moved the rates: a change between two epoch ends of a member is PBT's where an exploit of that
 * member came between them (at the first one's step or after, before the second's), the lr_schedule's
 * where none did.
 */
export function lrMovers(lines: MetricsLine[], events: RunEvent[] = []): { schedule: boolean; pbt: boolean } {
  const exploits = new Map<number, number[]>();
  for (const e of events) if (isExploit(e)) exploits.set(e.member, exploits.get(e.member)?.concat(e.step) ?? [e.step]);
  const movers = { schedule: false, pbt: false };
  const points = lrPoints(lines, -1).filter((p) => p.step > 0);
  points.forEach((p, i) => {
    const before = points[i - 1];
    if (!before || before.member !== p.member || before.lr === p.lr) return;
    const copied = exploits.get(p.member)?.some((step) => step >= before.step && step < p.step);
    movers[copied ? 'pbt' : 'schedule'] = true;
  });
  return movers;
}

/** The chart's caption, before the note on its colours: what a point is, and what moved the rates. */
export function lrCaption(movers: { schedule: boolean; pbt: boolean }): string {
  const why = [movers.schedule ? 'by the lr_schedule' : '', movers.pbt ? "where PBT's exploits gave a member a new one" : ''].filter(Boolean).join(' and ');
  return `Each member's rate in the last step of each epoch, drawn over that epoch (the first from step 0)${why ? `; rates moved ${why}` : ''}.`;
}

/**
 * Whether some member's finite rates differ in any of its lines. Where none do, none do among the lines
 * lrPoints keeps either (the last of each epoch), so there is no chart.
 */
function anyRateMoved(lines: MetricsLine[]): boolean {
  const first = new Map<number, number>();
  for (const l of lines) {
    if (typeof l.lr !== 'number' || !Number.isFinite(l.lr)) continue;
    const rate = first.get(l.member);
    if (rate === undefined) first.set(l.member, l.lr);
    else if (rate !== l.lr) return true;
  }
  return false;
}

/** The chart, or undefined when no member's rate moved. */
export function lrSpec(lines: MetricsLine[], best: number): Chart | undefined {
  // most runs keep one rate: said from the lines, before a point is made for each (seed000: 15,000)
  if (!anyRateMoved(lines)) return undefined;
  const points = lrPoints(lines, best);
  const first = new Map<number, number>();
  for (const p of points) if (!first.has(p.member)) first.set(p.member, p.lr);
  if (!points.some((p) => p.lr !== first.get(p.member))) return undefined;
  const values = points.map((p) => p.lr);
  const log = useLogScale(values);
  const ticks = log ? decadeTicks(values) : [];
  // only the roles with points in the legend: one member has no others
  const drawn = (isBest: boolean) => points.some((p) => p.best === isBest);
  const at = (p: LrPoint) => ({ x: p.step, y: p.lr });
  const label = (p: LrPoint) => `step: ${p.step}; learning rate: ${p.lr}; member: ${p.member}`;
  const others = memberLines(points.filter((p) => !p.best), at, label, { color: OTHER_COLOR, width: 1.2, opacity: 0.75, interpolate: 'step-before' });
  const top = memberLines(points.filter((p) => p.best), at, label, { color: BEST_COLOR, width: 3, interpolate: 'step-before', dots: 30 });
  return {
    width: 640,
    height: 220,
    x: { scale: { type: 'linear', nice: false }, axis: { title: 'step', format: 'd' } },
    y: {
      scale: log ? { type: 'log', domain: [Math.min(...ticks), Math.max(...ticks)] } : { type: 'linear', zero: true, nice: true },
      axis: log ? { title: 'learning rate (log scale)', values: ticks, format: '~g' } : { title: 'learning rate', format: '~g' },
    },
    panels: [{ marks: [...others, ...top] }],
    legend: { entries: roleLegend(best, drawn), symbol: 'stroke' },
  };
}
