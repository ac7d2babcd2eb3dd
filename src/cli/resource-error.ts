// Errors of the machine rather than of netc: a full disk, a read-only or forbidden path, no memory.
// main() prints them as one line with exit code 1; only what is left is "a bug in netc" (exit code 70).

const systemErrors: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOMEM: 'out of memory',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'an input/output error',
  EEXIST: 'a file is in the way',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'it is a directory',
  ENAMETOOLONG: 'the name is too long',
};

// what V8, TF.js's wasm backend (emscripten) and the WebAssembly runtime throw when memory runs out
const outOfMemory = [
  /array buffer allocation failed/i,
  /WebAssembly\.Memory/,
  /cannot enlarge memory/i,
  /\bOOM\b/,
  /out of memory/i,
  /could not allocate memory/i,
  // TF.js's WebAssembly heap at its limit: its allocator's null pointer written through
  /memory access out of bounds/i,
  /invalid typed array length/i,
];

/** The one-line message for a resource error (without `netc: `), or undefined for anything else. */
export function resourceMessage(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const e = error as NodeJS.ErrnoException;
  if (typeof e.code === 'string' && e.code in systemErrors) {
    const what = e.syscall && e.path ? `cannot ${e.syscall} ${e.path}: ` : '';
    return `${what}${systemErrors[e.code]} (${e.code})`;
  }
  const first = (error.message.split('\n')[0] ?? '').trim();
  if (outOfMemory.some((p) => p.test(first))) {
    const cause = first.length > 100 ? `${first.slice(0, 100)}...` : first;
    return `out of memory (${cause}); train fewer members at once (--members, or --resident K) or use a smaller batch`;
  }
  return undefined;
}
