// A .net file is UTF-8 text. Its first kilobyte is looked at before it is decoded: a NUL byte or bytes
// that are not UTF-8 mean binary data (an image, an archive, a UTF-16 file), which would otherwise lex
// into thousands of errors and put raw bytes on the terminal.

/** How many leading bytes are looked at. */
export const SNIFF_BYTES = 1024;

/** Where a file's binary data starts, and what it is. */
export interface BinaryData {
  offset: number;
  what: string;
}

/** The first sign of binary data in the file's first SNIFF_BYTES bytes, or undefined for UTF-8 text. */
export function findBinaryData(bytes: Uint8Array): BinaryData | undefined {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { offset: 0, what: 'a UTF-16 byte order mark; save the file as UTF-8' };
  }
  for (let i = 0; i < Math.min(bytes.length, SNIFF_BYTES); ) {
    if (bytes[i] === 0) return { offset: i, what: 'a NUL byte' };
    const length = utf8SequenceLength(bytes, i);
    if (!length) return { offset: i, what: 'not UTF-8' };
    i += length;
  }
  return undefined;
}

/** The length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlongs, surrogates or > U+10FFFF), else 0. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i];
  if (b < 0x80) return 1;
  const length = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (!length || i + length > bytes.length) return 0;
  for (let k = 1; k < length; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  if ((b === 0xe0 && second < 0xa0) || (b === 0xed && second >= 0xa0) || (b === 0xf0 && second < 0x90) || (b === 0xf4 && second >= 0x90)) return 0;
  return length;
}
