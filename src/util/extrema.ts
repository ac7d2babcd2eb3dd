// The smallest and largest of many numbers, by a loop: Math.min(...values) passes every value as an
// argument, and a population of a million members overflows the stack.

/** The smallest of `values`, Infinity for none; NaN is passed over. */
export function minOf(values: Iterable<number>): number {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}

/** The largest of `values`, -Infinity for none; NaN is passed over. */
export function maxOf(values: Iterable<number>): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** The smallest finite loss of `rows`, or `start` if it is smaller (Infinity for none): NaN and infinities are passed over. */
export function minFiniteLoss(rows: readonly { loss: number }[], start = Infinity): number {
  let m = start;
  for (let i = 0; i < rows.length; i++) {
    const l = rows[i].loss;
    if (Number.isFinite(l) && l < m) m = l;
  }
  return m;
}
