// The directory `netc train --out DIR` writes a new run into. It must be new or empty: a run written into
// another run's directory would mix with it (an old events.jsonl drew another model's lineage). --force
// replaces a run there, deleting only the files a run consists of; a directory holding anything else is
// refused even then, because netc never deletes what it did not write.
//
// The directory is made one level at a time under the nearest existing ancestor, which is checked first:
// Node's recursive mkdir spins forever where the file system refuses new entries (/proc/x). `netc extract
// --out` makes its folder the same way. A directory a live run holds (its netc.lock, run-lock.ts) is refused,
// --force or not, and a new run takes the lock before it writes anything.
import { accessSync, constants, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { makeDirs as makeDirsOneByOne } from '../util/make-dirs.js';
import { TEMP_SUFFIX } from '../util/write-atomic.js';
import { LOCK_FILE, lockedError, lockHolder, lockRun, type RunLock } from './run-lock.js';

/** A run directory that cannot be written: printed as `netc: <message>`, exit code 1. */
export class OutDirError extends Error {
  override name = 'OutDirError';
}

/** The files of a run (and the temporary names they are written under): all that --force deletes. */
const RUN_FILES = [/^run\.json$/, /^slicing-map\.json$/, /^metrics\.jsonl$/, /^events\.jsonl$/, /^summary\.json$/, /^population\.json$/, /^population-\d+\.bin$/, /^report\.html$/];
export const isRunFile = (name: string): boolean => RUN_FILES.some((p) => p.test(name.replace(TEMP_SUFFIX, '')));
/** The lock (run-lock.ts) and the names it is made and broken under: never part of a run's contents. */
export const isLockFile = (name: string): boolean => name === LOCK_FILE || name.startsWith(`${LOCK_FILE}.`);

/** A checked output directory: what must be deleted (with --force) and whether it must be made. */
export interface OutDir {
  path: string;
  /** run files to delete before the new run is written (with --force) */
  replace: string[];
  exists: boolean;
}

/** Checks that a new run can be written to `path` without touching anything; throws OutDirError. */
export function checkOutDir(path: string, force = false): OutDir {
  if (!existsSync(path)) {
    checkCreatable(path);
    return { path, replace: [], exists: false };
  }
  if (!statSync(path).isDirectory()) throw new OutDirError(`cannot use ${path} as the run directory: ${path} is a file`);
  checkWritable(path, path);
  // a directory a live run is writing is refused, --force or not
  const holder = lockHolder(path);
  if (holder) throw lockedError(path, holder);
  const entries = readdirSync(path, { withFileTypes: true }).filter((e) => !isLockFile(e.name));
  if (entries.length === 0) return { path, replace: [], exists: true };
  const isRun = entries.some((e) => e.name === 'run.json');
  if (!force) {
    throw new OutDirError(
      isRun
        ? `${path} already holds a netc run; continue it with --resume ${path}, or give --force to replace it`
        : `${path} is not empty and is not a netc run directory; give --out a new or empty directory`,
    );
  }
  const foreign = entries.filter((e) => !e.isFile() || !isRunFile(e.name)).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
  if (foreign.length) {
    const shown = foreign.sort().slice(0, 5).join(', ') + (foreign.length > 5 ? `, and ${foreign.length - 5} more` : '');
    throw new OutDirError(`${path} holds files netc did not write (${shown}); --force replaces only a run's own files, so move them away or give another --out`);
  }
  return { path, replace: entries.map((e) => e.name), exists: true };
}

/**
 * Makes the checked directory, takes its lock, checks it again under the lock (another netc may have
 * written there since the first check) and deletes what an old run left (with --force). The caller
 * releases the lock.
 */
export function claimOutDir(dir: OutDir, force = false): RunLock {
  if (!existsSync(dir.path)) makeDirs(dir.path);
  const lock = lockRun(dir.path, 'train');
  try {
    const now = checkOutDir(dir.path, force);
    for (const name of now.replace) rmSync(join(dir.path, name), { force: true });
    return lock;
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** Makes `path` and its missing parents, one level at a time (never a recursive mkdir; see above). */
export function makeDirs(path: string, what = 'the run directory'): void {
  try {
    makeDirsOneByOne(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `the file system of ${dirname(resolve(path))} does not allow new directories` : (e as Error).message;
    throw new OutDirError(`cannot create ${what} ${path}: ${why}`);
  }
}

/**
 * The folder `netc extract --out` writes models into: made as a run directory is (checked first, one level
 * at a time), and never a run directory or a folder inside the run the models come from.
 */
export function makeModelDir(path: string, run: string): void {
  const what = 'the output directory';
  const within = relative(resolve(run), resolve(path));
  if (within === '' || (!within.startsWith('..') && !isAbsolute(within))) throw new OutDirError(`--out ${path} is inside the run ${run}; extract members to a directory outside it`);
  if (!existsSync(path)) {
    checkCreatable(path, what);
    return makeDirs(path, what);
  }
  if (!statSync(path).isDirectory()) throw new OutDirError(`cannot write to ${path}: it is a file`);
  if (existsSync(join(path, 'run.json'))) throw new OutDirError(`${path} is a netc run directory; extract members to a directory of their own`);
  checkWritable(path, path, what);
}

/** The nearest existing ancestor of `path` must be a writable directory. */
function checkCreatable(path: string, what = 'the run directory'): void {
  let at = dirname(resolve(path));
  while (!existsSync(at)) at = dirname(at);
  if (!statSync(at).isDirectory()) throw new OutDirError(`cannot use ${path} as ${what}: ${at} is a file`);
  checkWritable(path, at, what);
}

function checkWritable(path: string, dir: string, what = 'the run directory'): void {
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'is on a read-only file system' : 'is not writable';
    throw new OutDirError(`cannot create ${what} ${path}: ${dir} ${why}`);
  }
}
