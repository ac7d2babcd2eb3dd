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
// examples (kfold, when k does not divide n: one fewer) has its epoch padded: after its own examples come
// the first ones of the same epoch's order again, as rows of weight 0 (src/runtime/member-data.ts says
// which rows of a batch are real), so it trains on exactly its own examples, its last batch one row
// shorter. With `shuffle`, member i's examples are permuted each epoch by Rng.of(seed, 'member-shuffle',
// i, epoch); without, they keep the order above.
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
 * The L training-set indices of member `member`'s rows in epoch `epoch`, in order: its own examples
 * (permuted by Rng.of(seed, 'member-shuffle', member, epoch) when shuffling), then, to fill L, its first
 * ones again: padding, which weighs 0 (realRows in src/runtime/member-data.ts).
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

/**
 * Where a short member cannot train exactly as alone, why, in one line; else undefined. Under kfold with
 * k not dividing n, a member one example short pads its last batch of each epoch; when that batch is one
 * row long (L mod batch = 1) the member has no real row left for it, and a step with none would still
 * move its weights (momentum, Adam), so it takes that step on its first example of the epoch again.
 */
export function splitNote(split: MemberSplit, n: number, batch: number): string | undefined {
  if (split.kind !== 'kfold' || n % split.k === 0) return undefined;
  const length = epochLength(split, n);
  if (length % batch !== 1) return undefined;
  return `note: with ${length} examples per epoch and batch ${batch}, the last batch of each epoch is 1 row, and the members holding out a fold of ${Math.ceil(n / split.k)} have none left for it: they take that step on their first example again, one step more than alone (a batch size that leaves a last batch of 2 or more keeps every member exact)`;
}

/** What the members train and validate on, in words, for n training examples. */
export function describeSplit(split: MemberSplit, n: number): string {
  if (split.kind === 'bootstrap') return `bootstrap(): each member trains on ${n} draws with replacement and validates on the examples it did not draw`;
  const sizes = [...new Set(Array.from({ length: split.k }, (_, f) => foldRange(n, split.k, f)).map(([a, b]) => b - a))].sort((a, b) => a - b);
  return `kfold(${split.k}): member i validates on fold i mod ${split.k} (${sizes.join(' or ')} examples) and trains on the other ${split.k - 1}`;
}
