// Member splits: how the members of an ensemble get data of their own (`split:` in the ensemble block).
// kfold(k) gives member i every training example but those of fold (i mod k), which it validates on;
// bootstrap() gives member i n draws with replacement, and validates it on the examples it never drew.
import type { ArgSpec } from '../core/arg-spec.js';

export interface SplitSpec {
  name: 'kfold' | 'bootstrap';
  args: ArgSpec[];
}

export const splits: SplitSpec[] = [
  { name: 'kfold', args: [{ name: 'k', type: { kind: 'int', min: 2 }, positional: true, required: true }] },
  { name: 'bootstrap', args: [] },
];

/** A checked split: what the runtime needs to give each member its examples. */
export type MemberSplit = { kind: 'kfold'; k: number } | { kind: 'bootstrap' };

/** How the .net file writes a split: `kfold(5)`, `bootstrap()`. */
export const splitText = (s: MemberSplit): string => (s.kind === 'kfold' ? `kfold(${s.k})` : 'bootstrap()');

/**
 * The setting (the group of members that share every varied value) member i belongs to: under kfold the
 * k members i = s*k, ..., s*k + k - 1 are setting s, one per fold; otherwise every member is its own.
 */
export const settingOf = (split: MemberSplit | undefined, member: number): number => (split?.kind === 'kfold' ? Math.floor(member / split.k) : member);

/**
 * Which examples the train block's `validation` and `test` hold out: `last`, the data's last in its order
 * (Keras' validation_split), or `shuffled`, a sample drawn from the ensemble's seed (data sorted by class
 * would otherwise validate on its last classes alone).
 */
export const holdouts = ['last', 'shuffled'] as const;
export type Holdout = (typeof holdouts)[number];
