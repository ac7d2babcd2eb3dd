// `netc train FILE`: compile, load the data, train the fused population with a progress bar, then
// write the run directory (metrics.jsonl, summary.json, the population) and print the leaderboard.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chooseBackend } from './backend-option.js';
import { basename, dirname, join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { Messages } from '../diagnostics/messages.js';
import type { Lowering } from '../layers/forward.js';
import { loadDataset } from '../data/load.js';
import { DataError, formatDataError } from '../data/dataset.js';
import { splitValidation } from '../data/split.js';
import { hyperTable, shownHyperparameters, type HyperTable } from '../runtime/hyper.js';
import type { BackendName } from '../runtime/backend.js';
import { batchesPerEpoch, DivergenceError, train, type EpochReport, type PopulationEvent, type Progress } from '../runtime/trainer.js';
import { makeSchedules } from '../runtime/schedules.js';
import type { RetiredMember } from '../runtime/checkpoint.js';
import { compiledCleanly, compileFile, fileError, fileErrorAt } from './compile-file.js';
import { leaderboard, rank, type MemberRow } from './leaderboard.js';
import { fingerprint, readCheckpoint, RunError, writeAtomic, writeCheckpoint, writeRunInfo } from './run-dir.js';
import { ExitCode, type Io } from './io.js';
import { makeTransport, type TransportOptions } from './transport-option.js';
import { QueueError } from '../scale/queue.js';
import { WorkerError } from '../scale/local-workers.js';
import type { Transport } from '../scale/transport.js';

export interface TrainOptions {
  members?: number;
  epochs?: number;
  steps?: number;
  seed?: number;
  backend: BackendName | 'auto';
  lowering: Lowering;
  out?: string;
  /** continue the run in this directory from its checkpoint */
  resume?: string;
  /** write a checkpoint every this many steps (default: every epoch), and always at the end */
  checkpointEvery?: number;
  /** train in waves of this many members, the rest waiting in host memory */
  resident?: number;
  /** draw a progress bar (a TTY); otherwise one line per epoch */
  progress?: boolean;
}

export type TrainCommandOptions = TrainOptions & TransportOptions;

const shown = (table: HyperTable, member: number) => shownHyperparameters(table, (key) => table.value(key, member));

export async function trainCommand(file: string, options: TrainCommandOptions, io: Io): Promise<number> {
  const state = compileFile(file, io, undefined, { lowering: options.lowering, members: options.members });
  if (!state) return ExitCode.errors;
  if (!compiledCleanly(state)) return ExitCode.errors;
  const program = state.program!;
  if (!program.train) {
    return fileError(io, file, Messages.MissingTrain, 1);
  }
  const sharded = shardingOption(options);
  const sharedLayer = program.model.layers.find((l) => l.shared);
  if (sharded && sharedLayer) return fileErrorAt(io, file, Messages.SharedNotSharded, sharedLayer.span, ...sharded);
  if (options.seed !== undefined) program.ensemble.seed = options.seed;
  if (options.epochs !== undefined) Object.assign(program.train, { epochs: options.epochs, steps: undefined });
  if (options.steps !== undefined) Object.assign(program.train, { steps: options.steps, epochs: undefined });
  const seed = program.ensemble.seed;

  const chosen = await chooseBackend(options.backend, io);
  if (!chosen) return ExitCode.errors;
  const { tf, name: backend } = chosen;

  let data;
  try {
    const all = await loadDataset(program.train.data, { baseDir: dirname(resolve(file)), seed });
    data = splitValidation(all, program.train.validation);
  } catch (e) {
    if (e instanceof DataError) {
      io.err(formatDataError(e) + '\n');
      return ExitCode.errors;
    }
    throw e;
  }

  const table = hyperTable(program, state.ir!);
  const ensemble = state.ensemble!;
  const perEpoch = batchesPerEpoch({ program, data });
  const steps = program.train.steps ?? program.train.epochs! * perEpoch;
  const epochs = Math.ceil(steps / perEpoch);
  const print = fingerprint(state.ir!);
  let resume;
  if (options.resume && !existsSync(join(options.resume, 'population.json')) && existsSync(join(options.resume, 'run.json'))) {
    // killed before its first checkpoint: nothing to continue from, so the run starts over in place
    io.err(`netc: ${options.resume} has no checkpoint yet; starting it again from step 0\n`);
  } else if (options.resume) {
    try {
      resume = readCheckpoint(options.resume);
    } catch (e) {
      if (e instanceof RunError) return fileError(io, file, Messages.RunUnreadable, 0, e.message);
      throw e;
    }
    const m = resume.manifest;
    // members that stopped (halving, early stopping) still count: they are in the checkpoint as retired
    const total = m.members + (m.retired?.length ?? 0);
    if (m.fingerprint !== print || total !== ensemble.members) {
      return fileError(
        io,
        file,
        Messages.CheckpointMismatch,
        0,
        `the checkpoint in ${options.resume} holds ${total} members of model '${m.model}' (${m.fingerprint}); ${file} compiles to ${ensemble.members} members of '${state.ir!.name}' (${print}), so it cannot resume it`,
      );
    }
    if (m.seed !== seed) return fileError(io, file, Messages.CheckpointMismatch, 0, `the checkpoint in ${options.resume} was trained with seed ${m.seed}, not ${seed}`);
  }
  const runDir = options.resume ?? options.out ?? join('runs', `${basename(file, '.net')}-${timestamp()}`);
  mkdirSync(runDir, { recursive: true });
  const metricsPath = join(runDir, 'metrics.jsonl');
  if (!resume) {
    writeFileSync(metricsPath, '');
    writeRunInfo(runDir, file, readFileSync(file, 'utf8'), program, state.ir!, ensemble);
  } else {
    // lines written after the checkpoint was taken will be written again: drop them. An epoch that had
    // ended at the checkpoint was reported before it was taken; a line at the checkpoint's step in the
    // middle of an epoch is a partial report (the step budget ended there), which the rest supersedes.
    const at = resume.manifest.position;
    // the checkpoint's step ended an epoch (its position is then the next epoch's start, or the end of the last)
    const ended = at.batch >= perEpoch || (at.batch === 0 && at.step > 0);
    truncateLines(metricsPath, (row) => (ended ? row.step <= at.step : row.step < at.step));
    // events up to the checkpoint's step happened before it was taken; later ones will happen again
    truncateLines(join(runDir, 'events.jsonl'), (row) => row.step <= at.step);
  }
  const memberIds = Array.from({ length: ensemble.members }, (_, i) => i);
  io.err(
    `training ${ensemble.members} members of ${state.ir!.name} (${ensemble.lowering}) on ${data.train.count} examples` +
      `${data.validation ? ` (+${data.validation.count} for validation)` : ''}: ${steps} steps, ${epochs} epoch${epochs === 1 ? '' : 's'} of ${perEpoch}` +
      `${resume ? `, resuming at step ${resume.manifest.position.step}` : ''}\n`,
  );

  const bar = options.progress
    ? new SingleBar({
        stream: process.stderr,
        format: 'train |{bar}| {value}/{total} steps | epoch {epoch}/{epochs} | {rate} member-steps/s | best loss {best}',
        hideCursor: true,
        clearOnComplete: false,
      })
    : undefined;
  bar?.start(steps, resume?.manifest.position.step ?? 0, { epoch: (resume?.manifest.position.epoch ?? 0) + 1, epochs, rate: '-', best: '-' });
  let stop = false;
  const onSigint = () => {
    if (stop) process.exit(130);
    stop = true;
    io.err('\nnetc: stopping after this step (Ctrl-C again to quit at once)\n');
  };
  process.on('SIGINT', onSigint);
  let lastDraw = 0;
  const onStep = (p: Progress) => {
    const now = performance.now();
    if (!bar || (now - lastDraw < 100 && p.step !== p.steps)) return;
    lastDraw = now;
    bar.update(p.step, { epoch: p.epoch, epochs: p.epochs, rate: Math.round(p.memberStepsPerSecond), best: Number.isFinite(p.bestLoss) ? p.bestLoss.toFixed(4) : '-' });
  };
  let bestLoss = Infinity;
  const timings: { epoch: number; step: number; members: number; seconds: number }[] = [];
  const onEpoch = (r: EpochReport) => {
    timings.push({ epoch: r.epoch, step: r.step, members: r.members.length, seconds: Math.round(r.seconds * 1000) / 1000 });
    bestLoss = Math.min(bestLoss, ...r.metrics.map((m) => m.loss).filter((l) => Number.isFinite(l)));
    bar?.update(r.step, { best: Number.isFinite(bestLoss) ? bestLoss.toFixed(4) : '-' });
    const lines = r.metrics.map((metrics, m) => JSON.stringify({ epoch: r.epoch, step: r.step, member: r.members[m], hyperparameters: shown(table, r.members[m]), ...metrics }));
    if (lines.length) appendFileSync(metricsPath, lines.join('\n') + '\n');
    if (!bar && r.metrics.length) {
      const best = rank(r.metrics.map((metrics, m) => ({ member: r.members[m], hyperparameters: {}, metrics })))[0];
      io.err(`epoch ${r.epoch}/${epochs}: step ${r.step}/${steps}, ${r.members.length} members, best member ${best.member}: ${describe(best.metrics)}\n`);
    }
  };
  const eventsPath = join(runDir, 'events.jsonl');
  const onEvent = (e: PopulationEvent) => {
    appendFileSync(eventsPath, JSON.stringify(e) + '\n');
    if (e.event === 'stop' && e.reason?.startsWith('diverged')) io.err(`\nnetc: member ${e.member} ${e.reason}; it is stopped, the others go on\n`);
  };

  let result;
  let transport: Transport | undefined;
  try {
    transport = await makeTransport(options, backend, io);
    if (transport) io.err(`training in shards through ${transport.name}\n`);
    const checkpoint = (population: Parameters<typeof writeCheckpoint>[1], position: Parameters<typeof writeCheckpoint>[2], retired: RetiredMember[]) =>
      writeCheckpoint(runDir, population, position, { fingerprint: print, seed, hyperKeys: table.keys, retired });
    const schedules = makeSchedules(program.schedules, program.ensemble.vary, (path) => [...table.varied].find(([, p]) => p === path)![0], seed);
    result = await train(
      {
        tf,
        program,
        model: state.ir!,
        ensemble,
        hyper: table,
        data,
        steps,
        seed,
        memberIds,
        resume,
        checkpointEvery: options.checkpointEvery ?? perEpoch,
        schedules,
        resident: options.resident,
        transport,
      },
      { onStep, onEpoch, onEvent, shouldStop: () => stop, checkpoint },
    );
  } catch (e) {
    if (e instanceof DivergenceError || e instanceof QueueError || e instanceof WorkerError) {
      bar?.stop();
      io.err(`\nnetc: ${e.message}\n`);
      if (!(e instanceof DivergenceError)) io.err(`the run can be continued from its last checkpoint: netc train ${file} --resume ${runDir}\n`);
      return ExitCode.errors;
    }
    throw e;
  } finally {
    await transport?.close();
    bar?.stop();
    process.off('SIGINT', onSigint);
  }

  const stoppedAt = new Map(result.retired.map((r) => [r.member, r]));
  const rows: MemberRow[] = result.final.map((metrics, m) => {
    const id = result.memberIds[m];
    const retired = stoppedAt.get(id);
    return { member: id, hyperparameters: shown(table, id), metrics, ...(retired ? { stopped: { step: retired.step, reason: retired.reason } } : {}) };
  });
  const summary = {
    file,
    model: state.ir!.name,
    members: ensemble.members,
    steps: result.steps,
    epochs,
    train_seconds: round(result.seconds),
    member_steps_per_second: round(result.memberStepsPerSecond),
    backend,
    lowering: ensemble.lowering,
    seed,
    transport: transport?.name ?? 'in-process',
    shards: transport?.slots ?? 1,
    stopped_early: stop,
    resumed_from_step: resume?.manifest.position.step ?? null,
    epoch_timings: timings,
    per_member: rows.map((r) => ({ member: r.member, hyperparameters: r.hyperparameters, metrics: r.metrics, ...(r.stopped ? { stopped: r.stopped } : {}) })),
  };
  writeAtomic(join(runDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  result.population.dispose();
  // the report loads vega lazily; a report that fails does not fail the training run
  const { writeReport } = await import('../report/report.js');
  let reportLine = '';
  try {
    reportLine = `report: ${await writeReport(runDir)}\n`;
  } catch (e) {
    io.err(`netc: could not write ${join(runDir, 'report.html')}: ${(e as Error).message}\n`);
  }

  io.out(leaderboard(rows) + '\n');
  io.out(
    `${result.steps} steps x ${ensemble.members} members in ${result.seconds.toFixed(1)} s (${Math.round(result.memberStepsPerSecond)} member-steps/s, ${backend}, ${ensemble.lowering})\n` +
      `run directory: ${runDir}\n` +
      reportLine,
  );
  if (stop) io.err(`stopped at step ${result.steps}; continue with: netc train ${file} --resume ${runDir}\n`);
  return stop ? ExitCode.errors : ExitCode.ok;
}

/** The option that would train the population in pieces, and what it cuts it into. */
function shardingOption(options: TrainCommandOptions): [string, string] | undefined {
  if (options.workers !== undefined) return ['--workers', 'shards for worker processes'];
  if (options.queue !== undefined) return ['--queue', 'shards for netc worker processes'];
  if (options.resident !== undefined) return ['--resident', 'waves'];
  return undefined;
}

/** Keeps the lines of a JSON-lines file whose row passes `keep` (a missing file stays missing). */
function truncateLines(path: string, keep: (row: { step: number }) => boolean): void {
  if (!existsSync(path)) return;
  const kept = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line && keep(JSON.parse(line)));
  writeAtomic(path, kept.map((l) => l + '\n').join(''));
}

const round = (v: number) => Math.round(v * 1000) / 1000;

function describe(m: { loss: number; accuracy?: number; val_loss?: number; val_accuracy?: number }): string {
  return Object.entries(m)
    .map(([k, v]) => `${k} ${(v as number).toFixed(4)}`)
    .join(', ');
}

function timestamp(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}
