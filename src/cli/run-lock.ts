// One writer per run directory. Every command that writes a run (train, a resume, import, report) holds
// `netc.lock` in it while it does: a file naming the holder's PID (and, on Linux, the process's start time,
// so that a PID reused after a crash is not taken for the holder). It is made whole under another name and
// hard-linked into place, which fails when a lock is there: two writers can never both hold it. It goes when
// the holder releases it or exits; one left by a process killed with -9 names a PID that is gone, and the
// next writer takes it over. It also names the directory it was taken in: one copied along with a run's
// files (a backup, a snapshot of a live run) does not hold the copy.
import { closeSync, existsSync, linkSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunError } from './run-dir.js';
import { createTemp } from '../util/write-atomic.js';

export const LOCK_FILE = 'netc.lock';

interface LockContent {
  pid: number;
  /** the holder's start time in clock ticks since boot (/proc/PID/stat), where known */
  start?: number;
  command: string;
  /** the directory's real path when the lock was taken (absent in locks written before it was recorded) */
  dir?: string;
}

/** A held lock: `release()` gives it back (and is safe to call twice). */
export interface RunLock {
  dir: string;
  release(): void;
}

const held = new Map<string, string>();

/**
 * Takes the lock of run directory `dir` for `command` (`train`, `import`, ...); a RunError naming the holder
 * when a live process holds it.
 */
export function lockRun(dir: string, command: string): RunLock {
  if (!existsSync(dir)) throw new RunError(`there is no run directory '${dir}'`);
  const path = join(dir, LOCK_FILE);
  const mine = JSON.stringify({ pid: process.pid, start: startTime(process.pid), command, dir: realpathSync(dir) } satisfies LockContent) + '\n';
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryLink(path, mine)) return heldLock(dir, path, mine);
    const holder = readLock(path);
    if (holder && holds(holder, dir)) throw lockedError(dir, holder);
    breakStale(path, holder);
  }
  const holder = readLock(path);
  throw holder ? lockedError(dir, holder) : new RunError(`cannot take the lock ${path}: another netc process keeps replacing it`);
}

/** Runs `body` holding the lock of `dir`; the lock goes when it ends, however it ends. */
export async function withRunLock<T>(dir: string, command: string, body: () => Promise<T> | T): Promise<T> {
  const lock = lockRun(dir, command);
  try {
    return await body();
  } finally {
    lock.release();
  }
}

/** The live process holding `dir`'s lock, or undefined (no lock, or a stale one). */
export function lockHolder(dir: string): LockContent | undefined {
  const holder = readLock(join(dir, LOCK_FILE));
  return holder && holds(holder, dir) && !held.has(join(dir, LOCK_FILE)) ? holder : undefined;
}

/** Whether a lock found in `dir` holds it: its process is alive, and it was taken in this directory, not copied here. */
function holds(holder: LockContent, dir: string): boolean {
  if (!isAlive(holder)) return false;
  if (holder.dir === undefined) return true;
  try {
    return realpathSync(dir) === holder.dir;
  } catch {
    return true;
  }
}

/** The refusal of a second writer: one line, with the holder's PID. */
export function lockedError(dir: string, holder: LockContent): RunError {
  return new RunError(`${dir} is in use by another netc process (netc ${holder.command}, PID ${holder.pid}); wait for it to finish or stop it, then try again`);
}

function heldLock(dir: string, path: string, mine: string): RunLock {
  held.set(path, mine);
  const release = () => {
    process.off('exit', release);
    if (held.get(path) !== mine) return;
    held.delete(path);
    // only our own lock: one that another process took over after us is theirs
    if (readText(path) === mine) rmSync(path, { force: true });
  };
  // a process.exit() (Ctrl-C twice) skips finally blocks, not 'exit' listeners
  process.on('exit', release);
  return { dir, release };
}

/** Writes `content` under a temporary name and links it to `path`: false where a lock is there already. */
function tryLink(path: string, content: string): boolean {
  const { fd, name: tmp } = createTemp(path);
  try {
    try {
      writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Moves a stale lock aside and deletes it. Another process may have broken it and taken the lock in the
 * meantime: a lock moved aside that is not the stale one seen is put back.
 */
function breakStale(path: string, seen: LockContent | undefined): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const moved = readLock(aside);
  if (moved && JSON.stringify(moved) !== JSON.stringify(seen) && isAlive(moved)) {
    try {
      linkSync(aside, path);
    } catch {
      // a third process took the lock meanwhile; the one moved aside lost it either way
    }
  }
  rmSync(aside, { force: true });
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The lock's content; undefined when there is none or it is not a lock netc wrote (then it is stale). */
function readLock(path: string): LockContent | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    const lock = JSON.parse(text) as LockContent;
    return Number.isInteger(lock.pid) && lock.pid > 0 ? { ...lock, command: String(lock.command ?? 'train') } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `lock` still runs: its PID exists, with the same start time where known. */
function isAlive(lock: LockContent): boolean {
  try {
    process.kill(lock.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTime(lock.pid);
  return lock.start === undefined || now === undefined || now === lock.start;
}

/** A process's start time from /proc/PID/stat (field 22), where there is one. */
function startTime(pid: number): number | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // the command name (field 2) is in parentheses and may hold spaces: count from after it
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : undefined;
}
