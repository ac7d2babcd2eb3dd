// Members on data of their own (`split:`): which examples member i trains and validates on, in what order
// it sees them, and which varied values it shares, each against the rule docs/language.md states, computed
// here from scratch.
import { describe, expect, it } from 'vitest';
import { epochLength, foldRange, memberEpochOrder, memberExamples, splitNote } from '../src/data/member-splits.js';
import { realRows } from '../src/runtime/member-data.js';
import { Rng } from '../src/util/rng.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { expectClean, expectDiagnostics, expectError } from './helpers.js';

const ints = (a: ArrayLike<number>) => Array.from(a);
const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

describe('kfold(k)', () => {
  it('cuts n examples into k contiguous folds in order, the first n mod k one example larger', () => {
    // 23 = 4 * 5 + 3: folds of 5, 5, 5, 4, 4
    expect(range(0, 5).map((f) => foldRange(23, 5, f))).toEqual([[0, 5], [5, 10], [10, 15], [15, 19], [19, 23]]);
    expect(range(0, 4).map((f) => foldRange(8, 4, f))).toEqual([[0, 2], [2, 4], [4, 6], [6, 8]]);
  });

  it('member i validates on fold i mod k and trains on every other example, in the data order', () => {
    const split = { kind: 'kfold', k: 5 } as const;
    for (const member of [0, 3, 7, 14]) {
      const [start, end] = foldRange(23, 5, member % 5);
      const e = memberExamples(split, 23, 9, member);
      expect(ints(e.held)).toEqual(range(start, end));
      expect(ints(e.train)).toEqual(range(0, 23).filter((i) => i < start || i >= end));
    }
  });

  it('without shuffling a member sees its examples in order, the shorter members padded to the largest member\'s epoch', () => {
    const split = { kind: 'kfold', k: 5 } as const;
    expect(epochLength(split, 23)).toBe(19); // 23 - floor(23 / 5): the members holding out a fold of 4
    // member 0 holds out 5 examples: 18 of its own, then its first again, as a padding row
    expect(ints(memberEpochOrder(split, 23, 9, false, 0, 3))).toEqual([...range(5, 23), 5]);
    expect(ints(memberEpochOrder(split, 23, 9, false, 4, 3))).toEqual(range(0, 19));
  });

  it("a short member's padding is not among its real rows, but for a last batch it would leave empty", () => {
    // 18 own examples in an epoch of 19, batches of 4: [16, 19) holds 2 real rows and the padding
    expect(realRows(18, 16, 19)).toBe(2);
    expect(realRows(19, 16, 19)).toBe(3);
    expect(realRows(18, 0, 4)).toBe(4);
    // batches of 6: [18, 19) would hold none; the member keeps that row, its first example again
    expect(realRows(18, 18, 19)).toBe(1);
    const split = { kind: 'kfold', k: 5 } as const;
    expect(splitNote(split, 23, 4)).toBeUndefined();
    expect(splitNote(split, 23, 6)).toMatch(/^note: with 19 examples per epoch and batch 6, the last batch of each epoch is 1 row, and the members holding out a fold of 5 have none left/);
    expect(splitNote(split, 25, 6)).toBeUndefined(); // 5 divides 25: no member is short
    expect(splitNote({ kind: 'bootstrap' }, 23, 6)).toBeUndefined();
  });

  it("with shuffling, member i's order each epoch is its examples permuted by Rng.of(seed, 'member-shuffle', i, epoch)", () => {
    const split = { kind: 'kfold', k: 5 } as const;
    const own = range(5, 23);
    const perm = Rng.of(9, 'member-shuffle', 5, 2).permutation(own.length);
    const expected = [...ints(perm).map((p) => own[p]), own[perm[0]]];
    expect(ints(memberEpochOrder(split, 23, 9, true, 5, 2))).toEqual(expected);
    // another epoch, another order; the same examples
    const next = ints(memberEpochOrder(split, 23, 9, true, 5, 3));
    expect(next).not.toEqual(expected);
    expect(new Set(next)).toEqual(new Set(own));
  });
});

describe('bootstrap()', () => {
  it("member i trains on n draws with replacement from Rng.of(seed, 'bootstrap', i), in the order drawn", () => {
    const split = { kind: 'bootstrap' } as const;
    for (const member of [0, 1, 6]) {
      const rng = Rng.of(4, 'bootstrap', member);
      const draws = range(0, 50).map(() => Math.floor(rng.uniform() * 50));
      const e = memberExamples(split, 50, 4, member);
      expect(ints(e.train)).toEqual(draws);
      // its validation set is its out-of-bag set: every example it never drew, in order
      expect(ints(e.held)).toEqual(range(0, 50).filter((i) => !draws.includes(i)));
      // every member's epoch is its own n draws: nothing is ever padded
      expect(e.train.length).toBe(epochLength(split, 50));
      expect(ints(memberEpochOrder(split, 50, 4, false, member, 0))).toEqual(draws);
    }
    expect(ints(memberExamples(split, 50, 4, 0).train)).not.toEqual(ints(memberExamples(split, 50, 4, 1).train));
    expect(epochLength(split, 50)).toBe(50);
  });
});

describe('varied hyperparameters under kfold', () => {
  const source = (vary: string, split = 'kfold(5)') => `model m(input: [2]) {
  drop = dropout(0.1)
  dense(1, activation: sigmoid)
}
ensemble { members: 20 seed: 3 split: ${split} ${vary} }
train { data: moons() loss: binary_crossentropy epochs: 1 }
`;

  it('the k members of a setting share every value: a list cycles over the settings', () => {
    const state = expectClean(source('vary lr: [0.001, 0.003, 0.01, 0.03]'));
    const table = hyperTable(state.program!, state.ir!);
    expect(range(0, 20).map((i) => table.value('lr', i))).toEqual(range(0, 20).map((i) => [0.001, 0.003, 0.01, 0.03][Math.floor(i / 5)]));
  });

  it('a space draws once per setting, for setting s as it draws for member s without a split', () => {
    const kfold = expectClean(source('vary lr: loguniform(1e-4, 1e-1)\nvary drop.rate: uniform(0, 0.5)'));
    const plain = expectClean(source('vary lr: loguniform(1e-4, 1e-1)\nvary drop.rate: uniform(0, 0.5)').replace('split: kfold(5) ', ''));
    const [a, b] = [hyperTable(kfold.program!, kfold.ir!), hyperTable(plain.program!, plain.ir!)];
    for (const key of ['lr', 'dropout_1.rate']) {
      expect(range(0, 20).map((i) => a.value(key, i))).toEqual(range(0, 20).map((i) => b.value(key, Math.floor(i / 5))));
      expect(new Set(range(0, 20).map((i) => a.value(key, i))).size).toBe(4);
    }
  });

  it('bootstrap() gives every member its own value, as without a split', () => {
    const state = expectClean(source('vary lr: [0.001, 0.003, 0.01, 0.03]', 'bootstrap()'));
    const table = hyperTable(state.program!, state.ir!);
    expect(range(0, 8).map((i) => table.value('lr', i))).toEqual([0.001, 0.003, 0.01, 0.03, 0.001, 0.003, 0.01, 0.03]);
  });
});

describe('checking a split', () => {
  const file = (ensemble: string, train = '', schedules = '') => `model m(input: [2]) {
  dense(1, activation: sigmoid)
}
ensemble { ${ensemble} }
train { data: moons() loss: binary_crossentropy epochs: 2 ${train} }
${schedules}`;

  it('a split validates every member, so schedules and plateau may rank by val_ metrics without a validation share', () => {
    expectDiagnostics(file('members: 10 split: kfold(5)', 'lr_schedule: plateau(metric: val_loss)', 'schedule halving { every: 1 epochs, metric: val_accuracy }'), '');
    expectDiagnostics(file('members: 3 split: bootstrap()', '', 'schedule early_stopping { patience: 2, metric: val_loss }'), '');
  });

  it('bootstrap() refuses a validation share and PBT, as kfold does', () => {
    expectError(file('members: 3 split: bootstrap() vary lr: [0.1, 0.01]', 'validation: 0.1'), 3030, 'split: bootstrap() validates each member on examples of its own (the examples it did not draw)');
    expectError(file('members: 3 split: bootstrap() vary lr: [0.1, 0.01]', '', 'schedule pbt { every: 1 epochs }'), 3031, 'refused with split: bootstrap()');
  });

  it('--members must keep kfold\'s settings whole too (NET3032 at the split)', () => {
    expectError(file('members: 10 split: kfold(5)'), 3032, 'got 7 (--members)', { members: 7 });
    expectClean(file('members: 10 split: kfold(5)'), { members: 15 });
  });
});
