// One varied hyperparameter against the final ranking metric: a point per member, the best member
// large and coloured. The x scale is logarithmic when the values span more than a factor of 20 (lr).
import type { TopLevelSpec } from 'vega-lite';
import type { MemberSummary, MetricName } from './run-data.js';
import { BEST_COLOR, OTHER_COLOR } from './render-svg.js';
import { OTHERS_LABEL, bestLabel } from './curves-spec.js';
import { logTicks, padded, useLogScale } from './scales.js';

export interface ScatterPoint {
  member: number;
  value: number;
  score: number;
  best: boolean;
  role: string;
}

/** The hyperparameters (by the path the user wrote) whose values differ between members, in first-seen order. */
export function variedHyperparameters(members: MemberSummary[]): string[] {
  const keys = [...new Set(members.flatMap((m) => Object.keys(m.hyperparameters)))];
  return keys.filter((k) => new Set(members.map((m) => m.hyperparameters[k])).size > 1);
}

export function scatterPoints(members: MemberSummary[], param: string, metric: MetricName, best: number): ScatterPoint[] {
  return members
    .map((m) => ({ member: m.member, value: m.hyperparameters[param], score: m.metrics[metric] as number, best: m.member === best, role: m.member === best ? bestLabel(best) : OTHERS_LABEL }))
    .filter((p) => Number.isFinite(p.value) && Number.isFinite(p.score));
}

/** The chart, or undefined when no member has a finite value and score. */
export function scatterSpec(members: MemberSummary[], param: string, metric: MetricName, best: number): TopLevelSpec | undefined {
  const points = scatterPoints(members, param, metric, best);
  if (!points.length) return undefined;
  const xs = points.map((p) => p.value);
  const log = useLogScale(xs);
  const roles = [[bestLabel(best), BEST_COLOR], [OTHERS_LABEL, OTHER_COLOR]].filter(([label]) => points.some((p) => p.role === label));
  const xAxis = log ? { values: logTicks(xs), format: '~g', labelFlush: false } : { tickCount: 6, labelFlush: false };
  const encoding = {
    x: { field: 'value', type: 'quantitative' as const, title: log ? `${param} (log scale)` : param, scale: { type: log ? ('log' as const) : ('linear' as const), domain: padded(xs, log), nice: false }, axis: xAxis },
    y: { field: 'score', type: 'quantitative' as const, title: `final ${metric}`, scale: { domain: padded(points.map((p) => p.score), false), nice: false }, axis: { tickCount: 6 } },
    color: {
      field: 'role',
      type: 'nominal' as const,
      // only the roles drawn: one member, or others without a finite score, have no grey points
      scale: { domain: roles.map((r) => r[0]), range: roles.map((r) => r[1]) },
      legend: { orient: 'top' as const, title: null, direction: 'horizontal' as const },
    },
  };
  return {
    data: { values: points },
    width: 300,
    height: 220,
    layer: [
      { transform: [{ filter: 'datum.best === false' }], mark: { type: 'point', filled: true, size: 70, opacity: 0.8 }, encoding },
      { transform: [{ filter: 'datum.best === true' }], mark: { type: 'point', filled: true, size: 160, stroke: 'white', strokeWidth: 1.5 }, encoding },
    ],
  };
}

