// Batching: the order of an epoch's examples, the batches it splits into, and one batch's features and
// labels copied out in the encoding its loss wants.
import { Rng } from '../util/rng.js';
import type { LossSpec } from '../vocabulary/losses.js';
import { featureSize, labelWidth, type Dataset, type LabelEncoding, type Labels } from './dataset.js';

/** A seeded permutation, Rng.of(seed, 'shuffle', epoch), when shuffling; else the examples in order. */
export function epochOrder(count: number, shuffle: boolean, seed: number, epoch: number): Int32Array {
  if (shuffle) return Rng.of(seed, 'shuffle', epoch).permutation(count);
  const order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  return order;
}

/** [start, end) of each batch, as Keras: full batches, then a smaller last one if anything is left. */
export function batchRanges(count: number, batch: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (let start = 0; start < count; start += batch) ranges.push([start, Math.min(start + batch, count)]);
  return ranges;
}

/**
 * The label encoding a loss needs, matching expectedOutput in src/check/data-fit.ts: value labels go as
 * they are; class labels become one 0/1 value (two classes under binary or regression losses), one-hot
 * rows (categorical, or regression on more classes) or the index itself (sparse).
 */
export function labelEncoding(expects: LossSpec['expects'], labels: Labels): LabelEncoding {
  if (labels.kind === 'values') return 'values';
  switch (expects) {
    case 'binary':
      return 'binary';
    case 'categorical':
      return 'onehot';
    case 'sparse':
      return 'index';
    case 'regression':
      return labels.classes === 2 ? 'binary' : 'onehot';
  }
}

/** The numbers per example of labels so encoded: `classes` one-hot, `columns` values, else one. */
export function encodedLabelWidth(encoding: LabelEncoding, classes: number, columns: number): number {
  return encoding === 'onehot' ? classes : encoding === 'values' ? columns : 1;
}

/** Rows of fewer features than this are copied element by element (gatherBatch). */
const NARROW = 16;

/** Examples order[start..end) copied out row-major, with labels `yWidth` numbers each. */
export function gatherBatch(
  ds: Dataset,
  order: Int32Array,
  start: number,
  end: number,
  encoding: LabelEncoding,
  classes: number,
): { x: Float32Array; y: Float32Array; size: number; yWidth: number } {
  const size = end - start;
  const xWidth = featureSize(ds);
  const from = labelWidth(ds.labels);
  const yWidth = encodedLabelWidth(encoding, classes, from);
  if (encoding !== 'values' && ds.labels.kind !== 'classes' && from !== 1) throw new Error(`internal error: ${encoding} labels need one label column, ${ds.name} has ${from}`);
  const x = new Float32Array(size * xWidth);
  const y = new Float32Array(size * yWidth);
  for (let i = 0; i < size; i++) {
    const e = order[start + i];
    // a narrow row by its elements: a view and a copy per example cost more than they move
    if (xWidth < NARROW) for (let k = 0; k < xWidth; k++) x[i * xWidth + k] = ds.x[e * xWidth + k];
    else x.set(ds.x.subarray(e * xWidth, (e + 1) * xWidth), i * xWidth);
    if (encoding === 'values') y.set(ds.y.subarray(e * from, (e + 1) * from), i * yWidth);
    else if (encoding === 'onehot') {
      const c = ds.y[e];
      if (!(c >= 0 && c < classes && Number.isInteger(c))) throw new Error(`internal error: label ${c} of ${ds.name} is not a class index below ${classes}`);
      y[i * classes + c] = 1;
    } else y[i] = ds.y[e]; // binary and index: the class index as it is
  }
  return { x, y, size, yWidth };
}
