// npy() and npz() at check time: the shapes they give, learnt from the arrays' headers through the host, and
// the mistakes in them found there (so that they point at the data call in the .net file). The rules are
// numpy.ts's own; a mistake is the DataError loading would throw, with its code.
import type { DataShape, Host, MissingFile } from './source-shape.js';
import { DataError } from './dataset.js';
import { checkRows, classLabels, exampleShape, labelForm, npzWhere, type NpyArray } from './numpy.js';
import { npyHead, npyValues, readNpy, valueBytes, type NpyWhere } from './npy.js';
import { npzArray, npzMembers } from './npz.js';
import { bytesMemo } from './bytes-memo.js';

type ShapeResult = DataShape | { error: string; code?: number } | MissingFile | undefined;

// label arrays up to this size are read (and counted) at check time, as idx label files are
const LABEL_BYTES = 16 << 20;
// archives up to this size are unpacked at check time; a larger one is checked when it loads
const NPZ_BYTES = 64 << 20;

export function npyShape(x: string, y: string, classes: number | undefined, host: Host | undefined): ShapeResult {
  // a path left out has been reported already
  if (!host || x === undefined || y === undefined) return undefined;
  const [xRead, yRead] = [(limit: number) => host.readBytes(x, limit), (limit: number) => host.readBytes(y, limit)];
  const xHead = npyHead(xRead);
  if (!xHead) return { missing: `cannot read the npy file "${x}"` };
  const yHead = npyHead(yRead);
  if (!yHead) return { missing: `cannot read the npy file "${y}"` };
  return caught(() => {
    const xArray = readNpy(xHead, xRead, where(x), () => 0);
    // labels of at most LABEL_BYTES are read (and counted) here; a larger file's values are counted when it loads
    const { bytes, header } = readNpy(yHead, yRead, where(y), (h) => (valueBytes(h) < LABEL_BYTES ? Infinity : 0));
    if (!bytes) return undefined;
    return shapeOf(xArray, { bytes, header, where: where(y) }, valueBytes(header) < LABEL_BYTES, classes);
  });
}

export function npzShape(path: string, x: string, y: string, classes: number | undefined, host: Host | undefined): ShapeResult {
  if (!host || path === undefined || x === undefined || y === undefined) return undefined;
  const bytes = host.readBytes(path, NPZ_BYTES + 1);
  if (!bytes) return { missing: `cannot read the npz file "${path}"` };
  if (bytes.length > NPZ_BYTES) return undefined;
  // unpacking is the slow part (a deflated MNIST-sized archive takes about half a second): the language
  // server checks at every pause in typing, so the answer for the same bytes and arguments is kept
  return unpacked([path, x, y, classes ?? null], bytes, () => caught(() => {
    const members = npzMembers(bytes, [x, y], { file: path, shown: path });
    const where = (key: string) => ({ archive: { file: path, shown: path }, array: npzWhere(path, path, key) });
    // x's header only; y's values too where they are at most LABEL_BYTES (counted and checked as idx labels are)
    const xArray = npzArray(bytes, members.get(x)!, where(x), () => 0);
    const yArray = npzArray(bytes, members.get(y)!, where(y), (h) => (valueBytes(h) <= LABEL_BYTES ? Infinity : 0));
    return shapeOf(xArray, yArray, valueBytes(yArray.header) <= LABEL_BYTES, classes);
  }));
}

/** The last few archives' answers, by their path, arguments and bytes. */
const unpacked = bytesMemo<ShapeResult>();

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

function caught(f: () => DataShape | undefined): ShapeResult {
  try {
    return f();
  } catch (e) {
    if (e instanceof DataError) return { error: e.message, code: e.code };
    throw e;
  }
}
