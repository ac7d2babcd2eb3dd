// npy(x: "x.npy", y: "y.npy", classes: K) and npz("d.npz", x: "x_train", y: "y_train", classes: K): NumPy
// arrays as a dataset. x holds one row per example: [count] (one feature each), [count, features],
// [count, h, w] (images, which become [h, w, 1] as idx's do) or [count, h, w, c]; uint8 values are
// pixels, scaled to [0, 1] as idx() scales them, every other type is taken as it is. y holds class
// labels: one class index per example, [count] or [count, 1] (without `classes` the count is the largest
// label + 1, at least 2), or one one-hot row per example, [count, classes]. The rules here are the ones
// the checker applies to the headers (sources.ts), so the shapes it promised are the ones loaded.
import { readFileSync } from 'node:fs';
import { Messages } from '../diagnostics/messages.js';
import { dataError, type Dataset } from './dataset.js';
import { classCount, tooFewClasses } from './idx.js';
import { npyValues, parseNpyHeader, tuple, type NpyHeader, type NpyWhere } from './npy.js';
import { npzArray, npzMembers } from './npz.js';
import { notARegularFile } from '../util/regular-file.js';

/** A .npy array's bytes, its header, and how messages name it. */
export interface NpyArray {
  bytes: Uint8Array;
  header: NpyHeader;
  where: NpyWhere;
}

/** How y writes its labels. */
export type LabelForm = { kind: 'index' } | { kind: 'onehot'; classes: number };

/** `x.npy` and `y.npy`, paths to open; `shown` maps each to how the .net file wrote it. */
export function loadNpy(x: string, y: string, classes: number | undefined, shown: (file: string) => string = (f) => f, tokenIds = false): Dataset {
  const array = (file: string) => npyArray(readDataFile(file, shown(file)), { file, shown: `"${shown(file)}"` });
  return numpyDataset(array(x), array(y), classes, `npy(x: "${shown(x)}")`, tokenIds);
}

/** The arrays `xKey` and `yKey` of the archive `file`; `shown` is how the .net file wrote its path. */
export function loadNpz(file: string, xKey: string, yKey: string, classes: number | undefined, shown: string = file, tokenIds = false): Dataset {
  const bytes = readDataFile(file, shown);
  const members = npzMembers(bytes, [xKey, yKey], { file, shown });
  const array = (key: string): NpyArray => npzArray(bytes, members.get(key)!, { archive: { file, shown }, array: npzWhere(file, shown, key) });
  return numpyDataset(array(xKey), array(yKey), classes, `npz("${shown}", x: "${xKey}")`, tokenIds);
}

/** How messages name array `key` of an archive. */
export const npzWhere = (file: string, shown: string, key: string): NpyWhere => ({ file, shown: `"${shown}" array "${key}"` });

export function npyArray(bytes: Uint8Array, where: NpyWhere): NpyArray {
  return { bytes, header: parseNpyHeader(bytes, where), where };
}

/** `tokenIds`: the model reads x as token ids, so uint8 values are ids, taken as they are, not pixels. */
function numpyDataset(x: NpyArray, y: NpyArray, given: number | undefined, name: string, tokenIds: boolean): Dataset {
  const featureShape = exampleShape(x);
  const form = labelForm(y, given);
  checkRows(x, y);
  const xValues = npyValues(x.bytes, x.header, x.where);
  if (x.header.type.kind === 'u' && x.header.type.size === 1 && !tokenIds) for (let i = 0; i < xValues.length; i++) xValues[i] /= 255;
  const labels = classLabels(npyValues(y.bytes, y.header, y.where), form, given, y.where);
  return { name, count: x.header.shape[0], x: xValues, featureShape, y: labels.y, labels: { kind: 'classes', classes: labels.classes } };
}

/** The shape of one example of x. */
export function exampleShape(x: Pick<NpyArray, 'header' | 'where'>): number[] {
  const shape = x.header.shape;
  if (shape.length === 0) throw badShape(x, 'it is a single number; features need one row per example, [count, ...]');
  const rest = shape.slice(1);
  return rest.length === 0 ? [1] : rest.length === 2 ? [...rest, 1] : rest;
}

/** How y writes its labels; `given` is `classes:`, which one-hot rows must agree with. */
export function labelForm(y: Pick<NpyArray, 'header' | 'where'>, given: number | undefined): LabelForm {
  const shape = y.header.shape;
  const forms = 'labels are one class index per example, [count], or one one-hot row per example, [count, classes]';
  if (shape.length === 1 || (shape.length === 2 && shape[1] === 1)) return { kind: 'index' };
  if (shape.length !== 2 || shape[1] === 0) throw badShape(y, forms);
  if (given !== undefined && given !== shape[1]) {
    throw badShape(y, `one-hot rows of ${shape[1]} classes, but classes: ${given}; give classes: ${shape[1]}, or leave classes: out (one-hot rows give their own count)`);
  }
  return { kind: 'onehot', classes: shape[1] };
}

/** x and y must have one row per example each. */
export function checkRows(x: Pick<NpyArray, 'header' | 'where'>, y: Pick<NpyArray, 'header' | 'where'>): void {
  const [nx, ny] = [x.header.shape[0], y.header.shape[0]];
  if (nx !== ny) throw dataError(Messages.NpyRowMismatch, [x.where.shown, nx, y.where.shown, ny], y.where.file);
}

/** Class indices from y's values, each checked; the class count is `given`, one-hot's width, or counted. */
export function classLabels(values: Float32Array, form: LabelForm, given: number | undefined, where: NpyWhere): { y: Float32Array; classes: number } {
  if (form.kind === 'onehot') return { y: oneHotIndices(values, form.classes, where), classes: form.classes };
  const classes = given ?? classCount(values);
  values.forEach((v, i) => {
    if (!Number.isInteger(v) || v < 0) throw dataError(Messages.DataLabelOutOfRange, [v, i, `: class indices in ${where.shown} are whole numbers from 0`], where.file);
    if (v >= classes) throw dataError(Messages.DataLabelOutOfRange, [v, i, ` in 0..${classes - 1}: ${tooFewClasses(classes, classCount(values))}`], where.file);
  });
  return { y: values, classes };
}

function oneHotIndices(values: Float32Array, classes: number, where: NpyWhere): Float32Array {
  const count = values.length / classes;
  const out = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    const row = values.subarray(r * classes, (r + 1) * classes);
    let hot = -1;
    let ok = true;
    row.forEach((v, c) => {
      if (v === 1 && hot < 0) hot = c;
      else if (v !== 0) ok = false;
    });
    if (!ok || hot < 0) {
      const shownRow = row.length > 12 ? `${Array.from(row.subarray(0, 12)).join(', ')}, ...` : Array.from(row).join(', ');
      throw dataError(Messages.NpyNotOneHot, [where.shown, r, `a [count, ${classes}] label array needs one 1 and ${classes - 1} 0s in each row, this row is [${shownRow}]`], where.file);
    }
    out[r] = hot;
  }
  return out;
}

const badShape = (a: Pick<NpyArray, 'header' | 'where'>, why: string) => dataError(Messages.NpyBadShape, [a.where.shown, tuple(a.header.shape), why], a.where.file);

function readDataFile(file: string, shown: string): Uint8Array {
  const kind = notARegularFile(file);
  if (kind) throw dataError(Messages.DataFileUnreadable, [shown, `it is ${kind}, not a file`], file);
  try {
    return readFileSync(file);
  } catch (e) {
    throw dataError(Messages.DataFileUnreadable, [shown, (e as Error).message], file);
  }
}
