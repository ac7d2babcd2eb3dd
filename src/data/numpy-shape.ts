// npy() and npz() at check time: the shapes they give, learnt from the arrays' headers through the host, and
// the mistakes in them found there (so that they point at the data call in the .net file). The rules are
// numpy.ts's own; a mistake is the DataError loading would throw, with its code.
import type { DataShape, Host, MissingFile } from './source-shape.js';
import { DataError } from './dataset.js';
import { checkRows, classLabels, exampleShape, labelForm, npzWhere, type NpyArray } from './numpy.js';
import { MAX_HEADER_BYTES, npyValues, parseNpyHeader, type NpyHeader, type NpyWhere } from './npy.js';
import { npzArray, npzMembers } from './npz.js';
import { crc32 } from 'node:zlib';

type ShapeResult = DataShape | { error: string; code?: number } | MissingFile | undefined;

// a .npy header is read in a first slice this long: a version 1.0 header fits (10 + at most 65,535 bytes)
const HEADER_BYTES = (1 << 16) + 16;
// label arrays up to this size are read (and counted) at check time, as idx label files are
const LABEL_BYTES = 16 << 20;
// archives up to this size are unpacked at check time; a larger one is checked when it loads
const NPZ_BYTES = 64 << 20;

export function npyShape(x: string, y: string, classes: number | undefined, host: Host | undefined): ShapeResult {
  // a path left out has been reported already
  if (!host || x === undefined || y === undefined) return undefined;
  const xBytes = headerBytes(host, x);
  if (!xBytes) return { missing: `cannot read the npy file "${x}"` };
  const yHead = headerBytes(host, y);
  if (!yHead) return { missing: `cannot read the npy file "${y}"` };
  return caught(() => {
    const xArray = { header: parseNpyHeader(xBytes, where(x)), where: where(x) };
    const yHeader = parseNpyHeader(yHead, where(y));
    // labels of at most LABEL_BYTES are read (and counted) here; a larger file's values are counted when it loads
    const whole = valueBytes(yHeader) < LABEL_BYTES;
    const yBytes = whole ? host.readBytes(y, yHeader.dataStart + valueBytes(yHeader)) : yHead;
    if (!yBytes) return undefined;
    return shapeOf(xArray, { bytes: yBytes, header: yHeader, where: where(y) }, whole, classes);
  });
}

export function npzShape(path: string, x: string, y: string, classes: number | undefined, host: Host | undefined): ShapeResult {
  if (!host || path === undefined || x === undefined || y === undefined) return undefined;
  const bytes = host.readBytes(path, NPZ_BYTES + 1);
  if (!bytes) return { missing: `cannot read the npz file "${path}"` };
  if (bytes.length > NPZ_BYTES) return undefined;
  // unpacking is the slow part (a deflated MNIST-sized archive takes about half a second): the language
  // server checks at every pause in typing, so the answer for the same bytes and arguments is kept
  const key = JSON.stringify([path, x, y, classes ?? null, bytes.length, crc32(bytes)]);
  const known = unpacked.get(key);
  if (known) return known;
  const result = caught(() => {
    const members = npzMembers(bytes, [x, y], { file: path, shown: path });
    const where = (key: string) => ({ archive: { file: path, shown: path }, array: npzWhere(path, path, key) });
    // x's header only; y's values too where they are at most LABEL_BYTES (counted and checked as idx labels are)
    const xArray = npzArray(bytes, members.get(x)!, where(x), () => 0);
    const yArray = npzArray(bytes, members.get(y)!, where(y), (h) => (valueBytes(h) <= LABEL_BYTES ? Infinity : 0));
    return shapeOf(xArray, yArray, valueBytes(yArray.header) <= LABEL_BYTES, classes);
  });
  if (unpacked.size >= 8) unpacked.delete(unpacked.keys().next().value!);
  unpacked.set(key, result);
  return result;
}

/** The last few archives' answers, by their path, arguments and bytes. */
const unpacked = new Map<string, ShapeResult>();

/** The bytes of the values an array's header promises. */
const valueBytes = (h: NpyHeader): number => h.shape.reduce((a, b) => a * b, 1) * h.type.size;

const where = (path: string): NpyWhere => ({ file: path, shown: `"${path}"` });

/** The features and labels x and y give; y's values are checked and counted when `whole` (all of y is here). */
function shapeOf(x: Pick<NpyArray, 'header' | 'where'>, y: NpyArray, whole: boolean, given: number | undefined): DataShape | undefined {
  const features = exampleShape(x);
  const form = labelForm(y, given);
  checkRows(x, y);
  let classes = form.kind === 'onehot' ? form.classes : given;
  if (whole) classes = classLabels(npyValues(y.bytes, y.header, y.where), form, given, y.where).classes;
  return classes === undefined ? undefined : { features, labels: { kind: 'classes', classes } };
}

/** The first bytes of a .npy file, its whole header among them when the file has one. */
function headerBytes(host: Host, path: string): Uint8Array | undefined {
  const bytes = host.readBytes(path, HEADER_BYTES);
  if (!bytes || bytes.length < 12 || bytes[6] === 1) return bytes;
  // versions 2.0 and 3.0 give the header's length as a uint32
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(8, true);
  // a longer header than netc reads is refused by parseNpyHeader from its length alone
  return length + 12 > bytes.length && bytes.length === HEADER_BYTES && length <= MAX_HEADER_BYTES ? host.readBytes(path, length + 12) : bytes;
}

function caught(f: () => DataShape | undefined): ShapeResult {
  try {
    return f();
  } catch (e) {
    if (e instanceof DataError) return { error: e.message, code: e.code };
    throw e;
  }
}
