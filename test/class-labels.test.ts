// Class labels in a csv file against the loss and the output (issue 37, items 11-13): a sparse
// categorical loss needs integer labels in [0, units), checked at `netc check` where the file is readable
// and again when the data loads; a csv() without label: says which column it takes; integer labels under
// categorical_crossentropy are steered to the sparse loss or one-hot columns.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileHost } from '../src/cli/host.js';
import { checkClassLabels } from '../src/data/class-labels.js';
import { DataError, formatDataError } from '../src/data/dataset.js';
import { loadCsv } from '../src/data/csv.js';
import { compileText, netc } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'netc-labels-'));
writeFileSync(join(dir, 'three.csv'), 'y,a,b\n0,1,2\n1,2,3\n2,3,4\n');
writeFileSync(join(dir, 'floaty.csv'), 'a,y,b\n0.5,1,2\n1.25,0,3\n');
const host = { host: fileHost(join(dir, 'test.net')) };

const source = (data: string, loss: string, units = 2) =>
  `model m(input: [2]) {\n  dense(${units}, activation: softmax)\n}\ntrain {\n  data: ${data}\n  loss: ${loss}\n  epochs: 1\n}\n`;
const found = (src: string) => compileText(src, 'test.net', host).diagnostics.map((d) => ({ code: d.code, category: d.category, message: d.message, at: src.slice(d.start, d.start + d.length) }));

describe('netc check of class labels in a csv file', () => {
  it('refuses labels 0..2 for a softmax over 2 units under sparse_categorical_crossentropy, at the data', () => {
    const src = source('csv("three.csv", label: "y")', 'sparse_categorical_crossentropy');
    expect(found(src)).toEqual([
      {
        code: 4032,
        category: 'error',
        message: 'csv("three.csv") line 4 has the label 2, which is not a class index for the last layer\'s 2 units: sparse_categorical_crossentropy needs integer class labels in 0..1; give the last layer 3 units (one per class)',
        at: 'csv("three.csv", label: "y")',
      },
    ]);
  });

  it('accepts labels 0..2 for a softmax over 3 units', () => {
    expect(found(source('csv("three.csv", label: "y")', 'sparse_categorical_crossentropy', 3))).toEqual([]);
  });

  it('warns which column a csv() without label: takes, and refuses it when it holds no class indices', () => {
    const src = source('csv("floaty.csv")', 'sparse_categorical_crossentropy');
    expect(found(src)).toEqual([
      {
        code: 4033,
        category: 'warning',
        message: 'csv("floaty.csv") has no label:, so its first column "a" is taken as the label; name the label column(s), e.g. label: "a"',
        at: 'csv("floaty.csv")',
      },
      {
        code: 4032,
        category: 'error',
        message: 'csv("floaty.csv") line 2 has the label 0.5, which is not a class index for the last layer\'s 2 units: sparse_categorical_crossentropy needs integer class labels in 0..1; is "a" the label column? name it with label:',
        at: 'csv("floaty.csv")',
      },
    ]);
  });

  it('advises the sparse loss or one-hot columns for integer labels under categorical_crossentropy', () => {
    const src = source('csv("three.csv", label: "y")', 'categorical_crossentropy', 3);
    expect(found(src).map((d) => [d.code, d.message])).toEqual([
      [4007, 'categorical_crossentropy needs one-hot labels, one column per class, but csv() gives 1 label column: for integer class labels use loss: sparse_categorical_crossentropy, or name one label column per class (label: ["c0", "c1", "c2"])'],
    ]);
  });
});

describe('class labels when the data loads', () => {
  const sparse = { name: 'sparse_categorical_crossentropy', expects: 'sparse' } as const;
  const three = () => loadCsv(join(dir, 'three.csv'), 'three.csv', ['y']);
  it('refuses a label at or above the units, naming the file and line', () => {
    let error: unknown;
    try {
      checkClassLabels(three(), sparse, 2);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DataError);
    expect(formatDataError(error as DataError)).toBe(`csv("three.csv"): error NET4017: label 2 of example 2 (counting from 0) is not a class index in 0..1: sparse_categorical_crossentropy needs one class per unit of the last layer, which has 2`);
  });
  it('refuses a label that is not an integer', () => {
    expect(() => checkClassLabels(loadCsv(join(dir, 'floaty.csv'), 'floaty.csv', undefined), sparse, 2)).toThrow('label 0.5 of example 0 (counting from 0) is not a class index: class indices are whole numbers from 0');
  });
  it('lets labels in range and other losses through', () => {
    expect(() => checkClassLabels(three(), sparse, 3)).not.toThrow();
    expect(() => checkClassLabels(three(), { name: 'mse', expects: 'regression' }, 1)).not.toThrow();
  });
  it('netc train refuses them before training', async () => {
    // a file too large to read at check time is still checked when it loads
    const rows = Array.from({ length: 110_000 }, (_, i) => `${i % 3},${(i / 7).toFixed(16)},${(i / 3).toFixed(16)}`);
    writeFileSync(join(dir, 'big.csv'), `y,a,b\n${rows.join('\n')}\n`);
    writeFileSync(join(dir, 'big.net'), source('csv("big.csv", label: "y")', 'sparse_categorical_crossentropy'));
    const r = await netc('train', join(dir, 'big.net'), '--out', join(dir, 'run'), '--backend', 'cpu');
    expect(r.code).toBe(1);
    expect(r.err).toContain('error NET4017: label 2 of example 2 (counting from 0) is not a class index in 0..1');
  }, 60_000);
});
