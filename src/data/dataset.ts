// The in-memory form of every data source, and what training asks of it. Loaders (one file per source
// kind) fill a Dataset; batching and label encoding work on any Dataset.
import type { Labels } from '../vocabulary/data-sources.js';

export interface Dataset {
  /** what it is, for messages: `mnist()`, `csv("points.csv")` */
  name: string;
  /** number of examples */
  count: number;
  /** features, row-major, example after example */
  x: Float32Array;
  /** the shape of one example's features */
  featureShape: number[];
  /** labels: one class index per example (labels.kind 'classes') or `columns` values per example */
  y: Float32Array;
  labels: Labels;
}

/** How the loss wants labels: see encodeLabels. */
export type LabelEncoding = 'binary' | 'onehot' | 'index' | 'values';

/**
 * A mistake in a data file found while loading it: where it is, and what is wrong. The CLI prints it
 * like a diagnostic: `file.csv(ROW,COL): error NET4011: message`.
 */
export class DataError extends Error {
  override name = 'DataError';
  constructor(
    readonly code: number,
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
  }
}
