// The .npy format (numpy.lib.format), read from bytes: the magic \x93NUMPY, a version byte pair (1.0, 2.0
// or 3.0), the header's length (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), the header, a Python
// dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } (latin-1; UTF-8 in 3.0),
// then the values. Every mistake is a DataError with its own code, naming the array as the .net file does.
import { Messages, type MessageDef } from '../diagnostics/messages.js';
import { dataError } from './dataset.js';
import { parsePythonLiteral, type PyValue } from './python-literal.js';
import { clip, quoteShort } from '../util/quote.js';

/** Which array an error is about: `file` is the path to report, `shown` how the .net file names the array. */
export interface NpyWhere {
  file: string;
  /** `"x.npy"`, or `"d.npz" array "x_train"` (quotes included) */
  shown: string;
}

export interface NpyType {
  /** b bool, i signed integer, u unsigned integer, f float */
  kind: 'b' | 'i' | 'u' | 'f';
  size: number;
  littleEndian: boolean;
}

export interface NpyHeader {
  /** the dtype as the file writes it: '<f4', '|u1' */
  descr: string;
  type: NpyType;
  shape: number[];
  /** the byte offset of the first value */
  dataStart: number;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/**
 * The longest header netc reads: versions 2.0 and 3.0 allow 4 GB (NumPy's np.load refuses more than 10,000
 * bytes unless told otherwise); the checker reads a header whole, so a longer one is refused by its length.
 */
export const MAX_HEADER_BYTES = 64 << 20;

// a .npy header is read in a first slice this long: a version 1.0 header fits (10 + at most 65,535 bytes)
const HEADER_BYTES = (1 << 16) + 16;

/** The bytes of the values a header promises. */
export const valueBytes = (h: NpyHeader): number => h.shape.reduce((a, b) => a * b, 1) * h.type.size;

/**
 * The first bytes of a .npy file, its whole header among them when it has one, through `read(limit)` (at
 * most the first `limit` bytes of the file or archive member; undefined where the file cannot be read).
 */
export function npyHead<B extends Uint8Array | undefined>(read: (limit: number) => B): B {
  const head = read(HEADER_BYTES);
  if (!head || head.length < HEADER_BYTES || head[6] < 2) return head;
  // versions 2.0 and 3.0 give the header's length as a uint32
  const length = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(8, true);
  // a longer header than netc reads is refused by parseNpyHeader from its length alone
  return length + 12 > head.length && length <= MAX_HEADER_BYTES ? read(length + 12) : head;
}

/**
 * A .npy array from `head` (npyHead's bytes) and `read`: its header and at most `values(header)` bytes of
 * the values after it (never more than the header promises), read again only where `head` does not hold
 * them. A header that is no .npy header is the DataError parseNpyHeader throws.
 */
export function readNpy<B extends Uint8Array | undefined>(
  head: Uint8Array,
  read: (limit: number) => B,
  where: NpyWhere,
  values: (header: NpyHeader) => number = () => Infinity,
): { bytes: Uint8Array | B; header: NpyHeader; where: NpyWhere } {
  const header = parseNpyHeader(head, where);
  const want = header.dataStart + Math.min(valueBytes(header), values(header));
  return { bytes: want <= head.length ? head.subarray(0, want) : read(want), header, where };
}

/** The header of a .npy file's bytes (the whole file, or at least its header). */
export function parseNpyHeader(bytes: Uint8Array, where: NpyWhere): NpyHeader {
  const fail = (def: MessageDef, ...args: (string | number)[]) => dataError(def, [where.shown, ...args], where.file);
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) throw fail(Messages.NpyBadMagic, notNpy(bytes));
  const [major, minor] = [bytes[6], bytes[7]];
  if (major < 1 || major > 3 || minor !== 0) throw fail(Messages.NpyBadHeader, `format version ${major}.${minor}; netc reads versions 1.0, 2.0 and 3.0`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // the header's length, at byte 8: a uint16 in version 1.0, a uint32 in 2.0 and 3.0
  const start = major === 1 ? 10 : 12;
  if (bytes.length < start) throw fail(Messages.NpyTruncated, 'the file ends inside its header');
  const length = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (length > MAX_HEADER_BYTES) throw fail(Messages.NpyBadHeader, `its header is ${length} bytes long, more than the ${MAX_HEADER_BYTES} bytes netc reads`);
  if (bytes.length < start + length) throw fail(Messages.NpyTruncated, `its header is ${length} bytes long, the file ends after ${bytes.length - start} of them`);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(start, start + length));
  const dict = headerDict(text, (why) => fail(Messages.NpyBadHeader, why));
  const shape = shapeOf(dict.shape, (why) => fail(Messages.NpyBadHeader, why));
  const type = dtypeOf(dict.descr, where);
  if (dict.fortran_order !== false && dict.fortran_order !== true) throw fail(Messages.NpyBadHeader, "its 'fortran_order' is not True or False");
  // a Fortran-order array with at most one axis longer than 1 holds its values in C order too
  if (dict.fortran_order && shape.filter((d) => d > 1).length > 1) throw fail(Messages.NpyFortranOrder);
  return { descr: dict.descr as string, type, shape, dataStart: start + length };
}

/** Why bytes that do not begin with \x93NUMPY are no .npy file, with what they look like when that is known. */
function notNpy(bytes: Uint8Array): string {
  const starts = (...b: number[]) => b.every((v, i) => bytes[i] === v);
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'it is a zip archive (an .npz file?); read it with npz("file.npz", x: "...", y: "...")';
  if (starts(0x1f, 0x8b)) return 'it is gzip-compressed; unpack it (gunzip) first';
  if (bytes.length < 10) return `it is ${bytes.length} byte(s) long, shorter than a .npy header`;
  return 'it does not begin with the magic string \\x93NUMPY';
}

function headerDict(text: string, fail: (why: string) => Error): Record<string, PyValue> {
  let value: PyValue;
  try {
    value = parsePythonLiteral(text);
  } catch (e) {
    throw fail(`${(e as Error).message} in ${quoteShort(text.trim())}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail(`it is not a dict: ${quoteShort(text.trim())}`);
  for (const key of ['descr', 'fortran_order', 'shape']) if (!(key in value)) throw fail(`it has no '${key}'`);
  return value;
}

function shapeOf(shape: PyValue, fail: (why: string) => Error): number[] {
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === 'number' && Number.isSafeInteger(d) && d >= 0)) {
    throw fail(`its 'shape' is not a tuple of whole numbers: ${clip(JSON.stringify(shape))}`);
  }
  return shape as number[];
}

const readable = 'bool, int8 to int64, uint8 to uint64, float32 and float64';
const sizes: Record<NpyType['kind'], number[]> = { b: [1], i: [1, 2, 4, 8], u: [1, 2, 4, 8], f: [4, 8] };
const typeNames: Record<string, string> = { f2: 'float16', c8: 'complex64', c16: 'complex128', O: 'object', M: 'datetime64', m: 'timedelta64', U: 'a unicode string', S: 'a byte string', V: 'raw bytes (void)' };

/** The dtype a descr names, or a DataError saying why netc does not read it. */
function dtypeOf(descr: PyValue, where: NpyWhere): NpyType {
  const refuse = (shown: string, advice = `; it reads ${readable}: convert it with array.astype(np.float32)`) =>
    dataError(Messages.NpyUnsupportedDtype, [where.shown, shown, advice], where.file);
  if (Array.isArray(descr)) throw refuse('a structured dtype (with fields)', `; it reads one plain number type per array (${readable}): save each field as an array of its own`);
  if (typeof descr !== 'string') throw refuse(clip(JSON.stringify(descr)));
  const m = /^([<>|=])([a-zA-Z])(\d*)/.exec(descr);
  const [, order, kind, size] = m ?? [];
  const known = m && m[0] === descr && kind in sizes && sizes[kind as NpyType['kind']].includes(Number(size));
  const name = typeNames[`${kind}${size}`] ?? typeNames[kind ?? ''];
  if (!known) throw refuse(`'${clip(descr)}'${name ? ` (${name})` : ''}`);
  if (order === '=' && Number(size) > 1) throw refuse(`'${clip(descr)}'`, '; its byte order is the writing machine\'s ("="), which the file does not record: save it with an explicit byte order (\'<\' or \'>\')');
  return { kind: kind as NpyType['kind'], size: Number(size), littleEndian: order !== '>' };
}

/** The values of a .npy file whose header is `header`, as float32: a DataError if the file is cut short or a float is not a finite float32. */
export function npyValues(bytes: Uint8Array, header: NpyHeader, where: NpyWhere): Float32Array {
  const { type, shape, dataStart } = header;
  const count = shape.reduce((a, b) => a * b, 1);
  const need = valueBytes(header);
  const have = bytes.length - dataStart;
  if (have < need) {
    throw dataError(Messages.NpyTruncated, [where.shown, `its header promises ${count} value(s) of shape ${tuple(shape)}, ${need} bytes of ${header.descr}, and the file holds ${have} bytes after the header`], where.file);
  }
  const data = bytes.subarray(dataStart, dataStart + need);
  const values = convert(data, type, count);
  if (type.kind === 'f') refuseNonFinite(values, data, type, dataStart, where);
  if ((type.kind === 'i' || type.kind === 'u') && type.size >= 4) refuseInexact(values, data, header, where);
  return values;
}

// float32 holds every whole number up to 2^24 exactly; a value that converts to one this large may have been rounded
const EXACT_INTEGERS = 2 ** 24;

/** An integer that float32 rounds (an int64 token id of 2^24 + 1) is refused, by its row: a token id must stay the id it is. */
function refuseInexact(values: Float32Array, data: Uint8Array, header: NpyHeader, where: NpyWhere): void {
  const { type, shape } = header;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const le = type.littleEndian;
  const exact = (i: number): bigint => {
    const at = i * type.size;
    if (type.size === 8) return type.kind === 'i' ? view.getBigInt64(at, le) : view.getBigUint64(at, le);
    return BigInt(type.kind === 'i' ? view.getInt32(at, le) : view.getUint32(at, le));
  };
  for (let i = 0; i < values.length; i++) {
    if (Math.abs(values[i]) < EXACT_INTEGERS) continue;
    const raw = exact(i);
    if (raw === BigInt(values[i])) continue;
    const width = shape.slice(1).reduce((a, b) => a * b, 1);
    throw dataError(Messages.NpyInexactInteger, [where.shown, Math.floor(i / width), `${raw} (${header.descr})`], where.file);
  }
}

/** `(3, 4)`, as NumPy writes a shape. */
export const tuple = (shape: number[]): string => `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;

// the typed arrays that read each dtype in this machine's byte order
const arrays = { i2: Int16Array, i4: Int32Array, i8: BigInt64Array, u2: Uint16Array, u4: Uint32Array, u8: BigUint64Array, f4: Float32Array, f8: Float64Array };
const hostLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function convert(data: Uint8Array, type: NpyType, count: number): Float32Array {
  if (type.size === 1) return new Float32Array(type.kind === 'i' ? new Int8Array(data.buffer, data.byteOffset, count) : data);
  if (type.littleEndian === hostLittleEndian) {
    // a typed array starts at a multiple of its element size; a Buffer's bytes may lie anywhere in a shared pool
    const aligned = data.byteOffset % type.size === 0 ? data : new Uint8Array(data);
    const typed = new arrays[`${type.kind}${type.size}` as keyof typeof arrays](aligned.buffer as ArrayBuffer, aligned.byteOffset, count);
    if (!(typed instanceof BigInt64Array || typed instanceof BigUint64Array)) return new Float32Array(typed);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = Number(typed[i]);
    return out;
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const read = reader(type);
  const out = new Float32Array(count);
  for (let i = 0, at = 0; i < count; i++, at += type.size) out[i] = read(view, at, type.littleEndian);
  return out;
}

type Read = (v: DataView, at: number, le: boolean) => number;

function reader(type: NpyType): Read {
  const readers: Record<string, Read> = {
    f4: (v, at, le) => v.getFloat32(at, le),
    f8: (v, at, le) => v.getFloat64(at, le),
    i2: (v, at, le) => v.getInt16(at, le),
    i4: (v, at, le) => v.getInt32(at, le),
    i8: (v, at, le) => Number(v.getBigInt64(at, le)),
    u2: (v, at, le) => v.getUint16(at, le),
    u4: (v, at, le) => v.getUint32(at, le),
    u8: (v, at, le) => Number(v.getBigUint64(at, le)),
  };
  return readers[`${type.kind}${type.size}`];
}

/** A float that float32 holds as Infinity or NaN (float64 3.5e38, a float32 NaN) is refused, by its byte offset. */
function refuseNonFinite(values: Float32Array, data: Uint8Array, type: NpyType, dataStart: number, where: NpyWhere): void {
  let i = 0;
  while (i < values.length && Number.isFinite(values[i])) i++;
  if (i === values.length) return;
  const raw = reader(type)(new DataView(data.buffer, data.byteOffset, data.byteLength), i * type.size, type.littleEndian);
  throw dataError(Messages.DataNotFloat32, [`${where.shown} at byte offset ${dataStart + i * type.size} (value ${i}, counting from 0)`, raw], where.file);
}
