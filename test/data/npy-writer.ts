// A small .npy/.npz writer for the tests, byte by byte as numpy.lib.format lays a file out: the magic
// \x93NUMPY, the version, the header length (uint16 LE in 1.0, uint32 LE in 2.0/3.0), a dict literal padded
// with spaces and a newline so that the values start at a multiple of 64, then the values in the dtype's
// byte order. `header` replaces the dict text (broken headers); the zip side is fflate's zipSync.
import { zipSync } from 'fflate';
import { constants, crc32, deflateRawSync } from 'node:zlib';

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

/**
 * A .npy member of `zeros` zero bytes after `header` (an npyBytes file's header), deflated without holding
 * it: one piece of zeros deflated with a full flush is a deflate stream of its own that does not end the
 * whole, so it is repeated, and an empty final block ends them. A zip bomb: ~1,000 bytes of zeros a byte.
 */
export function zeroMember(header: Uint8Array, zeros: number): { packed: Buffer; size: number; crc: number } {
  const piece = 8 << 20;
  const flushed = (b: Buffer) => deflateRawSync(b, { finishFlush: constants.Z_FULL_FLUSH, level: 9 });
  const zeroPiece = Buffer.alloc(piece);
  const parts = [flushed(Buffer.from(header))];
  let crc = crc32(header);
  for (let left = zeros; left > 0; left -= piece) {
    const n = Math.min(piece, left);
    parts.push(n === piece ? (parts[1] ?? flushed(zeroPiece)) : flushed(zeroPiece.subarray(0, n)));
    crc = crc32(zeroPiece.subarray(0, n), crc);
  }
  // an empty final block with fixed codes: BFINAL 1, BTYPE 01, end-of-block 0000000
  parts.push(Buffer.from([0x03, 0x00]));
  return { packed: Buffer.concat(parts), size: header.length + zeros, crc };
}

/** A zip archive of deflated members given packed (zeroMember's), each with its CRC-32 and original size (under 4 GB). */
export function zipOfDeflated(members: Record<string, { packed: Buffer; size: number; crc: number }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, m] of Object.entries(members)) {
    const fileName = Buffer.from(name);
    const fields = (b: Buffer, at: number) => {
      b.writeUInt16LE(20, at); // version needed
      b.writeUInt16LE(0, at + 2); // flags
      b.writeUInt16LE(8, at + 4); // deflated
      b.writeUInt32LE(0, at + 6); // time and date
      b.writeUInt32LE(m.crc >>> 0, at + 10);
      b.writeUInt32LE(m.packed.length, at + 14);
      b.writeUInt32LE(m.size, at + 18);
      b.writeUInt16LE(fileName.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, m.packed);
    centrals.push(central, fileName);
    offset += 30 + fileName.length + m.packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
