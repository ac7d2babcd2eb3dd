// Tick values, nice domains and number formats for the report's axes: the rules of d3-array's ticks and
// d3-scale's nice and tickFormat (which vega used), written out for the few cases the charts need.

const e10 = Math.sqrt(50);
const e5 = Math.sqrt(10);
const e2 = Math.sqrt(2);

/** The step between about `count` ticks over [lo, hi]: 1, 2 or 5 times a power of ten (d3's tickStep). */
export function tickStep(lo: number, hi: number, count: number): number {
  const raw = Math.abs(hi - lo) / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return 0;
  let step = 10 ** Math.floor(Math.log10(raw));
  const error = raw / step;
  if (error >= e10) step *= 10;
  else if (error >= e5) step *= 5;
  else if (error >= e2) step *= 2;
  return step;
}

/** The multiples of `step` within [lo, hi], computed so that 0.1 + 0.2 style sums do not creep in. */
export function stepTicks(lo: number, hi: number, step: number): number[] {
  if (!(step > 0)) return lo === hi ? [lo] : [];
  const first = Math.ceil(lo / step - 1e-9);
  const last = Math.floor(hi / step + 1e-9);
  const out: number[] = [];
  // a step under 1 is divided out (0.3 = 3 / 10), as d3 does, so tick values print exactly
  const inverse = step < 1 ? Math.round(1 / step) : 0;
  for (let i = first; i <= last; i++) out.push(inverse && Math.abs(1 / inverse - step) < 1e-12 * step ? i / inverse : i * step);
  return out;
}

/** About `count` round ticks over [lo, hi]. */
export const ticks = (lo: number, hi: number, count: number): number[] => stepTicks(lo, hi, tickStep(lo, hi, count));

/** [lo, hi] widened to round numbers (d3's linear nice, with its default of ten ticks). */
export function nice(lo: number, hi: number, count = 10): [number, number] {
  let step = tickStep(lo, hi, count);
  for (let i = 0; i < 10 && step > 0; i++) {
    const [a, b] = [Math.floor(lo / step) * step, Math.ceil(hi / step) * step];
    const next = tickStep(a, b, count);
    if (next === step) return [a, b];
    step = next;
  }
  return [lo, hi];
}

/** d3-format's "~g": six significant digits, trailing zeros dropped, exponent form only for tiny or huge numbers. */
export function formatG(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const exp = Math.floor(Math.log10(Math.abs(v)));
  const text = exp < -6 || exp >= 21 ? v.toExponential(5).replace(/\.?0+e/, 'e') : String(Number(v.toPrecision(6)));
  return text.replace('-', '−');
}

/** d3-format's "d": the integer nearest, as d3 writes a rounded number (a minus sign, no grouping). */
export const formatInteger = (v: number): string => String(Math.round(v) || 0).replace('-', '−');

/** d3's default linear tick format for ticks `step` apart: fixed decimals enough for the step, thousands grouped. */
export function fixedFormat(step: number): (v: number) => string {
  const decimals = step > 0 ? Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) : 0;
  return (v) => {
    const [whole, frac] = Math.abs(v).toFixed(decimals).split('.');
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    const sign = v < 0 && Number(Math.abs(v).toFixed(decimals)) !== 0 ? '−' : '';
    return sign + grouped + (frac ? `.${frac}` : '');
  };
}
