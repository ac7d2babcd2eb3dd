// One compiled .net file as everything after the compiler reads it: the checked program, its model IR,
// the ensemble IR it was widened to, and the members' hyperparameter table. The pipeline builds it once
// (compile()'s `run`), and a saved run rebuilds it from run.json (openRun); training, the emitted module
// and evaluation all read this one object instead of each deriving the table again. The table is the one
// mutable part: schedules (PBT) set members' values in it as a run goes.
import type { Program } from '../check/program.js';
import type { ModelIR } from '../ir/model-ir.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { hyperTable, type HyperSource, type HyperTable } from './hyper.js';
import { stepConfig } from '../step/plan.js';
import { StepCode } from '../step/step-code.js';

/** `P`: what of the program is at hand (a saved run keeps its ensemble and train blocks only). */
export interface CompiledRun<P extends HyperSource = Program> {
  program: P;
  model: ModelIR;
  ensemble: EnsembleIR;
  /** every member's hyperparameters: the file's values, vary's draws, and what schedules set since */
  hyper: HyperTable;
}

/** The run of a checked program widened to `ensemble`, with its hyperparameter table. */
export function compiledRun<P extends HyperSource>(program: P, model: ModelIR, ensemble: EnsembleIR): CompiledRun<P> {
  return { program, model, ensemble, hyper: hyperTable(program, model) };
}

/**
 * The run's step, planned once from its file (none without a train block): the step's configuration and its
 * generated code, made when first asked for (each variant says its batch and whether it clips). netc train plans
 * its engine on it, emit and `netc ir --after fuse|wgsl` read it.
 */
export function runStep(run: CompiledRun): StepCode | undefined {
  const train = run.program.train;
  if (!train) return undefined;
  return new StepCode(stepConfig(run.ensemble, train));
}

/** Whether any member of the run clips its gradients now (the file's clipnorm, vary's, or a schedule's). */
export function runClips(run: CompiledRun): boolean {
  if (!run.hyper.keys.includes('clipnorm')) return false;
  for (let m = 0; m < run.ensemble.members; m++) if (run.hyper.value('clipnorm', m) > 0) return true;
  return false;
}
