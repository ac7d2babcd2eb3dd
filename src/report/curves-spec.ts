// Learning curves: one line per member per epoch, the training split beside the validation split
// (sharing the y scale), every member thin and grey and the best member drawn on top, thick and coloured.
import type { TopLevelSpec } from 'vega-lite';
import type { MetricsLine } from './run-data.js';
import { BEST_COLOR, OTHER_COLOR } from './render-svg.js';
import { decadeTicks, useLogScale } from './scales.js';
import type { extraMetrics } from '../vocabulary/losses.js';

export interface CurvePoint {
  epoch: number;
  member: number;
  split: 'train' | 'validation';
  value: number | null;
  best: boolean;
  role: string;
}

/** A metric with a training curve (and a validation twin, `val_` + its name). */
export type CurveMetric = 'loss' | (typeof extraMetrics)[number];

export const OTHERS_LABEL = 'other members';
export const bestLabel = (member: number) => `member ${member} (best)`;

/**
 * The color of a best-member-against-the-others chart, with a legend entry only for the roles that have points
 * (`drawn(isBest)`): a layer with nothing to draw would give vega an empty extent.
 */
export function roleColor(best: number, drawn: (isBest: boolean) => boolean) {
  const roles = [...(drawn(true) ? [[bestLabel(best), BEST_COLOR]] : []), ...(drawn(false) ? [[OTHERS_LABEL, OTHER_COLOR]] : [])];
  return {
    field: 'role',
    type: 'nominal' as const,
    scale: { domain: roles.map((r) => r[0]), range: roles.map((r) => r[1]) },
    legend: { orient: 'top' as const, title: null, direction: 'horizontal' as const, symbolType: 'stroke', symbolSize: 300 },
  };
}

/**
 * The points of one curve chart (`loss`, `accuracy`, `mse` or `mae`, with its `val_` twin when present). A member's
 * line for an epoch written twice (a resumed run) keeps the last. Non-finite values become null (a gap).
 */
export function curvePoints(lines: MetricsLine[], metric: CurveMetric, best: number): CurvePoint[] {
  const latest = new Map<string, MetricsLine>();
  for (const l of lines) latest.set(`${l.member}/${l.epoch}`, l);
  const points: CurvePoint[] = [];
  for (const l of latest.values()) {
    for (const [split, key] of [['train', metric], ['validation', `val_${metric}`]] as const) {
      const v = l[key];
      if (v === undefined) continue;
      const isBest = l.member === best;
      points.push({ epoch: l.epoch, member: l.member, split, value: Number.isFinite(v) ? v : null, best: isBest, role: isBest ? bestLabel(best) : OTHERS_LABEL });
    }
  }
  return points.sort((a, b) => a.member - b.member || a.epoch - b.epoch);
}

/** The chart, or undefined when no member has a value of this metric. */
export function curvesSpec(lines: MetricsLine[], metric: CurveMetric, best: number): TopLevelSpec | undefined {
  const points = curvePoints(lines, metric, best);
  const values = points.map((p) => p.value).filter((v): v is number => v !== null);
  if (!values.length) return undefined;
  const splits = [...new Set(points.map((p) => p.split))];
  const epochs = new Set(points.map((p) => p.epoch)).size;
  // a loss that spans orders of magnitude (a member diverging, or the first epoch's drop) reads better on log
  const log = metric === 'loss' && useLogScale(values);
  const width = splits.length > 1 ? 400 : 640;
  // a layer with nothing to draw (one member: no others; the others all diverged) would give vega an empty extent
  const drawn = (isBest: boolean) => points.some((p) => p.best === isBest && p.value !== null);
  const color = roleColor(best, drawn);
  const x = {
    field: 'epoch',
    type: 'quantitative' as const,
    title: 'epoch',
    scale: { domain: epochs === 1 ? [0, 2] : undefined, nice: false },
    axis: { tickMinStep: 1, format: 'd' },
  };
  const y = {
    field: 'value',
    type: 'quantitative' as const,
    title: log ? `${metric} (log scale)` : metric,
    scale: log ? { type: 'log' as const, domain: [Math.min(...decadeTicks(values)), Math.max(...decadeTicks(values))] } : { zero: false, nice: true },
    axis: log ? { values: decadeTicks(values), format: '~g' } : {},
  };
  return {
    data: { values: points },
    facet: { column: { field: 'split', type: 'nominal', sort: splits, title: null, header: { labelFontWeight: 'bold' } } },
    spec: {
      width,
      height: 240,
      layer: [
        ...(drawn(false)
          ? [
              {
                transform: [{ filter: 'datum.best === false' }],
                mark: { type: 'line' as const, strokeWidth: 1.2, opacity: 0.75, point: epochs === 1 ? { size: 30 } : false },
                encoding: { x, y, color, detail: { field: 'member', type: 'nominal' as const } },
              },
            ]
          : []),
        ...(drawn(true)
          ? [
              {
                transform: [{ filter: 'datum.best === true' }],
                mark: { type: 'line' as const, strokeWidth: 3, point: epochs <= 30 ? { size: 40, filled: true } : false },
                encoding: { x, y, color },
              },
            ]
          : []),
      ],
    },
    resolve: { scale: { y: 'shared' } },
  };
}
