// Scale helpers shared by the charts: when to use a log scale, padded domains, and readable log ticks.
import { maxOf, minOf } from '../util/extrema.js';

/** A log scale when every value is positive and they span more than a factor of 20 (a learning rate sweep). */
export const useLogScale = (values: number[]): boolean => values.length > 0 && minOf(values) > 0 && maxOf(values) / minOf(values) > 20;

/** The values' range widened by 8% on each side (by a factor on a log scale), so no point sits on an axis. */
export function padded(values: number[], log: boolean): [number, number] {
  const lo = minOf(values);
  const hi = maxOf(values);
  if (log) {
    const f = Math.pow(hi / lo, 0.08);
    return [lo / f, hi * f];
  }
  const pad = hi > lo ? (hi - lo) * 0.08 : Math.abs(lo) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

/** Ticks for a log axis: 1, 2 and 5 times each power of ten within the padded range; 1 and 3 when it spans many decades. */
export function logTicks(values: number[]): number[] {
  const [lo, hi] = padded(values, true);
  const decades = Math.log10(hi / lo);
  const steps = decades > 4 ? [1] : decades > 2 ? [1, 3] : [1, 2, 5];
  const out: number[] = [];
  for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) for (const m of steps) {
    const v = Number((m * 10 ** k).toPrecision(2));
    if (v >= lo && v <= hi) out.push(v);
  }
  return out;
}

/** Powers of ten from below the smallest value to above the largest: the only ticks (and grid lines) of a log y axis. */
export function decadeTicks(values: number[]): number[] {
  const out: number[] = [];
  for (let k = Math.floor(Math.log10(minOf(values))); k <= Math.ceil(Math.log10(maxOf(values))); k++) out.push(Number((10 ** k).toPrecision(1)));
  return out;
}
