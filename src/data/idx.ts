// idx(images: ..., labels: ..., classes: K): the MNIST IDX format, plain or gzip. A file is
// 0x00 0x00, a type byte, a rank byte, `rank` big-endian uint32 dimensions, then the values big-endian.
// Images [count, h, w] become examples [h, w, 1] (as the checker's idxShape says); ubyte pixels are
// scaled to [0, 1], other types are taken as they are. Labels are one class index per example; without
// `classes` the class count is the largest label + 1 (at least 2), as the checker counts it.
import { readFileSync } from 'node:fs';
import { notARegularFile } from '../util/regular-file.js';
import { gunzipSync } from 'node:zlib';
import { Messages } from '../diagnostics/messages.js';
import { dataError, type Dataset } from './dataset.js';

/** type byte → bytes per value and how to read one */
const types: Record<number, { size: number; read(v: DataView, at: number): number }> = {
  0x08: { size: 1, read: (v, at) => v.getUint8(at) },
  0x09: { size: 1, read: (v, at) => v.getInt8(at) },
  0x0b: { size: 2, read: (v, at) => v.getInt16(at) },
  0x0c: { size: 4, read: (v, at) => v.getInt32(at) },
  0x0d: { size: 4, read: (v, at) => v.getFloat32(at) },
  0x0e: { size: 8, read: (v, at) => v.getFloat64(at) },
};

interface IdxFile {
  type: number;
  dims: number[];
  values: Float32Array;
}

/** `images` and `labels` are paths to open; `shown` maps each to how the .net file wrote it. */
export function loadIdx(images: string, labels: string, given: number | undefined, shown: (file: string) => string = (f) => f): Dataset {
  const img = readIdx(images, shown(images));
  const lab = readIdx(labels, shown(labels));
  if (img.dims.length < 2) throw bad(images, `"${shown(images)}" is not an idx image file: its rank is ${img.dims.length}, an image file has at least [count, size]`);
  if (lab.dims.length !== 1) throw bad(labels, `"${shown(labels)}" is not an idx label file: its rank is ${lab.dims.length}, a label file has rank 1`);
  const count = img.dims[0];
  if (lab.dims[0] !== count) throw dataError(Messages.DataCountMismatch, [shown(images), count, shown(labels), lab.dims[0]], labels);
  if (img.type === 0x08) for (let i = 0; i < img.values.length; i++) img.values[i] /= 255;
  const classes = given ?? classCount(lab.values);
  lab.values.forEach((v, i) => {
    if (!Number.isInteger(v) || v < 0) throw dataError(Messages.DataLabelOutOfRange, [v, i, ': class indices are whole numbers from 0'], labels);
    if (v >= classes) throw dataError(Messages.DataLabelOutOfRange, [v, i, ` in 0..${classes - 1}: ${tooFewClasses(classes, classCount(lab.values))}`], labels);
  });
  const features = img.dims.slice(1);
  return {
    name: `idx("${shown(images)}")`,
    count,
    x: img.values,
    featureShape: features.length === 2 ? [...features, 1] : features,
    y: lab.values,
    labels: { kind: 'classes', classes },
  };
}

/** The class count labels imply: the largest class index + 1, and at least 2. */
export function classCount(labels: Float32Array): number {
  let max = 1;
  for (const v of labels) if (Number.isInteger(v) && v > max) max = v;
  return max + 1;
}

/** What to say when `classes:` allows fewer classes than the labels need. */
export const tooFewClasses = (classes: number, needed: number): string =>
  `classes: ${classes} allows ${classes} classes; give classes: ${needed} or more, or leave classes: out and netc counts them from the labels`;

function readIdx(file: string, shown: string): IdxFile {
  let bytes: Uint8Array;
  const kind = notARegularFile(file);
  if (kind) throw dataError(Messages.DataFileUnreadable, [shown, `it is ${kind}, not a file`], file);
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw dataError(Messages.DataFileUnreadable, [shown, (e as Error).message], file);
  }
  return parseIdx(bytes, file, shown);
}

/** An idx file's bytes (plain or gzip) parsed; a DataError about `file` if they are not a whole idx file. */
export function parseIdx(bytes: Uint8Array, file: string, shown: string): IdxFile {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw bad(file, `"${shown}" looks gzipped but cannot be unpacked: ${(e as Error).message}`);
    }
  }
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0) throw bad(file, `"${shown}" is not an idx file (bad magic number)`);
  const type = types[bytes[2]];
  if (!type) throw bad(file, `"${shown}" has an unknown idx value type 0x${bytes[2].toString(16).padStart(2, '0')}`);
  const rank = bytes[3];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = 4 + 4 * rank;
  if (rank === 0 || bytes.length < start) throw bad(file, `"${shown}" has a truncated idx header`);
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i));
  const total = dims.reduce((a, b) => a * b, 1);
  if (bytes.length < start + total * type.size) throw bad(file, `"${shown}" is truncated: its header promises ${total} value(s) (${dims.join('x')}), the file holds ${Math.floor((bytes.length - start) / type.size)}`);
  const values = new Float32Array(total);
  if (type.size === 1 && bytes[2] === 0x08) values.set(bytes.subarray(start, start + total));
  else for (let i = 0; i < total; i++) values[i] = type.read(view, start + i * type.size);
  if (type.size >= 4) refuseNonFinite(values, view, type, start, file, shown);
  return { type: bytes[2], dims, values };
}

/** A float value of an idx file that float32 holds as Infinity or NaN (float64 3.5e38, float32 NaN) is refused. */
function refuseNonFinite(values: Float32Array, view: DataView, type: (typeof types)[number], start: number, file: string, shown: string) {
  const i = values.findIndex((v) => !Number.isFinite(v));
  if (i < 0) return;
  const at = start + i * type.size;
  throw dataError(Messages.DataNotFloat32, [`"${shown}" at byte offset ${at} (value ${i}, counting from 0)`, type.read(view, at)], file);
}

const bad = (file: string, message: string) => dataError(Messages.DataBadFile, [message], file);
