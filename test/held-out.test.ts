// A held-out test set: `test: F` in the train block keeps the last fraction of the data away from
// training and ranking, and `netc eval RUN` / `netc predict RUN` without --data use it (else the
// validation split), split again exactly as the run was trained, from run.json.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectClean, expectError, netc } from './helpers.js';

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/**
 * 50 rows of y = 3a + 1, except that the last 10 are poisoned with y = 1000: a member that trained on one
 * of them would show a training loss in the thousands, and validation on them a val_loss as large.
 */
const rows = Array.from({ length: 50 }, (_, i) => {
  const a = Math.sin(i);
  return [i >= 40 ? 1000 : 3 * a + 1, a];
});
const csv = (r: number[][]) => 'y,a\n' + r.map((row) => row.join(',')).join('\n') + '\n';

/** A run of two linear members on data.csv with these train keys; returns its directory and stderr. */
async function train(keys: string): Promise<{ dir: string; err: string }> {
  const root = mkdtempSync(join(tmpdir(), 'netc-heldout-'));
  writeFileSync(join(root, 'data.csv'), csv(rows));
  writeFileSync(
    join(root, 'line.net'),
    `model m(input: [1]) { dense(1) }\nensemble { members: 2, seed: 4, vary lr: [0.05, 0.1] }\ntrain { data: csv("data.csv", label: "y") loss: mse batch: 10 epochs: 3 ${keys} }\n`,
  );
  const dir = join(root, 'run');
  const r = await netc('train', join(root, 'line.net'), '--backend', 'cpu', '--out', dir);
  expect(r.code, r.err).toBe(0);
  return { dir, err: r.err };
}

describe('test: in the train block', () => {
  let run: { dir: string; err: string };
  beforeAll(async () => {
    run = await train('validation: 0.2 test: 0.2');
  });

  it('trains on the first 30 examples and validates on the next 10: the last 10 are never trained or ranked on', () => {
    expect(run.err).toContain('on 30 examples (+10 for validation, +10 held out for testing): 9 steps, 3 epochs of 3');
    const members = json(join(run.dir, 'summary.json')).per_member;
    for (const m of members) {
      expect(m.metrics.loss).toBeLessThan(100);
      expect(m.metrics.val_loss).toBeLessThan(100);
    }
    expect(existsSync(join(run.dir, 'events.jsonl'))).toBe(false);
  });

  it('the poisoned rows would show: trained on one of them (test: 0.18 leaves row 40 in training), the loss is in the thousands', async () => {
    const leaky = await train('test: 0.18');
    expect(leaky.err).toContain('on 41 examples (+9 held out for testing)');
    expect(Math.max(...json(join(leaky.dir, 'summary.json')).per_member.map((m: { metrics: { loss: number } }) => m.metrics.loss))).toBeGreaterThan(1000);
  });

  it('netc eval RUN, with no --data, evaluates on exactly the held-out examples and says so', async () => {
    const r = await netc('eval', run.dir, '--format', 'json', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`data: the run's test split: examples 40 to 49 of the 50 of csv("data.csv", label: ["y"]), held out by test: 0.2`);
    const report = JSON.parse(r.out);
    expect(report).toMatchObject({ split: 'test', examples: 10, data: 'csv("data.csv", label: ["y"])' });
    // the same as evaluating on a file of those 10 rows alone
    const tail = join(mkdtempSync(join(tmpdir(), 'netc-heldout-')), 'tail.csv');
    writeFileSync(tail, csv(rows.slice(40)));
    const given = JSON.parse((await netc('eval', run.dir, '--data', `csv("${tail}", label: "y")`, '--format', 'json', '--backend', 'cpu')).out);
    expect(given.split).toBeNull();
    expect(report.members).toEqual(given.members);
    expect(report.members[0].loss).toBeGreaterThan(1e4); // the poisoned rows, which training never saw
    const table = await netc('eval', run.dir, '--backend', 'cpu');
    expect(table.out).toContain(`10 examples of csv("data.csv", label: ["y"]) (the run's test split)`);
  });

  it('netc predict RUN, with no --data, predicts the held-out examples', async () => {
    const r = await netc('predict', run.dir, '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("data: the run's test split: examples 40 to 49");
    const lines = r.out.trim().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[1].split(',').slice(0, 2)).toEqual(['0', '1000']);
  });
});

describe('netc eval without a test split', () => {
  it('falls back to the validation split and says that the members were ranked on it', async () => {
    const { dir } = await train('validation: 0.2');
    const r = await netc('eval', dir, '--format', 'json', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("data: the run's validation split (it has no test split): examples 40 to 49 of the 50");
    expect(r.err).toContain('the members were ranked on these');
    expect(JSON.parse(r.out)).toMatchObject({ split: 'validation', examples: 10 });
  });

  it('asks for --data when the run holds out nothing, and refuses --seed without --data', async () => {
    const { dir } = await train('');
    const r = await netc('eval', dir, '--backend', 'cpu');
    expect(r.code).toBe(2);
    expect(r.err).toContain('give --data: ' + dir + ' holds out no data of its own');
    const seeded = await netc('predict', dir, '--seed', '3', '--backend', 'cpu');
    expect(seeded.code).toBe(2);
    expect(seeded.err).toContain('--seed draws the generated data of --data');
  });
});

describe('packaged sets', () => {
  it('test: 0.2 of mnist(limit: 500) is mnist(offset: 400, limit: 100)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'netc-heldout-'));
    writeFileSync(
      join(root, 'digits.net'),
      'model m(input: [28, 28, 1]) { flatten() dense(10, activation: softmax) }\nensemble { members: 2, seed: 1 }\ntrain { data: mnist(limit: 500) test: 0.2 loss: categorical_crossentropy batch: 100 epochs: 1 }\n',
    );
    const dir = join(root, 'run');
    const trained = await netc('train', join(root, 'digits.net'), '--backend', 'cpu', '--out', dir);
    expect(trained.code, trained.err).toBe(0);
    expect(trained.err).toContain('on 400 examples (+100 held out for testing)');
    const split = JSON.parse((await netc('eval', dir, '--format', 'json', '--backend', 'cpu')).out);
    const given = JSON.parse((await netc('eval', dir, '--data', 'mnist(offset: 400, limit: 100)', '--format', 'json', '--backend', 'cpu')).out);
    expect(split.split).toBe('test');
    expect(split.members).toEqual(given.members);
    expect(split.ensemble).toEqual(given.ensemble);
  });

  it('a generated --data set drawn from the run seed is said to overlap the training data', async () => {
    const root = mkdtempSync(join(tmpdir(), 'netc-heldout-'));
    writeFileSync(join(root, 'xor.net'), 'model m(input: [2]) { dense(1, activation: sigmoid) }\ntrain { data: xor(n: 40) test: 0.25 loss: binary_crossentropy epochs: 1 }\n');
    const dir = join(root, 'run');
    expect((await netc('train', join(root, 'xor.net'), '--backend', 'cpu', '--out', dir)).code).toBe(0);
    const r = await netc('eval', dir, '--data', 'xor(n: 40)', '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("note: xor() is drawn from the run's seed (0), as its training data was");
    expect((await netc('eval', dir, '--data', 'xor(n: 40)', '--seed', '9', '--backend', 'cpu')).err).not.toContain('note:');
  });
});

describe('the checker', () => {
  const MODEL = 'model m(input: [2]) { dense(1, activation: sigmoid) }\n';
  const trainWith = (keys: string) => MODEL + `train { data: xor() loss: binary_crossentropy epochs: 1 ${keys} }`;
  it('takes test as a fraction in [0, 1), 0 by default, beside validation', () => {
    expect(expectClean(trainWith('')).program!.train!.test).toBe(0);
    expect(expectClean(trainWith('validation: 0.5 test: 0.4')).program!.train).toMatchObject({ validation: 0.5, test: 0.4 });
    expectError(trainWith('test: 1'), 2005, 'test must be a number in [0, 1), got 1');
    expectError(trainWith('test: -0.1'), 2005, 'test must be a number in [0, 1)');
  });

  it('refuses validation and test that add up to 1 or more, at test', () => {
    expectError(trainWith('validation: 0.7 test: 0.3'), 4051, 'validation (0.7) and test (0.3) add up to 1');
    expectError(trainWith('test: 0.9 validation: 0.2'), 4051, 'add up to 1.1');
  });

  it('takes offset for mnist, fashion_mnist and iris, inside the set', () => {
    expectClean('model m(input: [4]) { dense(3, activation: softmax) }\ntrain { data: iris(offset: 100, limit: 50) loss: sparse_categorical_crossentropy epochs: 1 }');
    expectError('model m(input: [4]) { dense(3, activation: softmax) }\ntrain { data: iris(offset: 150) loss: sparse_categorical_crossentropy epochs: 1 }', 2005, 'offset must be an integer in [0, 149]');
    expectError('model m(input: [784]) { dense(10, activation: softmax) }\ntrain { data: fashion_mnist(offset: -1) loss: categorical_crossentropy epochs: 1 }', 2005, 'offset');
  });
});
