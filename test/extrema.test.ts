// minOf/maxOf (src/util/extrema.ts): the smallest and largest of a million members' values, where
// Math.min(...values) overflows the stack.
import { describe, expect, it } from 'vitest';
import { maxOf, minOf } from '../src/util/extrema.js';

describe('minOf and maxOf', () => {
  it("take a million members' values, which Math.min(...values) cannot", () => {
    const values = Array.from({ length: 1_000_000 }, (_, i) => Math.sin(i) * 10);
    expect(() => Math.min(...values)).toThrow(RangeError);
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    expect(minOf(values)).toBe(lo);
    expect(maxOf(values)).toBe(hi);
  });

  it('are Infinity and -Infinity for no values, and pass over NaN', () => {
    expect(minOf([])).toBe(Infinity);
    expect(maxOf([])).toBe(-Infinity);
    expect(minOf([3, NaN, 1])).toBe(1);
    expect(maxOf([NaN, 2, 5])).toBe(5);
  });
});
