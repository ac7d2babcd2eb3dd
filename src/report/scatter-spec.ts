// One varied hyperparameter against the final ranking metric: a point per member, the best member
// large and coloured. The x scale is logarithmic when the values span more than a factor of 20 (lr).
import type { MemberSummary, MetricName } from './run-data.js';
import { BEST_COLOR, OTHER_COLOR, type Chart, type SymbolMark } from './chart.js';
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
export function scatterSpec(members: MemberSummary[], param: string, metric: MetricName, best: number): Chart | undefined {
  const points = scatterPoints(members, param, metric, best);
  if (!points.length) return undefined;
  const xs = points.map((p) => p.value);
  const log = useLogScale(xs);
  // only the roles drawn: one member, or others without a finite score, have no grey points
  const entries = [{ label: bestLabel(best), color: BEST_COLOR }, { label: OTHERS_LABEL, color: OTHER_COLOR }].filter((e) => points.some((p) => p.role === e.label));
  const point = (p: ScatterPoint): SymbolMark => ({
    kind: 'symbol',
    x: p.value,
    y: p.score,
    shape: 'circle',
    ...(p.best ? { size: 160, color: BEST_COLOR, stroke: { color: 'white', width: 1.5 } } : { size: 70, color: OTHER_COLOR, opacity: 0.8 }),
    label: `${param}: ${p.value}; final ${metric}: ${p.score}; member: ${p.member}`,
  });
  return {
    width: 300,
    height: 220,
    x: {
      scale: { type: log ? 'log' : 'linear', domain: padded(xs, log), nice: false },
      axis: log ? { title: `${param} (log scale)`, values: logTicks(xs), format: '~g', labelFlush: false } : { title: param, tickCount: 6, labelFlush: false },
    },
    y: { scale: { type: 'linear', domain: padded(points.map((p) => p.score), false), nice: false }, axis: { title: `final ${metric}`, tickCount: 6 } },
    panels: [{ marks: [...points.filter((p) => !p.best).map(point), ...points.filter((p) => p.best).map(point)] }],
    legend: { entries, symbol: 'circle' },
  };
}
