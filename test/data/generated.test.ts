// xor, moons and spirals: shapes, labels, and that the seed alone decides the data.
import { describe, expect, it } from 'vitest';
import { call, classCounts, expectMatchesShape, load } from './helpers.js';

describe('generated sets', () => {
  for (const [name, args] of [
    ['xor', {}],
    ['moons', {}],
    ['spirals', {}],
    ['spirals', { n: 301, classes: 5, noise: 0.05 }],
  ] as const) {
    it(`${name}(${JSON.stringify(args)}) has the checked shape and all classes`, async () => {
      const ds = await load(name, args);
      expectMatchesShape(ds, call(name, args));
      expect(ds.count).toBe(call(name, args).args.n);
      expect(classCounts(ds).every((c) => c > 0)).toBe(true);
      expect(ds.x.every(Number.isFinite)).toBe(true);
    });
  }

  for (const name of ['xor', 'moons', 'spirals']) {
    it(`${name}: the same seed gives the same data, another seed other data`, async () => {
      const a = await load(name, {}, '.', 7);
      const b = await load(name, {}, '.', 7);
      const c = await load(name, {}, '.', 8);
      expect(b.x).toEqual(a.x);
      expect(b.y).toEqual(a.y);
      expect(c.x).not.toEqual(a.x);
    });
  }

  it('xor labels are the XOR of the rounded coordinates', async () => {
    const ds = await load('xor', { n: 1000, noise: 0.1 }, '.', 3);
    for (let i = 0; i < ds.count; i++) expect(ds.y[i]).toBe(Math.round(ds.x[2 * i]) ^ Math.round(ds.x[2 * i + 1]));
    expect(classCounts(ds)[1]).toBeGreaterThan(400);
  });

  it('xor without noise sits exactly on the corners', async () => {
    const ds = await load('xor', { n: 50, noise: 0 });
    expect(ds.x.every((v) => v === 0 || v === 1)).toBe(true);
  });

  it('moons without noise lie on two half circles, half the points each', async () => {
    const ds = await load('moons', { n: 101, noise: 0 });
    expect(classCounts(ds)).toEqual([50, 51]);
    for (let i = 0; i < ds.count; i++) {
      const [x, y] = [ds.x[2 * i], ds.x[2 * i + 1]];
      // class 0: the unit upper half circle; class 1: centred at (1, 0.5), lower half
      const [cx, cy, side] = ds.y[i] === 0 ? [0, 0, 1] : [1, 0.5, -1];
      expect(Math.hypot(x - cx, y - cy)).toBeCloseTo(1, 5);
      expect((y - cy) * side).toBeGreaterThanOrEqual(-1e-6);
    }
  });

  it('spirals share the points evenly between the arms, within radius 1 without noise', async () => {
    const ds = await load('spirals', { n: 100, classes: 3, noise: 0 });
    expect(classCounts(ds)).toEqual([34, 33, 33]);
    for (let i = 0; i < ds.count; i++) expect(Math.hypot(ds.x[2 * i], ds.x[2 * i + 1])).toBeLessThan(1);
  });

  it('shuffles the examples so the last ones hold every class', async () => {
    const ds = await load('moons', { n: 200 });
    const tail = Array.from(ds.y.subarray(180));
    expect(new Set(tail).size).toBe(2);
  });
});
