// What a data source gives at check time, and what the checker may ask of the file system to learn it
// (sources.ts's registry and the readers of file headers, numpy-shape.ts, share these).
import type { Shape } from '../core/arg-spec.js';
import type { LabelColumn } from './class-labels.js';
import type { Labels } from './dataset.js';

export interface DataShape {
  features: Shape;
  labels: Labels;
  /** a csv file's one label column as read at check time (a file small enough to read whole) */
  labelColumn?: LabelColumn;
  /** the column a csv() without label: takes as its label */
  labelTaken?: string;
  /** a text source's features are token ids in [0, tokens) (its vocab) */
  tokens?: number;
}

/** A data file that cannot be read: a warning at check time (it may not exist yet), an error when training. */
export interface MissingFile {
  missing: string;
}

/** What the checker may ask of the outside world. The CLI gives one backed by the file system. */
export interface Host {
  /** resolved against the .net file's folder; undefined when the file cannot be read */
  readBytes(path: string, maxBytes: number): Uint8Array | undefined;
}
