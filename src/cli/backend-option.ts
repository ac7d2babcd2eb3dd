// --backend for every command that runs TF.js: the chosen backend, its one-line log on stderr, and a
// missing backend explained as `netc: ...` (exit code 1) rather than a crash.
import { BackendError, selectBackend, type BackendName } from '../runtime/backend.js';
import type { TF } from '../kernels/tf.js';
import type { Io } from './io.js';

export async function chooseBackend(requested: BackendName | 'auto', io: Io): Promise<{ tf: TF; name: BackendName } | undefined> {
  try {
    const selected = await selectBackend(requested, { log: (line) => io.err(line + '\n') });
    return { tf: selected.tf as unknown as TF, name: selected.name };
  } catch (e) {
    if (!(e instanceof BackendError)) throw e;
    io.err(`netc: ${e.message}\n`);
    return undefined;
  }
}
