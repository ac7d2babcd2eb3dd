// The compiler's passes, in order, in one place. Each pass takes the state the previous ones left and
// adds to it; diagnostics stop the pipeline after the pass that reported them. The verifier runs after
// every pass that produces IR.
import { hasErrors, type Diagnostic } from './diagnostics/diagnostic.js';
import { DiagnosticSink } from './diagnostics/sink.js';
import { Messages } from './diagnostics/messages.js';
import { parse } from './syntax/parse.js';
import type { NetFile } from './syntax/ast.js';
import { check, type CheckOptions } from './check/check.js';
import type { Program } from './check/program.js';
import { lowerModel } from './ir/lower.js';
import type { ModelIR } from './ir/model-ir.js';
import { verifyModelIR } from './ir/verify.js';
import type { Lowering } from './layers/forward.js';
import type { EnsembleIR } from './ensemble/ensemble-ir.js';
import { widen } from './ensemble/widen.js';
import { verifyEnsembleIR } from './ensemble/verify.js';
import { emitModule, type EmitInfo } from './emit/emit.js';
import { compiledRun, runClips, runStep, type CompiledRun } from './runtime/compiled-run.js';
import type { StepCode, StepVariant } from './step/step-code.js';
import type { FusedPlan } from './step/print.js';
import type { WgslPlan } from './step/wgsl-print.js';

export interface CompileState {
  path: string;
  source: string;
  diagnostics: Diagnostic[];
  ast?: NetFile;
  program?: Program;
  ir?: ModelIR;
  ensemble?: EnsembleIR;
  /** the program, both IRs and the members' hyperparameter table, as everything after the compiler reads them */
  run?: CompiledRun;
  /** the run's step, planned once (its configuration, and its code when asked for): netc train, emit and the generating passes read it */
  step?: StepCode;
  /** the TypeScript module (netc compile) */
  module?: string;
  /** the generated training step of the run, or why there is none (the fuse pass) */
  fused?: FusedPlan;
  /** the WGSL kernels of the run's step on webgpu, or why there are none (the wgsl pass) */
  wgsl?: WgslPlan;
}

export interface Pass {
  name: string;
  /**
   * code generation: runs only where it is asked for (`netc ir --after` names it), never on the way to a
   * later pass: netc check, the language server, train and compile stop at the verified ensemble IR
   */
  generates?: true;
  run(state: CompileState, options: CompileOptions): void;
}

/** A verifier found broken IR: always a bug in netc, never the user's mistake. */
export class InternalError extends Error {
  override name = 'InternalError';
}

/** A pass that checks the IR the previous pass left; a problem is an InternalError. */
function verifier(name: string, what: string, verify: (state: CompileState) => string[]): Pass {
  return {
    name,
    run(state) {
      const problems = verify(state);
      if (problems.length) throw new InternalError(`the ${what} of ${state.path} is invalid:\n  ${problems.join('\n  ')}`);
    },
  };
}

/**
 * The checker's diagnostics less those whose span holds a bracket that nests too deep (NET1011): the parser
 * cut what that bracket held, so the value around it is wrong only because of that one mistake.
 */
function withoutEchoesOfNesting(checked: Diagnostic[], parsed: Diagnostic[]): Diagnostic[] {
  const deep = parsed.filter((d) => d.code === Messages.NestingTooDeep.code).map((d) => d.start);
  if (!deep.length) return checked;
  return checked.filter((c) => !deep.some((at) => at >= c.start && at < c.start + c.length));
}

export const passes: readonly Pass[] = [
  {
    name: 'parse',
    run(state) {
      const { file, diagnostics } = parse(state.source, state.path);
      state.ast = file;
      state.diagnostics.push(...diagnostics);
    },
  },
  {
    name: 'check',
    run(state, options) {
      const sink = new DiagnosticSink(state.path);
      state.program = check(state.ast!, sink, options);
      state.diagnostics.push(...withoutEchoesOfNesting(sink.diagnostics, state.diagnostics));
    },
  },
  {
    name: 'lower',
    run(state) {
      state.ir = lowerModel(state.program!.model);
    },
  },
  verifier('verify', 'model IR', (state) => verifyModelIR(state.ir!)),
  {
    name: 'widen',
    run(state, options) {
      const { ensemble } = state.program!;
      const members = options.members ?? ensemble.members;
      // --members must give a kfold split whole settings too (the checker saw the file's count)
      if (ensemble.split?.kind === 'kfold' && members % ensemble.split.k !== 0) {
        const sink = new DiagnosticSink(state.path);
        sink.report(Messages.SplitMembers, ensemble.splitSpan!, ensemble.split.k, `${members} (--members)`);
        state.diagnostics.push(...sink.diagnostics);
        return;
      }
      // members on data of their own read inputs of their own: the input is not shared
      state.ensemble = widen(state.ir!, options.lowering ?? 'grouped', members, { perMemberInput: ensemble.split !== undefined });
      state.run = compiledRun(state.program!, state.ir!, state.ensemble);
      state.step = runStep(state.run);
    },
  },
  verifier('verify-ensemble', 'ensemble IR', (state) => verifyEnsembleIR(state.ensemble!)),
  {
    // the generated training step (what `netc train` runs on wasm), or why the model has none: netc ir --after fuse
    name: 'fuse',
    generates: true,
    run(state) {
      const code = state.step;
      if (!code) return;
      const variant = fileVariant(state);
      const config = { ...code.config, maxBatch: variant.maxBatch, clipping: variant.clipping };
      const why = code.whyNotWasm();
      state.fused = why === undefined ? { config, step: code.wasm(variant).step } : { config, why };
    },
  },
  {
    // the generated step's second target, WGSL kernels for webgpu, or why the model has none: netc ir --after wgsl
    name: 'wgsl',
    generates: true,
    run(state) {
      const code = state.step;
      if (!code) return;
      const why = code.whyNotWgsl();
      state.wgsl = why === undefined ? { config: code.config, step: code.wgsl(fileVariant(state), state.ensemble!.members) } : { config: code.config, why };
    },
  },
  {
    // only for netc compile, which asks for it: the TypeScript module, as text (formatting is the CLI's)
    name: 'emit',
    run(state, options) {
      if (options.emit && state.step) state.module = emitModule(state.run!, state.step, options.emit);
    },
  },
];

/** The step the file's train block asks for: its batch, its metrics, clipping where any member clips. */
function fileVariant(state: CompileState): StepVariant {
  return { maxBatch: state.program!.train!.batch, metrics: state.step!.config.metrics, clipping: runClips(state.run!), training: true };
}

export const passNames = passes.map((p) => p.name);

export interface CompileOptions extends CheckOptions {
  /** stop after this pass (`netc ir --after`) */
  after?: string;
  lowering?: Lowering;
  /** overrides the ensemble block's member count (`--members`) */
  members?: number;
  /** run the emit pass, for a module written to these paths */
  emit?: EmitInfo;
}

/**
 * Runs the passes over one source text. The parser's diagnostics do not stop the checker (it works on
 * the recovered AST, so one run reports every mistake); any error stops the pipeline after `check`.
 */
export function compile(source: string, path: string, options: CompileOptions = {}): CompileState {
  const state: CompileState = { path, source, diagnostics: [] };
  for (const pass of passes) {
    if (pass.name !== 'check' && hasErrors(state.diagnostics)) break;
    if (pass.generates && pass.name !== options.after) continue;
    pass.run(state, options);
    state.diagnostics.sort((a, b) => a.start - b.start);
    if (pass.name === options.after) break;
  }
  return state;
}
