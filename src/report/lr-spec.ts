// The learning-rate chart: each member's rate at each epoch end (metrics.jsonl's `lr`, the rate of the
// epoch's last step) drawn over that epoch, from step 0, against the step; every member thin and grey and
// the best one on top. Drawn only when a rate moved during the run (an lr_schedule, PBT's exploits): a
// constant rate is already in the leaderboard.
import type { TopLevelSpec } from 'vega-lite';
import { isExploit, type MetricsLine, type RunEvent } from './run-data.js';
import { bestLabel, OTHERS_LABEL, roleColor } from './curves-spec.js';
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
  const latest = new Map<string, MetricsLine>();
  for (const l of lines) if (typeof l.lr === 'number' && Number.isFinite(l.lr)) latest.set(`${l.member}/${l.epoch}`, l);
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

/** The chart, or undefined when no member's rate moved. */
export function lrSpec(lines: MetricsLine[], best: number): TopLevelSpec | undefined {
  const points = lrPoints(lines, best);
  const first = new Map<number, number>();
  for (const p of points) if (!first.has(p.member)) first.set(p.member, p.lr);
  if (!points.some((p) => p.lr !== first.get(p.member))) return undefined;
  const values = points.map((p) => p.lr);
  const log = useLogScale(values);
  const ticks = log ? decadeTicks(values) : [];
  // only the layers with points: one member has no others, and a layer with no data gives vega an empty extent
  const drawn = (isBest: boolean) => points.some((p) => p.best === isBest);
  const color = roleColor(best, drawn);
  const x = { field: 'step', type: 'quantitative' as const, title: 'step', scale: { nice: false }, axis: { format: 'd' } };
  const y = {
    field: 'lr',
    type: 'quantitative' as const,
    title: log ? 'learning rate (log scale)' : 'learning rate',
    scale: log ? { type: 'log' as const, domain: [Math.min(...ticks), Math.max(...ticks)] } : { zero: true, nice: true },
    axis: log ? { values: ticks, format: '~g' } : { format: '~g' },
  };
  return {
    data: { values: points },
    width: 640,
    height: 220,
    layer: [
      ...(drawn(false)
        ? [
            {
              transform: [{ filter: 'datum.best === false' }],
              mark: { type: 'line' as const, strokeWidth: 1.2, opacity: 0.75, interpolate: 'step-before' as const },
              encoding: { x, y, color, detail: { field: 'member', type: 'nominal' as const } },
            },
          ]
        : []),
      ...(drawn(true)
        ? [
            {
              transform: [{ filter: 'datum.best === true' }],
              mark: { type: 'line' as const, strokeWidth: 3, interpolate: 'step-before' as const, point: { size: 30, filled: true } },
              encoding: { x, y, color },
            },
          ]
        : []),
    ],
  };
}
