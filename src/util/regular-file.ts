// Reading a path that is not a regular file blocks or never ends: a FIFO waits for a writer, /dev/zero
// has no end. Commands that read a user's file ask first what it is.
import { statSync } from 'node:fs';

/** What `path` is when it exists but is not a regular file ("a FIFO (named pipe)", ...); undefined otherwise. */
export function notARegularFile(path: string): string | undefined {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  if (stat.isFile()) return undefined;
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
