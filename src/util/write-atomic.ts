// Every file netc writes goes to a temporary name in the same folder and is renamed into place, so a
// reader (or a run killed mid-write) never sees half a file.
import { closeSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirs } from './make-dirs.js';

export function writeAtomic(path: string, data: string | Uint8Array): void {
  writeAtomicBy(path, (fd) => writeFileSync(fd, data));
}

/** writeAtomic for a file written piece by piece: `write` writes the whole file to the open descriptor. */
export function writeAtomicBy(path: string, write: (fd: number) => void): void {
  makeDirs(dirname(path));
  const tmp = `${path}.tmp-${process.pid}`;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w');
    write(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * writeAtomic for text made piece by piece: the pieces are written as they come, gathered to about a
 * megabyte a write, so that no one string holds the whole file (a million members' summary would pass
 * V8's limit on a string's length).
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
      if (size >= 1 << 20) flush();
    }
    flush();
  });
}
