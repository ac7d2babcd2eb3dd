// Every file netc writes goes to a temporary name in the same folder and is renamed into place, so a
// reader (or a run killed mid-write) never sees half a file.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirs } from './make-dirs.js';

export function writeAtomic(path: string, data: string | Uint8Array): void {
  makeDirs(dirname(path));
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
