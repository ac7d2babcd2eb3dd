// Making a directory and its missing parents one level at a time, never with a recursive mkdir: Node's
// recursive mkdir spins forever where the file system refuses new entries (/proc/x).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `path` and its missing parents; throws the failing mkdir's error (ENOENT where the file system allows no new entry). */
export function makeDirs(path: string): void {
  const missing: string[] = [];
  let at = resolve(path);
  while (!existsSync(at)) {
    missing.unshift(at);
    at = dirname(at);
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw e;
    }
  }
}
