// A file a command writes its results to (`netc predict --output FILE`): never one of a run's own files,
// and never an existing file unless --force says to replace it.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { isLockFile, isRunFile } from './out-dir.js';
import { RunError } from './run-dir.js';

/** Throws a RunError when `path` may not be written: a file of `runDir`'s run, a directory, or (without force) any existing file. */
export function checkOutputFile(path: string, runDir: string, force = false): void {
  const name = basename(path);
  if ((isRunFile(name) || isLockFile(name)) && sameDir(dirname(path), runDir)) {
    throw new RunError(`--output ${path} is one of the files of the run ${runDir}; write the predictions to another file`);
  }
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) throw new RunError(`--output ${path} is a directory; give the file to write`);
  if (!force) throw new RunError(`--output ${path} exists; give --force to replace it, or another file`);
}

/** Whether two paths name one directory (through symbolic links too). */
function sameDir(a: string, b: string): boolean {
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));
  return real(a) === real(b);
}
