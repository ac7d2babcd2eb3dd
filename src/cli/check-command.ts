// `netc check FILE...`: checks every file in one process; a one-line summary per clean file.
import { formatSummary } from '../diagnostics/format.js';
import { outputShape } from '../check/check-model.js';
import { fmtShape } from '../layers/layer-kind.js';
import { parameterCount } from '../ir/model-ir.js';
import { compiledCleanly, compileFile } from './compile-file.js';
import { ExitCode, type Io } from './io.js';

export function checkCommand(files: string[], io: Io): number {
  let failed = 0;
  let errors = 0;
  for (const file of files) {
    const state = compileFile(file, io);
    if (!compiledCleanly(state)) {
      failed++;
      errors += state ? state.diagnostics.filter((d) => d.category === 'error').length : 1;
      continue;
    }
    const { model, ensemble } = state!.program!;
    const members = `${ensemble.members} member${ensemble.members === 1 ? '' : 's'}`;
    const warnings = state!.diagnostics.length ? ` (${formatSummary(state!.diagnostics)})` : '';
    io.out(`${file}: ok: model ${model.name}, ${members}, ${parameterCount(state!.ir!)} parameters per member, output ${fmtShape(outputShape(model))}${warnings}\n`);
  }
  if (failed) io.err(`${errors} error${errors === 1 ? '' : 's'} in ${failed} of ${files.length} file${files.length === 1 ? '' : 's'}\n`);
  return failed ? ExitCode.errors : ExitCode.ok;
}
