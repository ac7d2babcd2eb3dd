// Validation split, epoch order, batch ranges, and labels encoded as each loss wants them.
import { describe, expect, it } from 'vitest';
import { batchRanges, epochOrder, gatherBatch, labelEncoding } from '../../src/data/batches.js';
import type { Dataset } from '../../src/data/dataset.js';
import { splitData, splitValidation } from '../../src/data/split.js';
import { expectedOutput } from '../../src/check/data-fit.js';
import { losses } from '../../src/vocabulary/losses.js';
import type { Labels } from '../../src/data/dataset.js';

/** count examples of 2 features (10i, 10i+1) and class i % classes */
function classes(count: number, k: number): Dataset {
  const x = Float32Array.from({ length: 2 * count }, (_, j) => 10 * Math.floor(j / 2) + (j % 2));
  const y = Float32Array.from({ length: count }, (_, i) => i % k);
  return { name: 't()', count, x, featureShape: [2], y, labels: { kind: 'classes', classes: k } };
}

describe('splitValidation', () => {
  it('holds out the last floor(count * fraction) examples, in order', () => {
    const { train, validation } = splitValidation(classes(10, 3), 0.25);
    expect([train.count, validation?.count]).toEqual([8, 2]);
    expect(Array.from(train.x.subarray(-2))).toEqual([70, 71]);
    expect(Array.from(validation!.x)).toEqual([80, 81, 90, 91]);
    expect(Array.from(validation!.y)).toEqual([2, 0]);
    expect(validation!.featureShape).toEqual([2]);
  });

  it('gives no validation set when the fraction holds out nothing', () => {
    const ds = classes(9, 2);
    expect(splitValidation(ds, 0.1)).toEqual({ train: ds });
    expect(splitValidation(ds, 0).validation).toBeUndefined();
  });

  it('splits value labels by rows', () => {
    const ds: Dataset = { name: 'v()', count: 4, x: new Float32Array([1, 2, 3, 4]), featureShape: [1], y: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]), labels: { kind: 'values', columns: 2 } };
    const { train, validation } = splitValidation(ds, 0.5);
    expect(Array.from(train.y)).toEqual([1, 2, 3, 4]);
    expect(Array.from(validation!.y)).toEqual([5, 6, 7, 8]);
  });
});

describe('splitData: a held-out test split', () => {
  it('holds out the last floor(count * test) examples, the validation share right before them', () => {
    const { train, validation, test } = splitData(classes(10, 3), 0.2, 0.3);
    expect([train.count, validation?.count, test?.count]).toEqual([5, 2, 3]);
    expect(Array.from(train.x)).toEqual([0, 1, 10, 11, 20, 21, 30, 31, 40, 41]);
    expect(Array.from(validation!.x)).toEqual([50, 51, 60, 61]);
    expect(Array.from(test!.x)).toEqual([70, 71, 80, 81, 90, 91]);
    expect(Array.from(test!.y)).toEqual([1, 2, 0]);
  });

  it('without test is the validation split as before, and with test alone has no validation split', () => {
    const ds = classes(10, 3);
    expect(splitData(ds, 0.25)).toEqual(splitValidation(ds, 0.25));
    const { train, validation, test } = splitData(ds, 0, 0.2);
    expect([train.count, validation, test?.count]).toEqual([8, undefined, 2]);
  });

  it('splitValidation, what training is given, never holds the test examples', () => {
    const seen = splitValidation(classes(10, 3), 0.2, 0.3);
    expect(Object.keys(seen)).toEqual(['train', 'validation']);
    expect(Array.from(seen.validation!.x)).toEqual([50, 51, 60, 61]);
    expect(seen.train.count + seen.validation!.count).toBe(7);
  });
});

describe('epochOrder', () => {
  const isPermutation = (p: Int32Array) => Array.from(p).sort((a, b) => a - b).every((v, i) => v === i);

  it('is a seeded permutation, the same for the same seed and epoch', () => {
    const a = epochOrder(1000, true, 5, 0);
    expect(isPermutation(a)).toBe(true);
    expect(epochOrder(1000, true, 5, 0)).toEqual(a);
    expect(epochOrder(1000, true, 5, 1)).not.toEqual(a);
    expect(epochOrder(1000, true, 6, 0)).not.toEqual(a);
    expect(a).not.toEqual(epochOrder(1000, false, 5, 0));
  });

  it('keeps the file order without shuffling', () => {
    expect(Array.from(epochOrder(5, false, 5, 3))).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('batchRanges', () => {
  it('cuts full batches and a smaller last one', () => {
    expect(batchRanges(10, 4)).toEqual([[0, 4], [4, 8], [8, 10]]);
    expect(batchRanges(8, 4)).toEqual([[0, 4], [4, 8]]);
    expect(batchRanges(3, 32)).toEqual([[0, 3]]);
    expect(batchRanges(0, 32)).toEqual([]);
  });
});

describe('gatherBatch', () => {
  const ds = classes(6, 3);
  const order = new Int32Array([5, 0, 3, 1, 2, 4]);

  it('copies the features of the examples in order', () => {
    const b = gatherBatch(ds, order, 1, 4, 'index', 3);
    expect(b.size).toBe(3);
    expect(Array.from(b.x)).toEqual([0, 1, 30, 31, 10, 11]);
  });

  it('encodes class labels as index, one-hot or binary', () => {
    expect(gatherBatch(ds, order, 0, 3, 'index', 3)).toMatchObject({ yWidth: 1, y: new Float32Array([2, 0, 0]) });
    expect(gatherBatch(ds, order, 0, 2, 'onehot', 3)).toMatchObject({ yWidth: 3, y: new Float32Array([0, 0, 1, 1, 0, 0]) });
    const two = classes(4, 2);
    expect(gatherBatch(two, new Int32Array([3, 2, 1, 0]), 0, 4, 'binary', 2)).toMatchObject({ yWidth: 1, y: new Float32Array([1, 0, 1, 0]) });
  });

  it('copies value labels as they are', () => {
    const v: Dataset = { name: 'v()', count: 3, x: new Float32Array([1, 2, 3]), featureShape: [1], y: new Float32Array([1, 2, 3, 4, 5, 6]), labels: { kind: 'values', columns: 2 } };
    const b = gatherBatch(v, new Int32Array([2, 0, 1]), 0, 2, 'values', 0);
    expect([b.yWidth, Array.from(b.y), Array.from(b.x)]).toEqual([2, [5, 6, 1, 2], [3, 1]]);
  });

  it('works on image features', () => {
    const img: Dataset = { name: 'i()', count: 2, x: Float32Array.from({ length: 8 }, (_, i) => i), featureShape: [2, 2, 1], y: new Float32Array([0, 1]), labels: { kind: 'classes', classes: 2 } };
    expect(Array.from(gatherBatch(img, new Int32Array([1, 0]), 0, 2, 'index', 2).x)).toEqual([4, 5, 6, 7, 0, 1, 2, 3]);
  });
});

describe('labelEncoding', () => {
  const cases: [string, Labels, string][] = [
    ['binary_crossentropy', { kind: 'classes', classes: 2 }, 'binary'],
    ['categorical_crossentropy', { kind: 'classes', classes: 10 }, 'onehot'],
    ['categorical_crossentropy', { kind: 'classes', classes: 2 }, 'onehot'],
    ['sparse_categorical_crossentropy', { kind: 'classes', classes: 10 }, 'index'],
    ['mse', { kind: 'classes', classes: 2 }, 'binary'],
    ['mse', { kind: 'classes', classes: 3 }, 'onehot'],
    ['mae', { kind: 'values', columns: 2 }, 'values'],
    ['sparse_categorical_crossentropy', { kind: 'values', columns: 1 }, 'values'],
  ];
  for (const [name, labels, encoding] of cases) {
    // a label row is as wide as the model's output, except a sparse loss's single class index
    it(`${name} on ${JSON.stringify(labels)} → ${encoding}, as wide as the checker's output`, () => {
      const loss = losses.find((l) => l.name === name)!;
      const enc = labelEncoding(loss.expects, labels);
      expect(enc).toBe(encoding);
      const k = labels.kind === 'classes' ? labels.classes : 0;
      const ds: Dataset = { name: 't()', count: 1, x: new Float32Array([0]), featureShape: [1], y: new Float32Array(labels.kind === 'classes' ? 1 : labels.columns), labels };
      const width = gatherBatch(ds, new Int32Array([0]), 0, 1, enc, k).yWidth;
      const expected = expectedOutput(loss, labels);
      expect(width).toBe(enc === 'index' || expected === undefined ? 1 : expected);
    });
  }
});
