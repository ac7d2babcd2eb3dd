// The learning-rate chart: each member's rate at each epoch end (metrics.jsonl's `lr`, the rate of the
// epoch's last step) against the step, every member thin and grey and the best one on top. Drawn only when
// a rate moved during the run (an lr_schedule): a constant rate is already in the leaderboard.
import type { TopLevelSpec } from 'vega-lite';
import type { MetricsLine } from './run-data.js';
import { bestLabel, OTHERS_LABEL, roleColor } from './curves-spec.js';
import { decadeTicks, useLogScale } from './scales.js';

export interface LrPoint {
  step: number;
  member: number;
  lr: number;
  best: boolean;
  role: string;
}

/** One point per member per epoch end that has a finite `lr`; a line written twice (a resumed run) keeps the last. */
export function lrPoints(lines: MetricsLine[], best: number): LrPoint[] {
  const latest = new Map<string, MetricsLine>();
  for (const l of lines) if (typeof l.lr === 'number' && Number.isFinite(l.lr)) latest.set(`${l.member}/${l.epoch}`, l);
  return [...latest.values()]
    .map((l) => ({ step: l.step, member: l.member, lr: l.lr!, best: l.member === best, role: l.member === best ? bestLabel(best) : OTHERS_LABEL }))
    .sort((a, b) => a.member - b.member || a.step - b.step);
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
