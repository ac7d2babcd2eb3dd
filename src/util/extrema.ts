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
