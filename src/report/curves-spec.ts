// Learning curves: one line per member per epoch, the training split beside the validation split
// (sharing the y scale), every member thin and grey and the best member drawn on top, thick and coloured.
import type { MetricsLine } from './run-data.js';
import { BEST_COLOR, OTHER_COLOR, type Chart, type LegendEntry, type LineMark, type LinePoint, type Panel } from './chart.js';
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
 * The legend of a best-member-against-the-others chart: an entry only for the roles that have points
 * (`drawn(isBest)`), so one member's chart does not name "other members".
 */
export function roleLegend(best: number, drawn: (isBest: boolean) => boolean): LegendEntry[] {
  return [...(drawn(true) ? [{ label: bestLabel(best), color: BEST_COLOR }] : []), ...(drawn(false) ? [{ label: OTHERS_LABEL, color: OTHER_COLOR }] : [])];
}

/**
 * The points of one curve chart (`loss`, `accuracy`, `mse` or `mae`, with its `val_` twin when present). A member's
 * line for an epoch written twice (a resumed run) keeps the last. Non-finite values become null (a gap).
 */
export function curvePoints(lines: MetricsLine[], metric: CurveMetric, best: number): CurvePoint[] {
  const splits = [['train', metric], ['validation', `val_${metric}`]] as const;
  const bestRole = bestLabel(best);
  const points: CurvePoint[] = [];
  for (const l of latestLines(lines)) {
    for (const [split, key] of splits) {
      const v = l[key];
      if (v === undefined) continue;
      const isBest = l.member === best;
      points.push({ epoch: l.epoch, member: l.member, split, value: Number.isFinite(v) ? v : null, best: isBest, role: isBest ? bestRole : OTHERS_LABEL });
    }
  }
  return byMemberThenEpoch(points);
}

/**
 * The points sorted by member, then epoch, ties in their order: as a stable sort by both, but by grouping
 * each member's points (metrics.jsonl is written epoch by epoch, so each member's are already in epoch
 * order) and sorting a member's only where they are not.
 */
function byMemberThenEpoch(points: CurvePoint[]): CurvePoint[] {
  const own = new Map<number, CurvePoint[]>();
  for (const p of points) {
    const list = own.get(p.member);
    if (list) list.push(p);
    else own.set(p.member, [p]);
  }
  const out: CurvePoint[] = [];
  for (const member of [...own.keys()].sort((a, b) => a - b)) {
    const list = own.get(member)!;
    let ordered = true;
    for (let i = 1; i < list.length && ordered; i++) ordered = list[i - 1].epoch <= list[i].epoch;
    for (const p of ordered ? list : list.sort((a, b) => a.epoch - b.epoch)) out.push(p);
  }
  return out;
}

/** A line's member and epoch (whole numbers) as one number where both fit in 26 bits (exact in a double), else as a string. */
export const lineKey = (l: MetricsLine): number | string =>
  l.member >= 0 && l.member < 2 ** 26 && l.epoch >= 0 && l.epoch < 2 ** 26 ? l.member * 2 ** 26 + l.epoch : `${l.member}/${l.epoch}`;

const latest = new WeakMap<MetricsLine[], MetricsLine[]>();

/**
 * The last line of each member and epoch (a resumed run writes an epoch again), in first-written order;
 * kept for the lines' array, which every curve chart reads (1000 epochs of 15 members: 15,000 lines each).
 */
export function latestLines(lines: MetricsLine[]): MetricsLine[] {
  let kept = latest.get(lines);
  if (kept) return kept;
  const last = new Map<number | string, MetricsLine>();
  for (const l of lines) last.set(lineKey(l), l);
  kept = last.size === lines.length ? lines : [...last.values()];
  latest.set(lines, kept);
  return kept;
}

/** The chart, or undefined when no member has a value of this metric. */
export function curvesSpec(lines: MetricsLine[], metric: CurveMetric, best: number): Chart | undefined {
  const points = curvePoints(lines, metric, best);
  const values = points.map((p) => p.value).filter((v): v is number => v !== null);
  if (!values.length) return undefined;
  const splits = [...new Set(points.map((p) => p.split))];
  const epochs = new Set(points.map((p) => p.epoch)).size;
  // a loss that spans orders of magnitude (a member diverging, or the first epoch's drop) reads better on log
  const log = metric === 'loss' && useLogScale(values);
  const ticks = log ? decadeTicks(values) : [];
  // a role with nothing to draw (one member: no others; the others all diverged) has no legend entry
  const drawn = (isBest: boolean) => points.some((p) => p.best === isBest && p.value !== null);
  const at = (p: CurvePoint) => ({ x: p.epoch, y: p.value });
  const label = (p: CurvePoint) => `epoch: ${p.epoch}; ${metric}: ${p.value ?? 'none'}; member: ${p.member}; split: ${p.split}`;
  const panel = (split: CurvePoint['split']): Panel => {
    const own = points.filter((p) => p.split === split);
    const others = memberLines(own.filter((p) => !p.best), at, label, { color: OTHER_COLOR, width: 1.2, opacity: 0.75, dots: epochs === 1 ? 30 : undefined });
    const top = memberLines(own.filter((p) => p.best), at, label, { color: BEST_COLOR, width: 3, dots: epochs <= 30 ? 40 : undefined });
    return { header: split, marks: [...others, ...top] };
  };
  return {
    width: splits.length > 1 ? 400 : 640,
    height: 240,
    x: { scale: { type: 'linear', domain: epochs === 1 ? [0, 2] : undefined, nice: false }, axis: { title: 'epoch', tickMinStep: 1, format: 'd' } },
    y: {
      scale: log ? { type: 'log', domain: [Math.min(...ticks), Math.max(...ticks)] } : { type: 'linear', zero: false, nice: true },
      axis: log ? { title: `${metric} (log scale)`, values: ticks, format: '~g' } : { title: metric },
    },
    panels: splits.map(panel),
    legend: { entries: roleLegend(best, drawn), symbol: 'stroke' },
  };
}

/** A line's style: its colour, width, opacity and dots. */
export type LineStyle = Pick<LineMark, 'color' | 'width' | 'opacity' | 'dots' | 'interpolate'>;

/** One line per member, in the order of `points` (sorted by member, then by x); `label` describes a line by its first point. */
export function memberLines<T extends { member: number }>(points: T[], at: (p: T) => LinePoint, label: (first: T) => string, style: LineStyle): LineMark[] {
  const byMember = new Map<number, T[]>();
  for (const p of points) {
    const own = byMember.get(p.member);
    if (own) own.push(p);
    else byMember.set(p.member, [p]);
  }
  return [...byMember.values()].map((own) => ({ kind: 'line', ...style, points: own.map(at), label: label(own[0]) }));
}
