// `netc ir FILE [--after PASS]`: prints the IR as it stands after a named pass.
import { passNames } from '../pipeline.js';
import { printModelIR } from '../ir/print.js';
import { printEnsembleIR } from '../ensemble/print.js';
import { printFusedStep } from '../step/print.js';
import { printWgslStep } from '../step/wgsl-print.js';
import type { CompileOptions } from '../pipeline.js';
import { compiledCleanly, compileFile } from './compile-file.js';
import { ExitCode, UsageError, type Io } from './io.js';

/** Passes after which there is IR to print. */
export const irPasses = passNames.slice(passNames.indexOf('lower'), passNames.indexOf('emit'));

export function irCommand(file: string, after: string, io: Io, options: Pick<CompileOptions, 'lowering' | 'members'> = {}): number {
  if (!irPasses.includes(after)) {
    throw new UsageError(`--after takes a pass that leaves IR: ${irPasses.join(', ')} (the passes are ${passNames.join(', ')})`);
  }
  const state = compileFile(file, io, after, options);
  if (!compiledCleanly(state)) return ExitCode.errors;
  if (after === 'fuse') {
    if (!state!.fused) throw new UsageError(`--after fuse needs a train block: ${file} has none, so there is no training step to generate`);
    io.out(printFusedStep(state!.fused));
  } else if (after === 'wgsl') {
    if (!state!.wgsl) throw new UsageError(`--after wgsl needs a train block: ${file} has none, so there is no training step to generate`);
    io.out(printWgslStep(state!.wgsl));
  } else io.out(state!.ensemble ? printEnsembleIR(state!.ensemble) : printModelIR(state!.ir!));
  return ExitCode.ok;
}
