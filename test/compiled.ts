// A compiled module next to netc's own runtime: the module `netc compile` writes for a state, imported in
// this process, and the runtime's Population for the same state (what `netc train` builds), so a test can
// train both on the same batches and compare them byte for byte.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { emitInfo, emitModule } from '../src/emit/emit.js';
import { formatModule } from '../src/emit/format.js';
import type { CompileState } from '../src/pipeline.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { initMember } from '../src/kernels/init.js';
import { Population, programSpec, type PopulationSpec } from '../src/runtime/population.js';
import type { TF } from '../src/kernels/tf.js';

const scratch = fileURLToPath(new URL('../.emit-tmp/', import.meta.url));

/** The runtime's population for a compiled state, as the trainer builds it; `extra` adds a module's forward and step. */
export function runtimePopulation(tf: TF, state: CompileState, extra: Partial<PopulationSpec> = {}): Population {
  const program = state.program!;
  const spec = programSpec(tf, program, state.ensemble!, hyperTable(program, state.ir!), (m) => initMember(state.ir!, program.ensemble.seed, m));
  return new Population({ ...spec, ...extra });
}

let written = 0;

/** The module `netc compile` writes for the state, imported (its netc/kernels from the sources, see vitest.config.ts). */
export async function importModule(tf: TF, state: CompileState): Promise<Record<string, unknown> & Pick<PopulationSpec, 'forward' | 'step'>> {
  mkdirSync(scratch, { recursive: true });
  const file = join(scratch, `module-${process.pid}-${written++}.ts`);
  writeFileSync(file, await formatModule(emitModule(state.run!, state.step!, emitInfo(state.path, file, process.cwd(), tf))));
  return import(pathToFileURL(file).href);
}

/** Removes the modules importModule() wrote in this process. */
export function removeModules(): void {
  for (const f of readdirSync(scratch)) if (f.startsWith(`module-${process.pid}-`)) rmSync(join(scratch, f), { force: true });
}
