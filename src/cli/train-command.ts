// `netc train FILE`: compile, load the data, train the fused population with progress output, then
// write the run directory (metrics.jsonl, summary.json, the population) and print the leaderboard.
// Its parts: the options and how a resume gets them back (train-options.ts), the directory a new run goes
// to (out-dir.ts), what is printed while training (train-progress.ts) and at the end (train-summary.ts).
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { chooseBackend } from './backend-option.js';
import { basename, dirname, join, resolve } from 'node:path';
import { Messages } from '../diagnostics/messages.js';
import { dataSize, loadDataset } from '../data/load.js';
import { DataError, formatDataError } from '../data/dataset.js';
import { holdoutOf, splitData, splitValidation } from '../data/split.js';
import { checkLoadedLabels, checkLoadedTokens } from './loaded-labels.js';
import { tokenReader } from '../ir/token-reader.js';
import { warnHeldOutClasses } from './held-out-classes.js';
import { describeSplit, splitNote } from '../data/member-splits.js';
import { shownHyperparameters, type HyperTable } from '../runtime/hyper.js';
import type { CompiledRun } from '../runtime/compiled-run.js';
import { planStep, type StepPlan } from '../runtime/fused-step.js';
import type { StepCode } from '../step/step-code.js';
import { batchesPerEpoch, DivergenceError, train, type EpochReport, type PopulationEvent, type TrainResult, type TrainSetup } from '../train/trainer.js';
import { makeSchedules } from '../train/schedules.js';
import type { RetiredMember } from '../train/checkpoint.js';
import type { CompileState } from '../pipeline.js';
import type { TF } from '../kernels/tf.js';
import { compiledCleanly, compileFile, sourceError, sourceErrorAt } from './compile-file.js';
import { fingerprint, NotJsonError, readCheckpoint, RunError, updateRunOptions, writeAtomic, writeCheckpoint, writeRunInfo, type RunInfo } from './run-dir.js';
import { ExitCode, UsageError, type Io } from './io.js';
import { checkOutDir, claimOutDir, OutDirError, type OutDir } from './out-dir.js';
import { lockRun, type RunLock } from './run-lock.js';
import { checkpointPolicy, keptOptions, queueHoldsPassword, queueNotKept, resumedRun, resumeOptions, type TrainOptions } from './train-options.js';
import { LineBuffer } from './line-buffer.js';
import { readBackLine } from './read-back-line.js';
import type { MetricsLine } from '../report/run-data.js';
import { CURVE_MEMBERS } from '../report/sample.js';
import { TrainProgress } from './train-progress.js';
import { finishRun } from './train-summary.js';
import { runThreads } from './threads-option.js';
import { closeThreadPools } from '../runtime/threads.js';
import { makeTransport } from './transport-option.js';
import { QueueError } from '../scale/queue-error.js';
import { memoryProblem } from './memory-budget.js';
import { estimateMemory } from '../train/memory.js';
import { collectGarbage, collectIfGrown } from '../util/collect.js';
import { WorkerError } from '../scale/local-workers.js';
import type { Transport } from '../scale/transport.js';
import type { BackendName } from '../runtime/backend.js';
import { plural } from '../util/plural.js';
import type { MessageDef } from '../diagnostics/messages.js';

export type { TrainOptions } from './train-options.js';

type Checkpoint = NonNullable<TrainSetup['resume']>;
type Split = ReturnType<typeof splitValidation>;

/** `file` may be left out with `--resume`: the run's own source (in run.json) is trained then. */
export async function trainCommand(file: string | undefined, given: TrainOptions, io: Io): Promise<number> {
  try {
    return await trainRun(file, given, io);
  } catch (e) {
    if (e instanceof RunError || e instanceof OutDirError) {
      io.err(`netc: ${e.message}\n`);
      return ExitCode.errors;
    }
    throw e;
  }
}

async function trainRun(file: string | undefined, given: TrainOptions, io: Io): Promise<number> {
  const run = given.resume !== undefined ? resumedRun(given.resume) : undefined;
  if (file === undefined && !run) throw new UsageError('give a .net file to train, or --resume RUN to continue a run');
  const options = run ? resumeOptions(given, run, given.resume!) : given;
  const net = compileForTraining(file, run, options, io);
  if (typeof net === 'number') return net;
  // the run directory's lock: a resume takes it before it reads the checkpoint, a new run once it makes its directory
  const held: { lock?: RunLock } = { lock: options.resume !== undefined ? lockRun(options.resume, 'train --resume') : undefined };
  try {
    return await trainLocked(net, run, options, held, io);
  } finally {
    held.lock?.release();
  }
}

async function trainLocked(net: NetFile, run: RunInfo | undefined, options: TrainOptions, held: { lock?: RunLock }, io: Io): Promise<number> {
  const { state, path } = net;
  const program = state.program!;

  // what is written to: the resumed run, or a new directory checked before anything is loaded
  let resume: Checkpoint | undefined;
  let outDir: OutDir | undefined;
  if (options.resume !== undefined) {
    const opened = openCheckpoint(options.resume, state, net.fail);
    if (typeof opened === 'number') return opened;
    resume = opened;
  } else {
    outDir = checkOutDir(options.out ?? defaultRunDir(path), options.force);
  }
  const runDir = options.resume ?? outDir!.path;

  const chosen = await chooseBackend(options.backend ?? 'auto', io);
  if (!chosen) return ExitCode.errors;
  // a population too large for the machine is refused before anything is allocated or written
  const tooLarge = memoryProblem({ ensemble: state.ensemble!, optimizer: program.train!.optimizer.name, batch: program.train!.batch, backend: chosen.name, resident: options.resident, sharded: options.workers !== undefined || options.queue !== undefined, data: dataSize(program.train!.data) });
  if (tooLarge) {
    io.err(`netc: ${tooLarge}\n`);
    return ExitCode.errors;
  }
  const loaded = await loadData(state, net.baseDir, io);
  if (!loaded) return ExitCode.errors;
  const { seen: data, tested } = loaded;
  const perEpoch = batchesPerEpoch({ program, data });
  const steps = program.train!.steps ?? program.train!.epochs! * perEpoch;
  const epochs = Math.ceil(steps / perEpoch);
  const at = resume?.manifest.position.step;
  // a run at its budget whose summary was not written (killed after its last checkpoint) is finished below
  if (at !== undefined && (at > steps || (at === steps && finished(runDir, at)))) return nothingToTrain(runDir, at, steps, io);

  if (resume) {
    replanNote(program, resume, steps, io);
    dropLinesAfter(runDir, resume, perEpoch);
    keepOptions(runDir, run!, options);
  } else {
    if (outDir) held.lock = claimOutDir(outDir, options.force);
    // a resume of a run killed before its first checkpoint has nothing to continue from: it starts over in place
    else io.err(`netc: ${runDir} has no checkpoint yet; starting it again from step 0\n`);
    startRunFiles(runDir, net, options);
  }
  const ensemble = state.ensemble!;
  const engine = engineLine(chosen.tf, state.step!, options.engine);
  io.err(
    `training ${plural(ensemble.members, 'member')} of ${state.ir!.name} (${ensemble.lowering}, ${engine.name}) on ${plural(data.train.count, 'example')}` +
      `${heldOut(data.validation?.count ?? 0, tested)}: ${plural(steps, 'step')}, ${plural(epochs, 'epoch')} of ${perEpoch}` +
      `${at !== undefined ? `, resuming at step ${at}` : ''}\n`,
  );
  if (engine.note) io.err(`${engine.note}\n`);
  const threads = runThreads(options.threads, engine.plan, ensemble, options.workers !== undefined || options.queue !== undefined);
  if (threads.note) io.err(`${threads.note}\n`);
  if (options.queue !== undefined && queueHoldsPassword(options.queue)) io.err(queueNotKept(options.queue));
  if (program.ensemble.split) io.err(`split: ${describeSplit(program.ensemble.split, data.train.count)}\n`);
  const padding = program.ensemble.split && splitNote(program.ensemble.split, data.train.count, program.train!.batch);
  if (padding) io.err(`${padding}\n`);

  const compiled = state.run!;
  const large = largeState(compiled.ensemble, program.train!.optimizer.name);
  let trained: Awaited<ReturnType<typeof runTraining>>;
  try {
    trained = await runTraining({ tf: chosen.tf, backend: chosen.name, run: compiled, data, steps, epochs, perEpoch, runDir, resume, options, large, plan: engine.plan }, io);
  } finally {
    closeThreadPools();
  }
  if (typeof trained === 'number') return trained;
  const { result, stopped, timings, transport, lines } = trained;
  result.dispose();
  const { name: model } = state.ir!;
  const { members, lowering } = ensemble;
  const finishing = finishDespiteCtrlC(io);
  try {
    await finishRun({ runDir, file: path, model, members, split: program.ensemble.split, epochs, backend: chosen.name, lowering, engine: engine.plan.engine, engineName: engine.name, threads: threads.used, seed: program.ensemble.seed, table: compiled.hyper, result, stopped, resumedFrom: at, timings, transport: transport?.name ?? 'in-process', shards: transport?.slots ?? 1, large, lines }, io);
  } finally {
    finishing.off();
  }
  if (stopped) io.err(`stopped at step ${result.steps}; continue with: netc train --resume ${runDir}\n`);
  return stopped ? ExitCode.errors : ExitCode.ok;
}

interface NetFile {
  /** the .net file, as given (or as the resumed run names it) */
  path: string;
  /** its folder, which its data paths are relative to */
  baseDir: string;
  state: CompileState;
  /** an error about the file as a whole, printed at its start; returns exit code 1 */
  fail: (def: MessageDef, length: number, ...args: (string | number)[]) => number;
}

/**
 * Compiles the .net file with the options' overrides (--members, --lowering, --seed, --steps, --epochs);
 * without FILE, the source a resumed run keeps in run.json. An exit code after its diagnostics.
 */
function compileForTraining(file: string | undefined, run: RunInfo | undefined, options: TrainOptions, io: Io): NetFile | number {
  const path = file ?? run!.file;
  const baseDir = file === undefined ? (run!.base_dir ?? dirname(resolve(path))) : dirname(resolve(path));
  const text = file === undefined ? { source: run!.source, baseDir } : undefined;
  const overrides = { seed: options.seed, epochs: options.epochs, steps: options.steps };
  // the ensemble IR is all training needs of the compiler: the runtime generates its step itself, once the
  // memory estimate has let the population through (a step generated here would be allocated before it)
  const state = compileFile(path, io, 'verify-ensemble', { lowering: options.lowering, members: options.members, overrides }, text);
  if (!state || !compiledCleanly(state)) return ExitCode.errors;
  const fail = (def: MessageDef, length: number, ...args: (string | number)[]) => sourceError(io, path, state.source, def, length, ...args);
  const program = state.program!;
  if (!program.train) return fail(Messages.MissingTrain, 1);
  const sharded = shardingOption(options);
  const sharedLayer = program.model.layers.find((l) => l.shared);
  if (sharded && sharedLayer) return sourceErrorAt(io, path, state.source, Messages.SharedNotSharded, sharedLayer.span, ...sharded);
  return { path, baseDir, state, fail };
}

/** The option that would train the population in pieces, and what it cuts it into. */
function shardingOption(options: TrainOptions): [string, string] | undefined {
  if (options.workers !== undefined) return ['--workers', 'shards for worker processes'];
  if (options.queue !== undefined) return ['--queue', 'shards for netc worker processes'];
  if (options.resident !== undefined) return ['--resident', 'waves'];
  return undefined;
}

/** A new run's first files: an empty metrics.jsonl, no events.jsonl, and run.json with the options it keeps. */
function startRunFiles(runDir: string, net: NetFile, options: TrainOptions): void {
  const { state } = net;
  writeFileSync(join(runDir, 'metrics.jsonl'), '');
  rmSync(join(runDir, 'events.jsonl'), { force: true });
  writeRunInfo(runDir, net.path, state.source, state.program!, state.ir!, state.ensemble!, { options: keptOptions(options), base_dir: net.baseDir });
}

/**
 * The checkpoint a resume continues from, checked against the compiled file; undefined when the run was
 * killed before its first checkpoint; an exit code after a message.
 */
function openCheckpoint(dir: string, state: CompileState, fail: (def: MessageDef, length: number, ...args: (string | number)[]) => number): Checkpoint | undefined | number {
  if (!existsSync(join(dir, 'population.json'))) {
    refuseLostManifest(dir);
    return undefined;
  }
  let resume: Checkpoint;
  try {
    resume = readCheckpoint(dir);
  } catch (e) {
    if (e instanceof NotJsonError) throw new RunError(`cannot resume ${dir}: its population.json is not valid JSON (${e.why})`);
    throw e;
  }
  const m = resume.manifest;
  const ensemble = state.ensemble!;
  const print = fingerprint(state.ir!);
  // members that stopped (halving, early stopping) still count: they are in the checkpoint as retired
  const total = m.members + (m.retired?.length ?? 0);
  if (m.fingerprint !== print || total !== ensemble.members) {
    return fail(
      Messages.CheckpointMismatch,
      0,
      `the checkpoint in ${dir} holds ${plural(total, 'member')} of model '${m.model}' (${m.fingerprint}); ${state.path} compiles to ${plural(ensemble.members, 'member')} of '${state.ir!.name}' (${print}), so it cannot resume it`,
    );
  }
  const seed = state.program!.ensemble.seed;
  if (m.seed !== seed) return fail(Messages.CheckpointMismatch, 0, `the checkpoint in ${dir} was trained with seed ${m.seed}, not ${seed}`);
  return resume;
}

/**
 * A run without population.json starts again from step 0 only when it never wrote a checkpoint: one whose
 * buffer or summary.json is there lost its manifest, and starting over would replace what it trained.
 */
function refuseLostManifest(dir: string): void {
  const buffers = readdirSync(dir).filter((f) => /^population-\d+\.bin$/.test(f));
  if (!buffers.length && !existsSync(join(dir, 'summary.json'))) return;
  const held = buffers.length ? `its checkpoint buffer ${buffers.sort().join(', ')}` : 'summary.json of a finished run';
  throw new RunError(
    `cannot resume ${dir}: it has no population.json, but it holds ${held}; the checkpoint cannot be read without its manifest, ` +
      `and netc will not start the run afresh over it: put population.json back, or train a new run with --out`,
  );
}

/**
 * A resume of a run that is already at (exit code 0) or past (exit code 1) the steps asked for: nothing is
 * trained and nothing in the run changes.
 */
/** cosine and linear run over the total; a resume with another total re-plans them, which is said */
function replanNote(program: NonNullable<CompileState['program']>, resume: Checkpoint, steps: number, io: Io): void {
  const planned = resume.manifest.position.total;
  if (['cosine', 'linear'].includes(program.train!.lr_schedule?.name ?? '') && planned !== undefined && planned !== steps) {
    io.err(`netc: the learning-rate schedule was planned over ${planned} steps and now runs over ${steps}: from step ${resume.manifest.position.step} on, each rate is that of a ${steps}-step run\n`);
  }
}

function nothingToTrain(runDir: string, at: number, steps: number, io: Io): number {
  const further = `nothing to train (give --steps N with N > ${at}, or --epochs, to train further)`;
  if (at === steps) {
    io.err(`netc: ${runDir} is already at step ${at} of ${steps}; ${further}\n`);
    return ExitCode.ok;
  }
  io.err(`netc: ${runDir} is already at step ${at}, past the ${plural(steps, 'step')} asked for; ${further}\n`);
  return ExitCode.errors;
}

/**
 * Whether the run ended at its checkpoint's step and wrote everything: summary.json of that step and report.html
 * (a run stopped while it wrote its report is finished by a resume, not told there is nothing to train).
 */
function finished(runDir: string, at: number): boolean {
  try {
    return JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')).steps === at && existsSync(join(runDir, 'report.html'));
  } catch {
    return false;
  }
}

/** The train and validation splits training is given, and how many examples the test split holds back from it. */
async function loadData(state: CompileState, baseDir: string, io: Io): Promise<{ seen: Split; tested: number } | undefined> {
  const program = state.program!;
  try {
    const tokenIds = tokenReader(state.ir!) !== undefined;
    const all = await loadDataset(program.train!.data, { baseDir, seed: program.ensemble.seed, holdout: holdoutOf(program.train!, program.ensemble.seed), tokenIds });
    checkLoadedLabels(all, program.train!.loss.name, state.ir!);
    checkLoadedTokens(all, state.ir!);
    // the test split stays here: the trainer is given the train and validation splits alone
    const splits = splitData(all, program.train!.validation, program.train!.test, program.train!.holdout === 'shuffled' ? program.ensemble.seed : undefined);
    const { test, ...seen } = splits;
    warnHeldOutClasses(state, all, splits, io);
    // an epoch of no batches never ends
    if (seen.train.count === 0) {
      sourceError(io, state.path, state.source, Messages.NoTrainingExamples, 0, `${all.name} gives ${plural(all.count, 'example')}, and none is left for training after validation and test`);
      return undefined;
    }
    // kfold needs an example for every fold
    const split = program.ensemble.split;
    if (split?.kind === 'kfold' && seen.train.count < split.k) {
      sourceErrorAt(io, state.path, state.source, Messages.SplitTooFewExamples, program.ensemble.splitSpan!, split.k, seen.train.count);
      return undefined;
    }
    return { seen, tested: test?.count ?? 0 };
  } catch (e) {
    if (e instanceof DataError) {
      io.err(formatDataError(e) + '\n');
      return undefined;
    }
    throw e;
  }
}

/** ` (+200 for validation, +100 held out for testing)`, the parts there are, or nothing. */
function heldOut(validation: number, test: number): string {
  const parts = [validation ? `+${validation} for validation` : '', test ? `+${test} held out for testing` : ''].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/**
 * Lines written after the checkpoint was taken will be written again: drop them. An epoch that had ended
 * at the checkpoint was reported before it was taken; a line at the checkpoint's step in the middle of an
 * epoch is a partial report (the step budget ended there), which the rest supersedes.
 */
function dropLinesAfter(runDir: string, resume: Checkpoint, perEpoch: number): void {
  const at = resume.manifest.position;
  // the checkpoint's step ended an epoch (its position is then the next epoch's start, or the end of the last)
  const ended = at.batch >= perEpoch || (at.batch === 0 && at.step > 0);
  truncateLines(join(runDir, 'metrics.jsonl'), (row) => (ended ? row.step <= at.step : row.step < at.step));
  // events up to the checkpoint's step happened before it was taken; later ones will happen again
  truncateLines(join(runDir, 'events.jsonl'), (row) => row.step <= at.step);
}

/**
 * The engine the run's steps take, as the first line names it (`fused step` or `TF.js ops`), and where the
 * fused step was asked for but does not cover the model, the one line that says why.
 */
function engineLine(tf: TF, step: StepCode, requested: TrainOptions['engine']): { name: string; plan: StepPlan; note?: string } {
  const plan = planStep(tf, requested, step);
  if (plan.engine === 'fused') return { name: plan.target === 'wgsl' ? 'fused WGSL step' : 'fused step', plan };
  if (!plan.why) return { name: 'TF.js ops', plan };
  return { name: 'TF.js ops', plan, note: `the fused step does not cover ${plan.why}: each step runs on TF.js ops` };
}

/** A resume that changed the kept options (a new step budget, another backend) keeps the new ones for the next. */
function keepOptions(runDir: string, run: RunInfo, options: TrainOptions): void {
  const kept = keptOptions(options);
  if (JSON.stringify(kept) !== JSON.stringify(run.options ?? {})) updateRunOptions(runDir, kept);
}

interface Training {
  tf: TF;
  backend: BackendName;
  run: CompiledRun;
  data: Split;
  steps: number;
  epochs: number;
  perEpoch: number;
  runDir: string;
  resume?: Checkpoint;
  options: TrainOptions;
  /** a population whose state is large enough that the heap is collected before each checkpoint (largeState) */
  large: boolean;
  /** the run's step plan, which the engine line names and every population of the run takes */
  plan: StepPlan;
}

type Timings = { epoch: number; step: number; members: number; seconds: number }[];

/** Trains with progress output, metrics.jsonl, events.jsonl and checkpoints; Ctrl-C stops after a step. */
async function runTraining(t: Training, io: Io): Promise<{ result: TrainResult; stopped: boolean; timings: Timings; transport?: Transport; lines?: MetricsLine[] } | number> {
  const { run, runDir } = t;
  const { program, hyper: table } = run;
  const seed = program.ensemble.seed;
  const start = t.resume?.manifest.position;
  const progress = new TrainProgress({ io, bar: !!t.options.progress, steps: t.steps, epochs: t.epochs, start: { step: start?.step ?? 0, epoch: start?.epoch ?? 0 }, everySeconds: t.options.progressSeconds ?? 10 });
  // the report's curves from memory where they are all of metrics.jsonl and few: a resume's file holds earlier epochs too
  const keep = !t.resume && run.ensemble.members <= CURVE_MEMBERS;
  const { onEpoch, onEvent, timings, metricsFile, lines } = recorder(runDir, table, progress, t.large, keep);
  const ctrlC = onCtrlC(io, () => metricsFile.flush());
  const print = fingerprint(run.model);
  // metrics.jsonl holds every line up to a checkpoint before it is written: a resume drops the lines after it
  const checkpoint = (population: Parameters<typeof writeCheckpoint>[1], position: Parameters<typeof writeCheckpoint>[2], retired: RetiredMember[], extra?: Map<string, Float32Array>) => {
    metricsFile.flush();
    if (t.large) collectGarbage();
    return writeCheckpoint(runDir, population, position, { fingerprint: print, seed, hyperKeys: table.keys, retired, extra });
  };
  let transport: Transport | undefined;
  try {
    transport = await makeTransport(t.options, t.backend, io, run.ensemble.members, { log: (line) => progress.note(line), everySeconds: t.options.progressSeconds ?? 10 });
    if (transport) io.err(`training in shards through ${transport.name}\n`);
    const schedules = makeSchedules(program.schedules, program.ensemble.vary, (path) => [...table.varied].find(([, p]) => p === path)![0], seed);
    const memberIds = Array.from({ length: run.ensemble.members }, (_, i) => i);
    const result = await train(
      {
        tf: t.tf,
        ...run,
        data: t.data,
        steps: t.steps,
        seed,
        memberIds,
        resume: t.resume,
        ...checkpointPolicy(t.options),
        schedules,
        resident: t.options.resident,
        transport,
        engine: t.options.engine,
        plan: t.plan,
      },
      {
        onStep: (p) => {
          progress.step(p);
          if (t.large) collectIfGrown();
        },
        onStepEveryMs: progress.everyMs, onEpoch, onEvent, shouldStop: ctrlC.stopped, checkpoint },
    );
    return { result, stopped: ctrlC.stopped(), timings, transport, lines };
  } catch (e) {
    if (e instanceof DivergenceError || e instanceof QueueError || e instanceof WorkerError) {
      progress.stop();
      io.err(`\nnetc: ${e.message}\n`);
      if (!(e instanceof DivergenceError)) io.err(continueLine(runDir));
      return ExitCode.errors;
    }
    throw e;
  } finally {
    try {
      // what was reported before a stop or a failure is kept
      metricsFile.flush();
    } finally {
      await transport?.close();
      progress.stop();
      ctrlC.off();
    }
  }
}

/**
 * Whether the population's parameters and optimizer slots take LARGE_STATE or more: then the heap is
 * collected before each checkpoint and before the run's files (util/collect.ts), which costs a few tens of
 * milliseconds each and keeps RSS near what is live.
 */
function largeState(ensemble: CompiledRun['ensemble'], optimizer: string): boolean {
  return estimateMemory(ensemble, optimizer, 1, ensemble.members).state >= LARGE_STATE;
}

const LARGE_STATE = 32 * 2 ** 20;

/** How to go on after a lost queue or worker: from the last checkpoint, or from the start where none was written yet. */
function continueLine(runDir: string): string {
  if (existsSync(join(runDir, 'population.json'))) return `the run can be continued from its last checkpoint: netc train --resume ${runDir}\n`;
  return `nothing was checkpointed yet; the run starts from its beginning with: netc train --resume ${runDir}\n`;
}

/** While the run's last files are written: Ctrl-C once lets them finish (it left no report.html); twice quits. */
export function finishDespiteCtrlC(io: Io): { off: () => void } {
  let asked = false;
  const onSigint = () => {
    if (asked) process.exit(130);
    asked = true;
    io.err('\nnetc: writing the run\'s last files (summary.json, report.html) first (Ctrl-C again to quit at once)\n');
  };
  process.on('SIGINT', onSigint);
  return { off: () => process.off('SIGINT', onSigint) };
}

/** Ctrl-C once: training stops after the current step (`stopped()`); twice: `flush`, then exit at once. */
function onCtrlC(io: Io, flush: () => void): { stopped: () => boolean; off: () => void } {
  let stop = false;
  const onSigint = () => {
    if (stop) {
      try {
        flush();
      } finally {
        process.exit(130);
      }
    }
    stop = true;
    io.err('\nnetc: stopping after this step (Ctrl-C again to quit at once)\n');
  };
  process.on('SIGINT', onSigint);
  return { stopped: () => stop, off: () => process.off('SIGINT', onSigint) };
}

/**
 * What each epoch and population event leaves: a progress line, metrics.jsonl (buffered: `metricsFile` is
 * flushed before every checkpoint and at the end), events.jsonl, the epoch's timing; with `keep`, also each
 * line as the report would read it back from metrics.jsonl (`lines`), so that it is not read back.
 */
function recorder(runDir: string, table: HyperTable, progress: TrainProgress, large: boolean, keep: boolean) {
  const timings: Timings = [];
  const lines: MetricsLine[] | undefined = keep ? [] : undefined;
  const metricsFile = new LineBuffer(join(runDir, 'metrics.jsonl'));
  const shown = (member: number) => shownHyperparameters(table, (key) => table.value(key, member));
  // each member's hyperparameters as JSON, kept until a population event (an exploit changes them); the
  // members that share their hyperparameters share one string (100,000 members' own strings and lines'
  // heads were 45 MB)
  const shownJson = new Map<number, string>();
  const distinct = new Map<string, string>();
  const hyperJson = (member: number) => {
    let json = shownJson.get(member);
    if (json === undefined) {
      const made = JSON.stringify(shown(member));
      json = distinct.get(made) ?? made;
      distinct.set(json, json);
      shownJson.set(member, json);
    }
    return json;
  };
  // each member's hyperparameters as the kept lines show them, one object a member until a population event
  const shownObjects = new Map<number, Record<string, number>>();
  const shownObject = (member: number) => shownObjects.get(member) ?? shownObjects.set(member, shown(member)).get(member)!;
  const memberText = (member: number, lr: number) => `,"member":${member},"hyperparameters":${hyperJson(member)},"lr":${jsonNumber(lr)}`;
  /** JSON.stringify({ epoch, step, member, hyperparameters, lr, ...metrics }), each member's hyperparameters' JSON cached; `head` is `{"epoch":E,"step":S` */
  const line = (r: EpochReport, m: number, head: string) => {
    const member = r.members[m];
    if (typeof r.lr[m] !== 'number') return JSON.stringify({ epoch: r.epoch, step: r.step, member, hyperparameters: shown(member), lr: r.lr[m], ...r.metrics[m] });
    let text = head + memberText(member, r.lr[m]);
    const metrics = r.metrics[m] as unknown as Record<string, number>;
    // the metrics' names are identifiers (loss, val_accuracy, ...): nothing in them to escape
    for (const name in metrics) if (metrics[name] !== undefined) text += `,"${name}":${jsonNumber(metrics[name])}`;
    return text + '}';
  };
  const onEpoch = (r: EpochReport) => {
    timings.push({ epoch: r.epoch, step: r.step, members: r.members.length, seconds: Math.round(r.seconds * 1000) / 1000 });
    progress.epoch(r);
    if (lines) for (let m = 0; m < r.metrics.length; m++) lines.push(readBackLine(r, m, shownObject(r.members[m])));
    const head = `{"epoch":${r.epoch},"step":${r.step}`;
    // in pieces of at most LINES_A_PUSH: 100,000 members' lines at once are tens of MB of strings
    for (let from = 0; from < r.metrics.length; from += LINES_A_PUSH) {
      // one string a piece, each line appended to it: not a list of lines and their join (15 members: an epoch is one string)
      let text = '';
      for (let m = from; m < Math.min(from + LINES_A_PUSH, r.metrics.length); m++) text += line(r, m, head) + '\n';
      metricsFile.pushText(text);
      // a large epoch's lines are garbage once pushed: collected as they pile up, not after all of them
      if (large) collectIfGrown();
    }
  };
  const eventsPath = join(runDir, 'events.jsonl');
  const onEvent = (e: PopulationEvent) => {
    shownJson.clear();
    shownObjects.clear();
    distinct.clear();
    appendFileSync(eventsPath, JSON.stringify(e) + '\n');
    if (e.event === 'exploit') progress.exploit(e);
    if (e.event === 'stop' && e.reason?.startsWith('diverged')) progress.note(`netc: member ${e.member} ${e.reason}; it is stopped, the others go on\n`);
  };
  return { onEpoch, onEvent, timings, metricsFile, lines };
}

/**
 * How many metrics.jsonl lines are made before they go to the file's buffer (which writes them once it holds
 * 1 MB): about 64 KB of text, which V8 keeps among its young objects (a piece of 4096 lines went straight to
 * the old generation, whose garbage stays until the heap has grown).
 */
const LINES_A_PUSH = 512;

/** A number as JSON.stringify writes it (non-finite: null), by the template literal's faster path. */
const jsonNumber = (v: number) => (Number.isFinite(v) ? `${v}` : 'null');

/**
 * Keeps the lines of a JSON-lines file whose row passes `keep` (a missing file stays missing). A last line
 * cut short (a full disk, a kill mid-write) is dropped: the resume writes it again. Any other line that is
 * not a JSON row is a RunError.
 */
function truncateLines(path: string, keep: (row: { step: number }) => boolean): void {
  if (!existsSync(path)) return;
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const torn = !text.endsWith('\n') && text.length > 0;
  const kept = lines.filter((line, i) => {
    if (!line) return false;
    const row = jsonRow(line);
    if (row) return keep(row);
    if (torn && i === lines.length - 1) return false;
    throw new RunError(`${path}:${i + 1} is damaged: the line is not a JSON row; remove it to resume`);
  });
  writeAtomic(path, kept.map((l) => l + '\n').join(''));
}

function jsonRow(line: string): { step: number } | undefined {
  try {
    const row = JSON.parse(line);
    return typeof row === 'object' && row !== null && typeof row.step === 'number' ? row : undefined;
  } catch {
    return undefined;
  }
}

/** runs/<file>-<time>, with -2, -3, ... when a run started in the same second took that name. */
function defaultRunDir(file: string): string {
  const base = join('runs', `${basename(file, '.net')}-${timestamp()}`);
  let dir = base;
  for (let n = 2; existsSync(dir); n++) dir = `${base}-${n}`;
  return dir;
}

function timestamp(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}
