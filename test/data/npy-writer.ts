// A small .npy/.npz writer for the tests, byte by byte as numpy.lib.format lays a file out: the magic
// \x93NUMPY, the version, the header length (uint16 LE in 1.0, uint32 LE in 2.0/3.0), a dict literal padded
// with spaces and a newline so that the values start at a multiple of 64, then the values in the dtype's
// byte order. `header` replaces the dict text (broken headers); the zip side is fflate's zipSync.
import { zipSync } from 'fflate';

export interface NpyOptions {
  version?: 1 | 2 | 3;
  fortran?: boolean;
  /** the header's text instead of the dict built from descr, fortran and shape */
  header?: string;
}

export function npyHeader(descr: string, shape: number[], fortran = false): string {
  const tuple = `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
  return `{'descr': '${descr}', 'fortran_order': ${fortran ? 'True' : 'False'}, 'shape': ${tuple}, }`;
}

/** A .npy file of `values` (in the order they lie in the file) as `descr` says: '<f4', '>f8', '|u1', '<i8', '|b1'. */
export function npyBytes(descr: string, shape: number[], values: ArrayLike<number>, options: NpyOptions = {}): Buffer {
  const version = options.version ?? 1;
  const prefix = version === 1 ? 10 : 12;
  let text = options.header ?? npyHeader(descr, shape, options.fortran);
  text += ' '.repeat((64 - ((prefix + text.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.from(text, version === 3 ? 'utf8' : 'latin1');
  const data = encode(descr, values);
  const out = Buffer.alloc(prefix + head.length + data.length);
  out.set([0x93, ...Buffer.from('NUMPY'), version, 0]);
  if (version === 1) out.writeUInt16LE(head.length, 8);
  else out.writeUInt32LE(head.length, 8);
  out.set(head, prefix);
  out.set(data, prefix + head.length);
  return out;
}

function encode(descr: string, values: ArrayLike<number>): Buffer {
  const m = /^([<>|])([biuf])(\d)$/.exec(descr);
  if (!m) return Buffer.alloc(0); // an unreadable dtype: its values do not matter
  const [, order, kind, sizeText] = m;
  const size = Number(sizeText);
  const le = order !== '>';
  const view = new DataView(new ArrayBuffer(size * values.length));
  const write: Record<string, (at: number, v: number) => void> = {
    b1: (at, v) => view.setUint8(at, v),
    u1: (at, v) => view.setUint8(at, v),
    i1: (at, v) => view.setInt8(at, v),
    u2: (at, v) => view.setUint16(at, v, le),
    i2: (at, v) => view.setInt16(at, v, le),
    u4: (at, v) => view.setUint32(at, v, le),
    i4: (at, v) => view.setInt32(at, v, le),
    u8: (at, v) => view.setBigUint64(at, BigInt(v), le),
    i8: (at, v) => view.setBigInt64(at, BigInt(v), le),
    f4: (at, v) => view.setFloat32(at, v, le),
    f8: (at, v) => view.setFloat64(at, v, le),
  };
  for (let i = 0; i < values.length; i++) write[`${kind}${size}`](i * size, values[i]);
  return Buffer.from(view.buffer);
}

/** An .npz archive: each array as KEY.npy, stored (as np.savez does) or deflated (np.savez_compressed). */
export function npzBytes(arrays: Record<string, Uint8Array>, compressed = false): Buffer {
  const members = Object.fromEntries(Object.entries(arrays).map(([key, bytes]) => [`${key}.npy`, [bytes, { level: compressed ? 6 : 0 }] as const]));
  return Buffer.from(zipSync(members as Parameters<typeof zipSync>[0]));
}
