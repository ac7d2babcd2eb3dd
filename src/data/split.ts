// Held-out data as Keras' validation_split takes it: the last examples, in order, before any shuffling.
// A test share is held out first, from the very end; the validation share comes right before it. With a
// seed (`holdout: shuffled`), the examples are first put in an order drawn from it.
import { Rng } from '../util/rng.js';
import { labelWidth, permuted, sliceDataset, type Dataset } from './dataset.js';

/**
 * The data in its order (or in the order Rng.of(seed, 'holdout') draws): train, then floor(count *
 * validation) validation examples, then the last floor(count * test) test examples. A split with no
 * example is left out. Without a seed all share ds's memory.
 */
export function splitData(ds: Dataset, validation: number, test = 0, seed?: number): { train: Dataset; validation?: Dataset; test?: Dataset } {
  const tested = Math.floor(ds.count * test);
  const validated = Math.floor(ds.count * validation);
  const order = holdoutOrder(ds.count, validation, test, seed);
  if (order) ds = permuted(ds, order);
  const trainEnd = ds.count - tested - validated;
  const validationEnd = ds.count - tested;
  return {
    train: tested + validated > 0 ? sliceDataset(ds, 0, trainEnd) : ds,
    ...(validated > 0 ? { validation: sliceDataset(ds, trainEnd, validationEnd) } : {}),
    ...(tested > 0 ? { test: sliceDataset(ds, validationEnd, ds.count) } : {}),
  };
}

/** What training sees: the train and validation splits of splitData, never the test split. */
export function splitValidation(ds: Dataset, fraction: number, test = 0, seed?: number): { train: Dataset; validation?: Dataset } {
  const { train, validation } = splitData(ds, fraction, test, seed);
  return validation ? { train, validation } : { train };
}

/** The classes `train` has that `held` lacks, for class labels (one whole number an example); else none. */
export function classesLacking(train: Dataset, held: Dataset): number[] {
  if (labelWidth(train.labels) !== 1) return [];
  const seen = (d: Dataset) => new Set(d.y);
  const [inTrain, inHeld] = [seen(train), seen(held)];
  if ([...inTrain].some((c) => !Number.isInteger(c))) return [];
  return [...inTrain].filter((c) => !inHeld.has(c)).sort((a, b) => a - b);
}

/** The Holdout of a train block (its fractions and `holdout:`) under the ensemble's seed. */
export function holdoutOf(train: { validation: number; test: number; holdout?: string }, seed: number): Holdout {
  return { validation: train.validation, test: train.test, ...(train.holdout === 'shuffled' ? { seed } : {}) };
}

/** How a train block holds data out: its fractions, and the seed that orders the examples under `holdout: shuffled`. */
export interface Holdout {
  validation: number;
  test: number;
  seed?: number;
}

/** The order splitData puts `count` examples in before it cuts: undefined for their own order. */
function holdoutOrder(count: number, validation: number, test: number, seed?: number): Int32Array | undefined {
  const held = Math.floor(count * test) + Math.floor(count * validation);
  return seed !== undefined && held > 0 ? Rng.of(seed, 'holdout').permutation(count) : undefined;
}

/**
 * Which of `count` examples splitData gives the train split, by their index, in its order: what a source
 * that learns from its own rows (a text vocabulary) may learn from without seeing a held-out example.
 */
export function trainingRows(count: number, holdout: Holdout | undefined): Int32Array {
  const { validation = 0, test = 0, seed } = holdout ?? {};
  const trainEnd = count - Math.floor(count * test) - Math.floor(count * validation);
  const order = holdoutOrder(count, validation, test, seed);
  return order ? order.subarray(0, Math.max(0, trainEnd)) : Int32Array.from({ length: Math.max(0, trainEnd) }, (_, i) => i);
}
