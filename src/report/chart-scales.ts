// A chart's scales resolved against its data and size: where each value goes in pixels, the ticks and their
// labels, and the sentence that describes the axis to a screen reader (the words vega wrote).
import type { AxisSpec, Chart, Mark, PointScale, QuantScale } from './chart.js';
import { fixedFormat, formatG, formatInteger, nice, stepTicks, tickStep } from './ticks.js';

export interface Resolved {
  /** the value's position in pixels along the axis: from 0 at the left (x) or the top (y) */
  at(v: number): number;
  ticks: number[];
  label(v: number): string;
  /** a grid line at each tick (numeric scales) */
  grid: boolean;
  /** e.g. "linear scale with values from 0.0 to 1.0" */
  caption: string;
}

/** The chart's x scale over `width` pixels and y scale over `height`, from the values of every panel's marks. */
export function resolveScales(chart: Chart, height: number): { x: Resolved; y: Resolved } {
  const marks = chart.panels.flatMap((p) => p.marks);
  const x = resolveQuant(chart.x.scale, chart.x.axis, xValues(marks), chart.width, false);
  const y = chart.y.scale.type === 'point' ? resolvePoint(chart.y.scale, height) : resolveQuant(chart.y.scale, chart.y.axis, yValues(marks), height, true);
  return { x, y };
}

/** The height of a chart given per value of its point scale: `step` pixels between values, and `padding` steps at each end. */
export const pointHeight = (scale: PointScale, step: number): number => step * Math.max(1, scale.domain.length - 1 + 2 * scale.padding);

// The least and greatest finite value of each axis (all quantDomain reads of them), in loops, not flatMap
// nor a list of every value: a chart of 1000 epochs of 15 members has 30,000 points.
function xValues(marks: Mark[]): number[] {
  const ends = new Extent();
  for (const m of marks) {
    if (m.kind === 'line') for (const p of m.points) ends.add(p.x);
    else if (m.kind === 'rule') ends.add(m.x).add(m.x2);
    else ends.add(m.x);
  }
  return ends.values();
}

function yValues(marks: Mark[]): number[] {
  const ends = new Extent();
  for (const m of marks) {
    if (m.kind === 'line') {
      for (const p of m.points) if (p.y !== null) ends.add(p.y);
    } else if (m.kind === 'rule') ends.add(m.y).add(m.y2);
    else ends.add(m.y);
  }
  return ends.values();
}

/** The least and greatest finite number added. */
class Extent {
  private lo = Infinity;
  private hi = -Infinity;
  add(v: number): this {
    // Math.min and max, as quantDomain, for the sign of a zero
    if (Number.isFinite(v)) [this.lo, this.hi] = [Math.min(this.lo, v), Math.max(this.hi, v)];
    return this;
  }
  /** both ends, or none when no finite number was added */
  values(): number[] {
    return this.lo <= this.hi ? [this.lo, this.hi] : [];
  }
}

/** The domain the data and the scale's options give: the values' extent, 0 added, widened to round numbers. */
export function quantDomain(scale: QuantScale, values: number[]): [number, number] {
  if (scale.domain) return scale.domain;
  let [lo, hi] = [Infinity, -Infinity];
  for (const v of values) if (Number.isFinite(v)) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  if (!Number.isFinite(lo)) [lo, hi] = [0, 1];
  if (scale.zero) [lo, hi] = [Math.min(0, lo), Math.max(0, hi)];
  // one value (every member at one loss) still needs a scale of some height
  if (lo === hi) [lo, hi] = [lo - (Math.abs(lo) * 0.1 || 1), hi + (Math.abs(hi) * 0.1 || 1)];
  return scale.nice ? nice(lo, hi) : [lo, hi];
}

function resolveQuant(scale: QuantScale, axis: AxisSpec, values: number[], size: number, flip: boolean): Resolved {
  const [lo, hi] = quantDomain(scale, values);
  const log = scale.type === 'log';
  const t = log ? Math.log10 : (v: number) => v;
  const span = t(hi) - t(lo) || 1;
  const at = (v: number) => {
    const f = (t(v) - t(lo)) / span;
    return flip ? size - f * size : f * size;
  };
  let step = tickStep(lo, hi, axis.tickCount ?? Math.ceil(size / 40));
  if (axis.tickMinStep && step < axis.tickMinStep) step = axis.tickMinStep;
  const ticks = axis.values ?? stepTicks(lo, hi, step);
  const label = axis.format === 'd' ? formatInteger : axis.format === '~g' || log ? formatG : fixedFormat(step);
  const ends = axis.format === 'd' ? formatInteger : log ? formatG : fixedFormat(tickStep(lo, hi, 5));
  return { at, ticks, label, grid: true, caption: `${scale.type} scale with values from ${ends(lo)} to ${ends(hi)}` };
}

function resolvePoint(scale: PointScale, size: number): Resolved {
  const n = scale.domain.length;
  const step = size / Math.max(1, n - 1 + 2 * scale.padding);
  const index = new Map(scale.domain.map((v, i) => [v, i]));
  const listed = n > 7 ? `${scale.domain.slice(0, 5).join(', ')}, ending with ${scale.domain[n - 1]}` : scale.domain.join(', ');
  return {
    at: (v) => (scale.padding + (index.get(v) ?? 0)) * step,
    ticks: scale.domain,
    label: String,
    grid: false,
    caption: `point scale with ${n} value${n === 1 ? '' : 's'}: ${listed}`,
  };
}
