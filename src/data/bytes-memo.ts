// The language server checks at every pause in typing, and a data call's check may read and parse a file
// of megabytes (unpacking an archive, parsing a csv file's label column): the last few answers are kept,
// each under what was asked and a checksum of the bytes it was computed from, so that an answer for a file
// whose bytes have changed since is never given.
import { crc32 } from 'node:zlib';

/** A memo of the last `size` answers of `compute` for the same `asked` (JSON-able) and the same bytes. */
export function bytesMemo<T>(size = 8): (asked: unknown[], bytes: Uint8Array, compute: () => T) => T {
  const known = new Map<string, T>();
  return (asked, bytes, compute) => {
    const key = JSON.stringify([...asked, bytes.length, crc32(bytes)]);
    if (known.has(key)) return known.get(key)!;
    const answer = compute();
    if (known.size >= size) known.delete(known.keys().next().value!);
    known.set(key, answer);
    return answer;
  };
}
