// jsonChunks writes JSON.stringify's text piece by piece (population.json of 100,000 members).
import { describe, expect, it } from 'vitest';
import { jsonChunks, LazyArray } from '../src/util/json-chunks.js';

const text = (v: unknown) => [...jsonChunks(v)].join('');

describe('jsonChunks', () => {
  it('is JSON.stringify for plain values, nested objects, undefined, NaN and toJSON', () => {
    const values: unknown[] = [
      null, 1.5, 'a"b', [1, undefined, NaN, () => 1], { a: undefined, b: [{ c: 'x', d: Infinity }], e: { toJSON: () => 'j' }, f: () => 1, g: -0 },
      { big: Array.from({ length: 10_001 }, (_, i) => (i % 7 ? i / 3 : { i })) },
    ];
    for (const v of values) expect(text(v)).toBe(JSON.stringify(v));
  });

  it('writes a long array in pieces and makes a LazyArray element only as it comes to it', () => {
    const made: number[] = [];
    const lazy = new LazyArray(9000, (i) => (made.push(i), { m: i }));
    const pieces = [...jsonChunks({ rows: lazy })];
    expect(pieces.join('')).toBe(JSON.stringify({ rows: Array.from({ length: 9000 }, (_, m) => ({ m })) }));
    expect(made).toEqual(Array.from({ length: 9000 }, (_, i) => i));
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(60_000);
  });
});
