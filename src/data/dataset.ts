// The in-memory form of every data source, and what training asks of it. Loaders (one file per source
// kind) fill a Dataset; batching and label encoding work on any Dataset.
import { formatMessage, type MessageDef } from '../diagnostics/messages.js';

export type Labels =
  /** one integer class index per example, `classes` distinct values */
  | { kind: 'classes'; classes: number }
  /** `columns` numeric label values per example (regression, or already-encoded labels) */
  | { kind: 'values'; columns: number };

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
  /** a text source's vocabulary: the word of each token id (text.ts) */
  vocabulary?: string[];
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

/** A DataError from the message catalogue, so its code and text stay in one place. */
export function dataError(def: MessageDef, args: readonly (string | number)[], file?: string, line?: number, column?: number): DataError {
  return new DataError(def.code, formatMessage(def, args), file, line, column);
}

/** The DataError as the CLI prints it, for code that has nowhere better to show one. */
export function formatDataError(e: DataError): string {
  const where = e.file === undefined ? '' : e.line === undefined ? `${e.file}: ` : `${e.file}(${e.line}${e.column === undefined ? '' : `,${e.column}`}): `;
  return `${where}error NET${e.code}: ${e.message}`;
}

/** Examples start..end-1 of a dataset, sharing its memory. */
export function sliceDataset(ds: Dataset, start: number, end: number): Dataset {
  const xWidth = featureSize(ds);
  const yWidth = labelWidth(ds.labels);
  return { ...ds, count: end - start, x: ds.x.subarray(start * xWidth, end * xWidth), y: ds.y.subarray(start * yWidth, end * yWidth) };
}

/** ds's examples copied out in `order`. */
export function permuted(ds: Dataset, order: Int32Array): Dataset {
  const [xw, yw] = [featureSize(ds), labelWidth(ds.labels)];
  const x = new Float32Array(ds.x.length);
  const y = new Float32Array(ds.y.length);
  order.forEach((from, to) => {
    x.set(ds.x.subarray(from * xw, (from + 1) * xw), to * xw);
    y.set(ds.y.subarray(from * yw, (from + 1) * yw), to * yw);
  });
  return { ...ds, x, y };
}

/** numbers per example in x */
export function featureSize(ds: Dataset): number {
  return ds.featureShape.reduce((a, b) => a * b, 1);
}

/** numbers per example in y: a class index, or the label columns */
export function labelWidth(labels: Labels): number {
  return labels.kind === 'classes' ? 1 : labels.columns;
}
