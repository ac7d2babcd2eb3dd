// The checker's window on the file system: data files are read relative to the .net file's folder.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Host } from '../data/sources.js';
import { notARegularFile } from '../util/regular-file.js';

/** `read`, when given, gathers the paths of the data files read (what `netc compile -o` must not overwrite). */
export function fileHost(netFile: string, read?: Set<string>): Host {
  const base = dirname(resolve(netFile));
  return {
    readBytes(path, maxBytes) {
      // a FIFO would block the checker until something writes to it: it is not read (loading refuses it)
      if (notARegularFile(resolve(base, path))) return undefined;
      try {
        const fd = openSync(resolve(base, path), 'r');
        try {
          // a cap (npz archives are read up to 64 MiB) is no reason to allocate that much for a small file
          const buffer = new Uint8Array(Math.min(maxBytes, fstatSync(fd).size));
          const n = readSync(fd, buffer, 0, buffer.length, 0);
          read?.add(resolve(base, path));
          return buffer.subarray(0, n);
        } finally {
          closeSync(fd);
        }
      } catch {
        return undefined;
      }
    },
  };
}
