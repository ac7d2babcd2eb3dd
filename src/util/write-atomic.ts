// Every file netc writes goes to a temporary name in the same folder and is renamed into place, so a
// reader (or a run killed mid-write) never sees half a file. The temporary file is created exclusively
// (O_CREAT | O_EXCL: a symbolic link or file planted under its name is never followed or written) under a
// name no one can guess (64 random bits), as mkstemp makes its files.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirs } from './make-dirs.js';

export function writeAtomic(path: string, data: string | Uint8Array): void {
  writeAtomicBy(path, (fd) => writeFileSync(fd, data));
}

/** writeAtomic for a file written piece by piece: `write` writes the whole file to the open descriptor. */
export function writeAtomicBy(path: string, write: (fd: number) => void): void {
  const file = tempFile(path);
  try {
    write(file.fd);
  } catch (e) {
    file.abort();
    throw e;
  }
  file.commit();
}

/**
 * writeAtomicBy with a writer that awaits between its writes (reading each piece as it goes). `check`, if
 * given, reads the written temporary file back before it is renamed into place: what it throws leaves
 * `path` as it was.
 */
export async function writeAtomicByAsync(path: string, write: (fd: number) => Promise<void>, check?: (written: string) => void): Promise<void> {
  const file = tempFile(path);
  try {
    await write(file.fd);
  } catch (e) {
    file.abort();
    throw e;
  }
  file.commit(check);
}

/** A temporary file's name: `path` and `.tmp-` with 16 random hex digits. */
export const TEMP_SUFFIX = /\.tmp-[0-9a-f]{16}$/;

/**
 * A new file beside `path` under an unpredictable name, created exclusively with `mode` (less the umask):
 * its descriptor and its name. A name that exists (planted, or a one in 2^64 draw) is drawn again.
 */
export function createTemp(path: string, mode = 0o666): { fd: number; name: string } {
  for (let tries = 0; ; tries++) {
    const name = `${path}.tmp-${randomBytes(8).toString('hex')}`;
    try {
      return { fd: openSync(name, 'wx', mode), name };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 8) throw e;
    }
  }
}

/** A temporary file beside `path`: commit() closes it and renames it over `path`, abort() closes and removes it. */
function tempFile(path: string): { fd: number; commit(check?: (written: string) => void): void; abort(): void } {
  makeDirs(dirname(path));
  const { fd, name: tmp } = createTemp(path);
  const abort = () => {
    closeSync(fd);
    rmSync(tmp, { force: true });
  };
  return {
    fd,
    abort,
    commit: (check) => {
      try {
        closeSync(fd);
        check?.(tmp);
        renameSync(tmp, path);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e;
      }
    },
  };
}

/**
 * writeAtomic for text made piece by piece: the pieces are written as they come, gathered to about 64 KB
 * a write, so that no one string holds the whole file (a million members' summary would pass V8's limit on
 * a string's length), and each gathered string is small enough to die young (a megabyte's went to the old
 * generation, whose garbage stays until the heap has grown).
 */
export function writeAtomicChunks(path: string, chunks: Iterable<string>): void {
  writeAtomicBy(path, (fd) => {
    let pending: string[] = [];
    let size = 0;
    const flush = () => {
      writeSync(fd, pending.join(''));
      pending = [];
      size = 0;
    };
    for (const chunk of chunks) {
      pending.push(chunk);
      size += chunk.length;
      if (size >= WRITE_CHARS) flush();
    }
    flush();
  });
}

/** writeAtomicChunks' characters a write. */
const WRITE_CHARS = 1 << 16;
