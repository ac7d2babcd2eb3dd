// Members on data of their own (`split:` in the ensemble block): which training examples member i trains
// on, which it validates on, and in what order it sees them each epoch. Everything here is a function of
// (the split, the number of training examples n, the seed, the member's id, the epoch) alone, so a member
// gets the same examples in any population, in any shard, on any worker, and after a resume.
//
//  - kfold(k): the n examples, in the data's order, are cut into k contiguous folds; the first (n mod k)
//    folds hold one example more. Member i validates on fold (i mod k) and trains on the others, in order.
//  - bootstrap(): member i draws n indices with replacement from Rng.of(seed, 'bootstrap', i), and trains
//    on them in the order drawn; the examples it never drew (its out-of-bag set, in order) validate it.
//
// An epoch is L examples for every member, L the largest member's training set (kfold: n - floor(n/k);
// bootstrap: n), so that every member's batch has the same size at every step. A member with fewer
// examples (kfold, when k does not divide n: one fewer) fills its epoch by cycling: after its own examples
// it takes the first ones of the same epoch's order again. With `shuffle`, member i's examples are
// permuted each epoch by Rng.of(seed, 'member-shuffle', i, epoch); without, they keep the order above.
import { Rng } from '../util/rng.js';
import type { MemberSplit } from '../vocabulary/splits.js';

/** A member's own examples, as indices into the training set. */
export interface MemberExamples {
  /** what it trains on, in order (bootstrap: the draws, repeats included) */
  train: Int32Array;
  /** what it validates on, in the data's order */
  held: Int32Array;
}

/** [start, end) of fold f when n examples are cut into k folds, the first (n mod k) one example larger. */
export function foldRange(n: number, k: number, f: number): [number, number] {
  const small = Math.floor(n / k);
  const extra = n % k;
  const start = f * small + Math.min(f, extra);
  return [start, start + small + (f < extra ? 1 : 0)];
}

/** Member `member`'s training and held-out examples among n. */
export function memberExamples(split: MemberSplit, n: number, seed: number, member: number): MemberExamples {
  if (split.kind === 'kfold') {
    const [start, end] = foldRange(n, split.k, member % split.k);
    const train = new Int32Array(n - (end - start));
    for (let i = 0, j = 0; i < n; i++) if (i < start || i >= end) train[j++] = i;
    return { train, held: range(start, end) };
  }
  const rng = Rng.of(seed, 'bootstrap', member);
  const train = new Int32Array(n);
  const drawn = new Uint8Array(n);
  for (let j = 0; j < n; j++) {
    train[j] = rng.int(n);
    drawn[train[j]] = 1;
  }
  const held: number[] = [];
  drawn.forEach((d, i) => d || held.push(i));
  return { train, held: Int32Array.from(held) };
}

/** L, the examples of every member's epoch: the largest member's training set. */
export function epochLength(split: MemberSplit, n: number): number {
  return split.kind === 'kfold' ? n - Math.floor(n / split.k) : n;
}

/**
 * The L training-set indices member `member` sees in epoch `epoch`, in order: its own examples (permuted
 * by Rng.of(seed, 'member-shuffle', member, epoch) when shuffling), cycled to fill L.
 */
export function memberEpochOrder(split: MemberSplit, n: number, seed: number, shuffle: boolean, member: number, epoch: number, own = memberExamples(split, n, seed, member).train): Int32Array {
  const count = own.length;
  const perm = shuffle ? Rng.of(seed, 'member-shuffle', member, epoch).permutation(count) : undefined;
  const length = epochLength(split, n);
  const order = new Int32Array(length);
  for (let j = 0; j < length; j++) {
    const at = j % count;
    order[j] = own[perm ? perm[at] : at];
  }
  return order;
}

function range(start: number, end: number): Int32Array {
  const out = new Int32Array(end - start);
  for (let i = 0; i < out.length; i++) out[i] = start + i;
  return out;
}

/** What the members train and validate on, in words, for n training examples. */
export function describeSplit(split: MemberSplit, n: number): string {
  if (split.kind === 'bootstrap') return `bootstrap(): each member trains on ${n} draws with replacement and validates on the examples it did not draw`;
  const sizes = [...new Set(Array.from({ length: split.k }, (_, f) => foldRange(n, split.k, f)).map(([a, b]) => b - a))].sort((a, b) => a - b);
  return `kfold(${split.k}): member i validates on fold i mod ${split.k} (${sizes.join(' or ')} examples) and trains on the other ${split.k - 1}`;
}
