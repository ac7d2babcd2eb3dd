// The .npz format: a zip archive of .npy files, one per array, each named KEY.npy (np.savez stores them,
// np.savez_compressed deflates them). The archive's central directory, at its end, names each member, how
// it is packed and where its bytes start (zip64 records included: np.savez always writes them). A member is
// inflated only as far as it is needed, in pieces, never to the size the archive claims: its .npy header,
// then at most the values that header promises (fewer at check time). A small archive that inflates to
// gigabytes (a zip bomb) costs what its header and the values asked for cost, no more.
import { Inflate } from 'fflate';
import { Messages } from '../diagnostics/messages.js';
import { dataError } from './dataset.js';
import { npyHead, readNpy, type NpyHeader, type NpyWhere } from './npy.js';
import { clip } from '../util/quote.js';

/** How the archive is named in messages: `file` the path to report, `shown` how the .net file writes it. */
export interface NpzWhere {
  file: string;
  shown: string;
}

/** A member of the archive as its central directory describes it. */
export interface NpzMember {
  name: string;
  /** 0 stored, 8 deflated */
  method: number;
  /** its packed bytes in the archive */
  start: number;
  packed: number;
}

/** The members holding the arrays `keys` (x_train: the member x_train.npy, or one named exactly x_train). */
export function npzMembers(bytes: Uint8Array, keys: string[], where: NpzWhere): Map<string, NpzMember> {
  const members = centralDirectory(bytes, where);
  const found = new Map<string, NpzMember>();
  for (const key of keys) {
    const member = members.find((m) => m.name === `${key}.npy`) ?? members.find((m) => m.name === key);
    if (!member) throw dataError(Messages.NpzMissingKey, [`"${where.shown}"`, clip(key), keysOf(members.map((m) => m.name))], where.file);
    found.set(key, member);
  }
  return found;
}

/**
 * A member's .npy bytes: its header and at most `values(header)` bytes of the values after it (never more
 * than the header promises). A header that is no .npy header is the DataError parseNpyHeader throws.
 */
export function npzArray(
  bytes: Uint8Array,
  member: NpzMember,
  where: { archive: NpzWhere; array: NpyWhere },
  values: (header: NpyHeader) => number = () => Infinity,
): { bytes: Uint8Array; header: NpyHeader; where: NpyWhere } {
  const read = (limit: number) => inflated(bytes, member, limit, where.archive);
  return readNpy(npyHead(read), read, where.array, values);
}

/** The arrays an archive holds as np.load names them: its members without .npy. */
function keysOf(names: string[]): string {
  if (names.length === 0) return 'none (the archive is empty)';
  return clip(names.map((n) => n.replace(/\.npy$/, '')).join(', '), 200);
}

const u16 = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 2 ** 24;
const u64 = (b: Uint8Array, at: number) => u32(b, at) + u32(b, at + 4) * 2 ** 32;

/** The archive's members, from its central directory; a DataError where it has none or it is damaged. */
function centralDirectory(bytes: Uint8Array, where: NpzWhere): NpzMember[] {
  const bad = (why: string) => dataError(Messages.NpzBadArchive, [`"${where.shown}"`, archiveProblem(bytes, why)], where.file);
  // the end record: its signature within the last 22 + 65,535 bytes (a comment may follow it)
  let end = bytes.length - 22;
  while (end >= 0 && bytes.length - end <= 22 + 0xffff && u32(bytes, end) !== 0x06054b50) end--;
  if (end < 0 || bytes.length - end > 22 + 0xffff) throw bad('no zip directory');
  let count = u16(bytes, end + 10);
  let at = u32(bytes, end + 16);
  // zip64: a locator just before the end record points to the zip64 end record, which has the real count and offset
  if (end >= 20 && u32(bytes, end - 20) === 0x07064b50) {
    const z = u64(bytes, end - 12);
    if (z + 56 <= bytes.length && u32(bytes, z) === 0x06064b50) [count, at] = [u64(bytes, z + 32), u64(bytes, z + 48)];
  }
  const members: NpzMember[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || u32(bytes, at) !== 0x02014b50) throw bad('its zip directory is damaged');
    const [nameLength, extraLength] = [u16(bytes, at + 28), u16(bytes, at + 30)];
    const name = new TextDecoder(u16(bytes, at + 8) & 0x800 ? 'utf-8' : 'latin1').decode(bytes.subarray(at + 46, at + 46 + nameLength));
    const sizes = zip64Sizes(bytes, at + 46 + nameLength, extraLength, [u32(bytes, at + 24), u32(bytes, at + 20), u32(bytes, at + 42)]);
    const [packed, local] = [sizes[1], sizes[2]];
    if (local + 30 > bytes.length || u32(bytes, local) !== 0x04034b50) throw bad(`its member ${clip(name)} is damaged`);
    const start = local + 30 + u16(bytes, local + 26) + u16(bytes, local + 28);
    if (start + packed > bytes.length) throw bad(`its member ${clip(name)} runs past the end of the file (it is cut short)`);
    members.push({ name, method: u16(bytes, at + 10), start, packed });
    at += 46 + nameLength + extraLength + u16(bytes, at + 32);
  }
  return members;
}

/**
 * The original size, packed size and local header offset of a directory entry: those written as 0xFFFFFFFF
 * are in its zip64 extra field (id 1), in that order.
 */
function zip64Sizes(bytes: Uint8Array, extra: number, length: number, sizes: number[]): number[] {
  const wide = sizes.map((s) => s === 0xffffffff);
  if (!wide.some(Boolean)) return sizes;
  for (let at = extra; at + 4 <= extra + length; at += 4 + u16(bytes, at + 2)) {
    if (u16(bytes, at) !== 1) continue;
    let field = at + 4;
    return sizes.map((s, i) => (wide[i] ? u64(bytes, (field += 8) - 8) : s));
  }
  return sizes;
}

/** At most the first `limit` bytes of a member, inflated in pieces, so that no more than about `limit` is ever held. */
function inflated(bytes: Uint8Array, member: NpzMember, limit: number, where: NpzWhere): Uint8Array {
  const packed = bytes.subarray(member.start, member.start + member.packed);
  if (member.method === 0) return packed.subarray(0, limit);
  const bad = (why: string) => dataError(Messages.NpzBadArchive, [`"${where.shown}"`, `its member ${clip(member.name)} ${why}`], where.file);
  if (member.method !== 8) throw bad(`is packed with zip method ${member.method}; netc reads stored and deflated members (np.savez, np.savez_compressed)`);
  let out = new Uint8Array(Math.min(limit, 1 << 16));
  let have = 0;
  const inflate = new Inflate((chunk) => {
    const take = Math.min(chunk.length, limit - have);
    if (have + take > out.length) {
      const grown = new Uint8Array(Math.min(limit, Math.max(2 * out.length, have + take)));
      grown.set(out.subarray(0, have));
      out = grown;
    }
    out.set(chunk.subarray(0, take), have);
    have += take;
  });
  try {
    // deflate inflates a byte to at most 1,032: a piece of (limit - have) / 1,024 bytes overshoots little
    for (let at = 0; at < packed.length && have < limit; ) {
      const piece = Math.max(1 << 10, Math.min(1 << 20, Math.floor((limit - have) / 1024)));
      inflate.push(packed.subarray(at, at + piece), at + piece >= packed.length);
      at += piece;
    }
  } catch (e) {
    throw bad(`cannot be inflated (${(e as Error).message})`);
  }
  return out.subarray(0, have);
}

function archiveProblem(bytes: Uint8Array, why: string): string {
  if (bytes.length === 0) return 'the file is empty';
  if (bytes[0] === 0x93 && bytes[1] === 0x4e) return 'it is a single .npy file; read it with npy(x: "...", y: "...")';
  if (!(bytes[0] === 0x50 && bytes[1] === 0x4b)) return 'it is not a zip archive';
  if (why === 'no zip directory') return 'it has no zip directory at its end (it is cut short, or not a zip archive)';
  return why;
}
