// Files a command writes its results to: `netc predict --output FILE` and the files `netc extract --out DIR`
// writes. Never one of a run's own files, never a directory, and never an existing file unless --force says
// to replace it (as cp -i and rsync --ignore-existing leave a file be): what a user made is not lost.
import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { isLockFile, isRunFile } from './out-dir.js';
import { RunError } from './run-dir.js';
import { andList } from '../util/plural.js';

/** Throws a RunError when `path` may not be written: a file of `runDir`'s run, a directory, or (without force) any existing file. */
export function checkOutputFile(path: string, runDir: string, force = false): void {
  const name = basename(path);
  if ((isRunFile(name) || isLockFile(name)) && sameDir(dirname(path), runDir)) {
    throw new RunError(`--output ${path} is one of the files of the run ${runDir}; write the predictions to another file`);
  }
  checkNewFiles([path], force, (there) => `--output ${there[0]} exists; give --force to replace it, or another file`, (dir) => `--output ${dir} is a directory; give the file to write`);
}

/**
 * Throws a RunError when writing `paths` would replace a directory (ever) or an existing file (without
 * `force`): `exists` words the refusal for the files there, `isDir` for a directory. A symbolic link, even
 * one to nothing, counts as there: writing would replace it.
 */
export function checkNewFiles(paths: string[], force: boolean, exists: (there: string[]) => string, isDir: (path: string) => string): void {
  const dir = paths.find((p) => existsSync(p) && statSync(p).isDirectory());
  if (dir !== undefined) throw new RunError(isDir(dir));
  const there = paths.filter(isThere);
  if (there.length && !force) throw new RunError(exists(there));
}

/** The files of `there` as a short list, relative to `dir`: `a, b and c`, or the first five and how many more. */
export function fileList(there: string[], dir: string): string {
  const names = there.map((p) => relative(dir, p));
  if (names.length > 5) return `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
  return andList(names);
}

const isThere = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Whether two paths name one directory (through symbolic links too). */
function sameDir(a: string, b: string): boolean {
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));
  return real(a) === real(b);
}
