// Data sources and the shapes they give, known at check time: the built-in sets know theirs, and files
// (csv, idx, npy, npz) are read just far enough to learn theirs through the host.
import type { ArgSpec, BoundValue } from '../core/arg-spec.js';
import type { DataShape, Host, MissingFile } from './source-shape.js';
import { classCount, parseIdx } from './idx.js';
import { npyShape, npzShape } from './numpy-shape.js';
import type { LabelColumn } from './class-labels.js';
import { parseCsvRows, summarizeLabels } from './csv.js';
import { bytesMemo } from './bytes-memo.js';
import { SPAM_ASSASSIN_EMAILS } from './spam.js';

export type { DataShape, Host, MissingFile } from './source-shape.js';

export interface DataSourceSpec {
  name: string;
  args: ArgSpec[];
  /**
   * the shape, or a message saying why it cannot be known (with its own code, else NET4008's, at the
   * argument `arg` when it is about one, else at the call)
   */
  shape(args: Record<string, BoundValue>, host: Host | undefined): DataShape | ShapeError | MissingFile | undefined;
}

export interface ShapeError {
  error: string;
  code?: number;
  arg?: string;
}

const n = (value: number): ArgSpec => ({ name: 'n', type: { kind: 'int', min: 1 }, default: value });
const noise = (value: number): ArgSpec => ({ name: 'noise', type: { kind: 'number', min: 0 }, default: value });
// packaged sets: `limit` examples from `offset` on, in their fixed order (fewer when fewer are left)
const limit = (total: number): ArgSpec => ({ name: 'limit', type: { kind: 'int', min: 1, max: total }, default: total });
const offset = (total: number): ArgSpec => ({ name: 'offset', type: { kind: 'int', min: 0, max: total - 1 }, default: 0 });
const images = (): DataShape => ({ features: [28, 28, 1], labels: { kind: 'classes', classes: 10 } });
// text as token ids (text.ts): the vocabulary's size (padding and out-of-vocabulary included) and each text's length
const vocab: ArgSpec = { name: 'vocab', type: { kind: 'int', min: 3 }, default: 10000 };
const length: ArgSpec = { name: 'length', type: { kind: 'int', min: 1 }, default: 100 };

export const dataSources: DataSourceSpec[] = [
  { name: 'xor', args: [n(200), noise(0.1)], shape: () => ({ features: [2], labels: { kind: 'classes', classes: 2 } }) },
  { name: 'moons', args: [n(400), noise(0.1)], shape: () => ({ features: [2], labels: { kind: 'classes', classes: 2 } }) },
  {
    name: 'spirals',
    args: [n(400), { name: 'classes', type: { kind: 'int', min: 2, max: 100 }, default: 2 }, noise(0.1)],
    shape: (a) => ({ features: [2], labels: { kind: 'classes', classes: a.classes as number } }),
  },
  { name: 'iris', args: [limit(150), offset(150)], shape: () => ({ features: [4], labels: { kind: 'classes', classes: 3 } }) },
  { name: 'mnist', args: [limit(10000), offset(10000)], shape: images },
  { name: 'fashion_mnist', args: [limit(10000), offset(10000)], shape: images },
  {
    name: 'csv',
    args: [
      { name: 'path', type: { kind: 'string' }, positional: true, required: true },
      { name: 'label', type: { kind: 'strings' } },
    ],
    shape: (a, host) => csvShape(a.path as string, a.label as string[] | undefined, host),
  },
  {
    name: 'text',
    args: [
      { name: 'path', type: { kind: 'string' }, positional: true, required: true },
      { name: 'text', type: { kind: 'string' }, required: true },
      { name: 'label', type: { kind: 'string' }, required: true },
      vocab,
      length,
    ],
    shape: (a, host) => textShape(a, host),
  },
  {
    name: 'spam_assassin',
    args: [vocab, length, limit(SPAM_ASSASSIN_EMAILS), offset(SPAM_ASSASSIN_EMAILS)],
    shape: (a) => ({ features: [a.length as number], labels: { kind: 'classes', classes: 2 }, tokens: a.vocab as number }),
  },
  {
    name: 'idx',
    args: [
      { name: 'images', type: { kind: 'string' }, required: true },
      { name: 'labels', type: { kind: 'string' }, required: true },
      // no default: counted from the label file
      { name: 'classes', type: { kind: 'int', min: 2 } },
    ],
    shape: (a, host) => idxShape(a.images as string, a.labels as string, a.classes as number | undefined, host),
  },
  {
    name: 'npy',
    args: [
      { name: 'x', type: { kind: 'string' }, required: true },
      { name: 'y', type: { kind: 'string' }, required: true },
      // no default: one-hot labels give it, class indices are counted
      { name: 'classes', type: { kind: 'int', min: 2 } },
    ],
    shape: (a, host) => npyShape(a.x as string, a.y as string, a.classes as number | undefined, host),
  },
  {
    name: 'npz',
    args: [
      { name: 'path', type: { kind: 'string' }, positional: true, required: true },
      { name: 'x', type: { kind: 'string' }, required: true },
      { name: 'y', type: { kind: 'string' }, required: true },
      { name: 'classes', type: { kind: 'int', min: 2 } },
    ],
    shape: (a, host) => npzShape(a.path as string, a.x as string, a.y as string, a.classes as number | undefined, host),
  },
];

/** The columns a csv file's header row names, or why it has none. */
function csvColumns(path: string, host: Host): string[] | ShapeError | MissingFile {
  const bytes = host.readBytes(path, 64 * 1024);
  if (!bytes) return { missing: `cannot read the csv file "${path}"` };
  const header = new TextDecoder().decode(bytes).split(/\r?\n/, 1)[0] ?? '';
  const columns = header.split(',').map((c) => c.trim().replace(/^"|"$/g, ''));
  if (columns.length < 2 || columns.some((c) => c === '')) return { error: `the csv file "${path}" needs a header row naming at least two columns` };
  return columns;
}

function csvShape(path: string, label: string[] | undefined, host: Host | undefined): ReturnType<DataSourceSpec['shape']> {
  if (!host) return undefined;
  const columns = csvColumns(path, host);
  if (!Array.isArray(columns)) return columns;
  const labels = label ?? [columns[0]];
  const missing = labels.find((l) => !columns.includes(l));
  if (missing) return { error: `the csv file "${path}" has no column "${missing}"; its columns are: ${columns.join(', ')}` };
  if (labels.length >= columns.length) return { error: `the csv file "${path}" has no feature columns left after the label column(s)` };
  const labelColumn = labels.length === 1 ? csvLabelColumn(path, labels[0], host) : undefined;
  return {
    features: [columns.length - labels.length],
    labels: { kind: 'values', columns: labels.length },
    ...(labelColumn ? { labelColumn } : {}),
    ...(label ? {} : { labelTaken: columns[0] }),
  };
}

/** text("file.csv", text: "body", label: "y"): both columns must be in the header; the label column is read as csv's is. */
function textShape(a: Record<string, BoundValue>, host: Host | undefined): ReturnType<DataSourceSpec['shape']> {
  const path = a.path as string;
  if (!host || path === undefined) return undefined;
  const columns = csvColumns(path, host);
  if (!Array.isArray(columns)) return columns;
  for (const arg of ['text', 'label']) {
    const column = a[arg] as string | undefined;
    if (column !== undefined && !columns.includes(column)) return { error: `the csv file "${path}" has no column "${column}"; its columns are: ${columns.join(', ')}`, arg };
  }
  if (a.text === undefined || a.label === undefined) return undefined;
  if (a.text === a.label) return { error: `the text and the label must be two columns; both are "${a.text as string}"`, arg: 'label' };
  const labelColumn = csvLabelColumn(path, a.label as string, host);
  return { features: [a.length as number], labels: { kind: 'values', columns: 1 }, tokens: a.vocab as number, ...(labelColumn ? { labelColumn } : {}) };
}

// csv files up to this size have their label column read at check time; a larger one is checked when it loads
const CSV_CHECK_BYTES = 4 << 20;

/** The label column of a csv file small enough to read here; undefined otherwise, or when it does not parse. */
function csvLabelColumn(path: string, column: string, host: Host): LabelColumn | undefined {
  const bytes = host.readBytes(path, CSV_CHECK_BYTES + 1);
  if (!bytes || bytes.length > CSV_CHECK_BYTES) return undefined;
  return labelColumns([path, column], bytes, () => {
    try {
      return summarizeLabels(parseCsvRows(bytes), path, column);
    } catch {
      return undefined; // loading it says what is wrong
    }
  });
}

/** The last few label columns read, by their path, column and bytes (parsing megabytes of csv takes a while). */
const labelColumns = bytesMemo<LabelColumn | undefined>();

/** IDX: magic 0x0000 + type byte + rank byte, then rank big-endian uint32 dimensions. */
function idxShape(path: string, labels: string, classes: number | undefined, host: Host | undefined): ReturnType<DataSourceSpec['shape']> {
  if (!host) return undefined;
  const bytes = host.readBytes(path, 1 << 20);
  if (!bytes) return { missing: `cannot read the idx file "${path}"` };
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return undefined; // gzip: the shape is learnt when it loads
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0) return { error: `"${path}" is not an idx file (bad magic number)` };
  const rank = bytes[3];
  if (rank < 2 || bytes.length < 4 + 4 * rank) return { error: `"${path}" is not an idx image file (rank ${rank})` };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i));
  const features = dims.slice(1);
  const k = idxClasses(labels, classes, host);
  if (typeof k !== 'number') return k;
  return { features: features.length === 2 ? [...features, 1] : features, labels: { kind: 'classes', classes: k } };
}

// label files up to this size are counted at check time; a larger one is counted when it loads
const LABEL_BYTES = 16 << 20;

/**
 * The class count: `classes` when given (it must cover the labels), else the largest label + 1 (at least
 * 2). Undefined when the label file is too large to read here or is broken (loading it says how).
 */
function idxClasses(path: string, classes: number | undefined, host: Host): number | { error: string } | MissingFile | undefined {
  const bytes = host.readBytes(path, LABEL_BYTES);
  if (!bytes) return { missing: `cannot read the idx label file "${path}"` };
  let counted: number;
  try {
    const file = parseIdx(bytes, path, path);
    if (file.dims.length !== 1) return classes;
    counted = classCount(file.values);
  } catch {
    return classes;
  }
  if (classes === undefined) return counted;
  if (counted > classes) return { error: `"${path}" holds label ${counted - 1}, but classes: ${classes} allows 0..${classes - 1}; give classes: ${counted} or more, or leave classes: out to count them from the labels` };
  return classes;
}
