// Rewriting a user's own file (netc fmt) keeps the file: its inode, so its hard links, mode, owner, ACLs
// and extended attributes stay as they were, and a symbolic link's target is the file rewritten, as gofmt
// and prettier do. gofmt's order is kept: the old contents are copied to a backup beside the file first
// (created exclusively under an unpredictable name, with the file's mode), the file is then written in
// place and cut to its new length, and the backup goes only when that has succeeded. A write that fails
// midway is undone from the backup; one killed midway leaves the backup, which the message names.
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createTemp } from './write-atomic.js';

/** A file that cannot be rewritten: the message says why and where its old contents are, if not in it. */
export class InPlaceError extends Error {
  override name = 'InPlaceError';
}

/** Why `path` (through links, its target) may not be rewritten: read-only by its mode, or by the system; undefined when it may. */
export function notWritable(path: string): string | undefined {
  const mode = statSync(path).mode & 0o7777;
  // by its mode: root may write a file without write permission, but a read-only file is a request to leave it alone
  if ((mode & 0o222) === 0) return `it is read-only (mode ${mode.toString(8).padStart(4, '0')})`;
  try {
    closeSync(openSync(path, 'r+'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'EROFS' ? 'it is on a read-only file system' : code === 'EACCES' || code === 'EPERM' ? 'it is not writable by this user' : (e as Error).message;
  }
  return undefined;
}

/** Replaces the contents of `path` (its target, where it is a symbolic link) with `data`. */
export function writeInPlace(path: string, data: string | Uint8Array): void {
  const target = realpathSync(path);
  const old = readFileSync(target);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const backup = saveBackup(target, old);
  try {
    writeWhole(target, bytes);
  } catch (e) {
    const why = (e as Error).message;
    try {
      writeWhole(target, old);
    } catch {
      throw new InPlaceError(`cannot write '${path}': ${why}; its old contents are kept in ${backup}`);
    }
    rmSync(backup, { force: true });
    throw new InPlaceError(`cannot write '${path}': ${why}; it is left as it was`);
  }
  rmSync(backup, { force: true });
}

/** A copy of `old` beside `target`, with its mode, written to disk; its name. */
function saveBackup(target: string, old: Uint8Array): string {
  let file;
  try {
    file = createTemp(target, statSync(target).mode & 0o777);
  } catch (e) {
    throw new InPlaceError(`cannot write '${target}': no backup of it can be made beside it (${(e as Error).message}); it is left as it was`);
  }
  try {
    writeFileSync(file.fd, old);
    fsyncSync(file.fd);
  } catch (e) {
    closeSync(file.fd);
    rmSync(file.name, { force: true });
    throw new InPlaceError(`cannot write '${target}': its backup could not be written (${(e as Error).message}); it is left as it was`);
  }
  closeSync(file.fd);
  return file.name;
}

/** Writes `bytes` over the file from its start, cuts it to their length, and flushes it to disk. */
function writeWhole(path: string, bytes: Uint8Array): void {
  // a descriptor just opened is at the file's start, where writeFileSync writes (all of bytes, as it loops)
  const fd = openSync(path, 'r+');
  try {
    writeFileSync(fd, bytes);
    ftruncateSync(fd, bytes.length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
