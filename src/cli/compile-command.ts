// `netc compile FILE [-o OUT.ts]`: compiles a .net file to a TypeScript module that trains its ensemble
// (src/emit/), and writes it to OUT (atomically) or to standard output.
import { writeAtomic } from '../util/write-atomic.js';
import { Messages } from '../diagnostics/messages.js';
import type { Lowering } from '../layers/forward.js';
import { emitInfo } from '../emit/emit.js';
import { selectBackend } from '../runtime/backend.js';
import { formatModule } from '../emit/format.js';
import { compiledCleanly, compileFile, fileError } from './compile-file.js';
import { ExitCode, type Io } from './io.js';
import { fileHost } from './host.js';
import { sameFileAs } from '../util/same-file.js';

export interface CompileCommandOptions {
  /** the .ts file to write; standard output when absent */
  out?: string;
  lowering: Lowering;
  members?: number;
}

export async function compileCommand(file: string, options: CompileCommandOptions, io: Io): Promise<number> {
  if (options.out !== undefined && sameFileAs(options.out, [file])) return refuseInput(io, options.out, file);
  // the module's math is traced from netc's rules on small tensors (src/emit/trace-step.ts), on the cpu backend
  const { tf } = await selectBackend('cpu', { log: () => {} });
  const read = new Set<string>();
  const state = compileFile(file, io, undefined, { lowering: options.lowering, members: options.members, emit: emitInfo(file, options.out, process.cwd(), tf), host: fileHost(file, read) });
  if (!state || !compiledCleanly(state)) return ExitCode.errors;
  const input = options.out === undefined ? undefined : sameFileAs(options.out, read);
  if (input !== undefined) return refuseInput(io, options.out!, input);
  if (!state.program!.train) {
    return fileError(io, file, Messages.MissingTrain, 1);
  }
  const retiring = state.program!.schedules.filter((s) => s.name === 'halving' || s.name === 'early_stopping').map((s) => s.name);
  if (state.ensemble!.lowering === 'loop' && retiring.length) {
    // the loop lowering's module is written member by member, for the compiled count
    io.err(`netc: warning: ${retiring.join(' and ')} ${retiring.length > 1 ? 'retire' : 'retires'} members, and a module compiled with --lowering loop trains only its ${state.ensemble!.members}: its train() stops with an error when they are retired; use --lowering grouped or blockdiag\n`);
  }
  const text = await formatModule(state.module!);
  if (options.out === undefined) {
    io.out(text);
    return ExitCode.ok;
  }
  try {
    writeAtomic(options.out, text);
  } catch (e) {
    io.err(`netc: cannot write '${options.out}': ${(e as Error).message}\n`);
    return ExitCode.errors;
  }
  const e = state.ensemble!;
  io.out(`${options.out}: model ${e.model.name}, ${e.members} member${e.members === 1 ? '' : 's'}, lowering ${e.lowering}\n`);
  return ExitCode.ok;
}

/** `-o` names a file the compilation reads (the .net file, a data file), itself or through a link: refused, as cp and gcc refuse. */
function refuseInput(io: Io, out: string, input: string): number {
  io.err(`netc: -o ${out} is the input file ${input}${out === input ? '' : ' (the same file under another name or through a link)'}; write the module to a new .ts file, as in -o model.ts\n`);
  return ExitCode.errors;
}
