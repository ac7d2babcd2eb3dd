// Held-out rows are the data's last, in its order (as Keras' validation_split): on data sorted by class the
// validation split can hold one class only. netc train warns when a held-out split lacks classes that
// training has, and `holdout: shuffled` holds out a sample drawn from the seed instead (issue 37 item 14).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitData } from '../src/data/split.js';
import { iris } from '../src/data/iris.js';
import { expectError, netc } from './helpers.js';

const classesOf = (y: Float32Array) => [...new Set(y)].sort();

// 60 examples sorted by class: 20 of class 0, then 20 of 1, then 20 of 2
const sorted = 'y,a,b\n' + Array.from({ length: 60 }, (_, i) => `${Math.floor(i / 20)},${Math.sin(i)},${Math.cos(i)}`).join('\n') + '\n';

async function train(keys: string): Promise<{ code: number; err: string }> {
  const root = mkdtempSync(join(tmpdir(), 'netc-holdout-'));
  writeFileSync(join(root, 'sorted.csv'), sorted);
  writeFileSync(
    join(root, 'sorted.net'),
    `model m(input: [2]) { dense(3, activation: softmax) }\nensemble { seed: 4 }\ntrain { data: csv("sorted.csv", label: "y") loss: sparse_categorical_crossentropy batch: 30 steps: 1 ${keys} }\n`,
  );
  const r = await netc('train', join(root, 'sorted.net'), '--backend', 'cpu', '--out', join(root, 'run'));
  return { code: r.code, err: r.err };
}

describe('held-out splits and the classes training has', () => {
  it('warns that the last 20% of data sorted by class holds class 2 alone, at validation:', async () => {
    const r = await train('validation: 0.2');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('warning NET4034: the validation split (the last 12 examples of csv("sorted.csv")) holds no example of classes 0 and 1, which training has, so its metrics say nothing of them');
    expect(r.err).toContain('add holdout: shuffled to the train block');
    expect(r.err).toMatch(/sorted\.net\(3,\d+\): warning NET4034/);
  }, 60_000);

  it('says nothing with holdout: shuffled, whose splits hold every class', async () => {
    const r = await train('validation: 0.2 holdout: shuffled');
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain('NET4034');
  }, 60_000);

  it('holdout: shuffled draws the held-out examples from the seed: the same seed the same split, every example once', () => {
    const ds = iris(0, 150);
    const a = splitData(ds, 0.2, 0.1, 4);
    const b = splitData(ds, 0.2, 0.1, 4);
    expect(Array.from(a.validation!.y)).toEqual(Array.from(b.validation!.y));
    expect(classesOf(a.validation!.y)).toEqual([0, 1, 2]);
    expect([a.train.count, a.validation!.count, a.test!.count]).toEqual([105, 30, 15]);
    const rows = (d: typeof ds) => Array.from({ length: d.count }, (_, i) => Array.from(d.x.subarray(4 * i, 4 * i + 4)).join());
    const all = [...rows(a.train), ...rows(a.validation!), ...rows(a.test!)].sort();
    expect(all).toEqual(rows(ds).sort());
    expect(Array.from(splitData(ds, 0.2, 0.1, 5).validation!.y)).not.toEqual(Array.from(a.validation!.y));
    // the last rows, as before, without a seed
    expect(Array.from(splitData(ds, 0.2).validation!.x)).toEqual(Array.from(ds.x.subarray(4 * 120)));
  });

  it('holdout takes last or shuffled', () => {
    expectError('model m(input: [4]) { dense(3, activation: softmax) }\ntrain { data: iris() loss: sparse_categorical_crossentropy epochs: 1 holdout: random }', 2001, "unknown holdout 'random'");
  });
});
