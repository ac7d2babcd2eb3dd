// The .npz format: a zip archive of .npy files, one per array, each named KEY.npy (np.savez stores them,
// np.savez_compressed deflates them). fflate reads the archive; only the members asked for are unpacked.
import { unzipSync } from 'fflate';
import { Messages } from '../diagnostics/messages.js';
import { dataError } from './dataset.js';

/** How the archive is named in messages: `file` the path to report, `shown` how the .net file writes it. */
export interface NpzWhere {
  file: string;
  shown: string;
}

/** The .npy bytes of the arrays `keys` (x_train: the member x_train.npy, or one named exactly x_train). */
export function unpackNpz(bytes: Uint8Array, keys: string[], where: NpzWhere): Map<string, Uint8Array> {
  const names: string[] = [];
  const wanted = new Set(keys.flatMap((k) => [k, `${k}.npy`]));
  let members: Record<string, Uint8Array>;
  try {
    members = unzipSync(bytes, {
      filter: (f) => {
        names.push(f.name);
        return wanted.has(f.name);
      },
    });
  } catch (e) {
    throw dataError(Messages.NpzBadArchive, [`"${where.shown}"`, archiveProblem(bytes, e as Error)], where.file);
  }
  const found = new Map<string, Uint8Array>();
  for (const key of keys) {
    const member = members[`${key}.npy`] ?? members[key];
    if (!member) throw dataError(Messages.NpzMissingKey, [`"${where.shown}"`, key, keysOf(names)], where.file);
    found.set(key, member);
  }
  return found;
}

/** The arrays an archive holds as np.load names them: its members without .npy. */
function keysOf(names: string[]): string {
  if (names.length === 0) return 'none (the archive is empty)';
  return names.map((n) => n.replace(/\.npy$/, '')).join(', ');
}

function archiveProblem(bytes: Uint8Array, e: Error): string {
  if (bytes.length === 0) return 'the file is empty';
  if (bytes[0] === 0x93 && bytes[1] === 0x4e) return 'it is a single .npy file; read it with npy(x: "...", y: "...")';
  if (!(bytes[0] === 0x50 && bytes[1] === 0x4b)) return 'it is not a zip archive';
  // fflate's messages: 'invalid zip data' (no end record: cut short or not zip), 'unknown compression type N', 'invalid block type', 'unexpected EOF', ...
  if (/invalid zip data/.test(e.message)) return 'it has no zip directory at its end (it is cut short, or not a zip archive)';
  return e.message;
}
