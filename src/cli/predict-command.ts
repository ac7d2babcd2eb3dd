// `netc predict RUN [--data SOURCE]`: a trained run's members on new data, in inference mode (no dropout,
// batchnorm's running statistics), and the ensemble's prediction combined from theirs. Also the part
// `netc eval` shares: opening the run and loading and checking the data.
import { existsSync } from 'node:fs';
import { chooseBackend } from './backend-option.js';
import { dirname, join, resolve } from 'node:path';
import { expectedOutput, inputFits } from '../check/data-fit.js';
import { formatDataSource, parseDataSource } from '../check/data-expression.js';
import type { CallConfig } from '../core/arg-spec.js';
import { holdoutOf, splitData } from '../data/split.js';
import { textSources } from '../data/text.js';
import { checkLoadedLabels, checkLoadedTokens } from './loaded-labels.js';
import { tokenReader } from '../ir/token-reader.js';
import { dataSources } from '../data/sources.js';
import { loadDataset } from '../data/load.js';
import { splitText } from '../vocabulary/splits.js';
import { DataError, formatDataError, labelWidth, type Dataset } from '../data/dataset.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { Messages } from '../diagnostics/messages.js';
import { fmtShape } from '../layers/layer-kind.js';
import type { BackendName } from '../runtime/backend.js';
import { isClassificationLoss, predictBatches, type BatchPrediction, type Combine } from '../serve/inference.js';
import type { TF } from '../kernels/tf.js';
import { losses as lossSpecs } from '../vocabulary/losses.js';
import { ExitCode, processIo, UsageError, type Io } from './io.js';
import { checkOutputFile } from './output-file.js';
import { openRun, readCheckpoint, readRunInfo, RunError, writeAtomic, type OpenRun, type RunInfo } from './run-dir.js';

/** Examples per forward pass when --batch is not given. */
export const DEFAULT_INFERENCE_BATCH = 256;

export interface InferenceCommandOptions {
  /** a data source; without it, the run's own test split, else its validation split */
  data?: string;
  backend: BackendName | 'auto';
  /** the seed of generated data sources (xor, moons, spirals); default: the run's */
  seed?: number;
  batch?: number;
}

/** An opened run with the data to run it on; the caller disposes `run.population`. */
export interface InferenceSetup {
  run: OpenRun;
  tf: TF;
  backend: BackendName;
  data: Dataset;
  /** the data as a data source is written: --data, or the run's train block's source */
  dataText: string;
  /** the run's split the data is (no --data), or null (--data) */
  split: 'test' | 'validation' | null;
  loss: { name: string; args: Record<string, unknown> };
  classification: boolean;
}

/**
 * Data with class labels and no `classes:` (idx, npy, npz) has the classes the run was trained on, not
 * only those its labels hold (a test set may lack the last class).
 */
function withRunClasses(data: Dataset, config: CallConfig, info: RunInfo): Dataset {
  const run = info.program.train?.dataShape?.labels;
  const takesClasses = dataSources.find((d) => d.name === config.name)?.args.some((a) => a.name === 'classes');
  if (!takesClasses || config.args.classes !== undefined || run?.kind !== 'classes' || data.labels.kind !== 'classes') return data;
  return data.labels.classes < run.classes ? { ...data, labels: run } : data;
}

/**
 * Parses and loads --data, checks it against the run's model (its input always; the labels against the loss
 * with `labels`; a vote needs a classification loss), selects the backend and opens the run on it. Every mistake is printed here, as the other
 * commands print it; undefined then means exit code 1.
 */
export async function prepareInference(runDir: string, options: InferenceCommandOptions, io: Io, checks: { labels: boolean; vote?: boolean }): Promise<InferenceSetup | undefined> {
  if (options.data === undefined && options.seed !== undefined) throw new UsageError("--seed draws the generated data of --data; without --data the run's own split is used, drawn from the run's seed");
  const parsed = options.data === undefined ? undefined : parseDataSource(options.data);
  if (parsed?.diagnostics.length) io.err(formatDiagnostics(parsed.diagnostics, options.data!) + '\n');
  if (parsed && !parsed.config) return undefined;

  let info: RunInfo;
  let checkpoint: ReturnType<typeof readCheckpoint>;
  try {
    if (!existsSync(runDir)) throw new RunError(`there is no run directory '${runDir}'`);
    info = readRunInfo(runDir);
    // the checkpoint is read, and its absence or damage reported, before any work
    if (!existsSync(join(runDir, 'population.json'))) throw new RunError(`'${runDir}' holds no checkpoint (no population.json): its training stopped before the first one was written`);
    checkpoint = readCheckpoint(runDir);
  } catch (e) {
    if (e instanceof RunError) return fail(io, e.message);
    throw e;
  }
  const loss = info.program.train?.loss ?? { name: 'mse', args: {} };
  if (checks.vote && !isClassificationLoss(loss.name)) {
    throw new UsageError(`--combine vote needs class predictions, and ${runDir} was trained with the regression loss ${loss.name}; use --combine mean or none`);
  }

  let picked: ChosenData;
  try {
    picked = parsed ? await givenData(parsed.config!, options, info, io) : await runSplit(runDir, info, io);
  } catch (e) {
    if (e instanceof DataError) {
      io.err(formatDataError(e) + '\n');
      return undefined;
    }
    throw e;
  }
  const { data, text } = picked;
  const sink = new DiagnosticSink('--data');
  const all = { start: 0, length: text.length };
  const input = info.model.ops[0].shape;
  const output = info.model.ops[info.model.output].shape;
  if (data.count === 0) sink.report(Messages.DataFile, all, `${data.name} has no examples`);
  if (!inputFits(data.featureShape, input)) sink.report(Messages.InputDoesNotFitData, all, fmtShape(input), data.name, `examples of shape ${fmtShape(data.featureShape)}`);
  if (checks.labels) {
    const spec = lossSpecs.find((l) => l.name === loss.name)!;
    const expected = expectedOutput(spec, data.labels);
    const labels = data.labels.kind === 'classes' ? `${data.labels.classes} classes` : `${data.labels.columns} label column(s)`;
    if (typeof expected === 'string') sink.report(Messages.OutputDoesNotFitLoss, all, `the run's loss does not fit ${data.name}: ${expected}`);
    else if (expected !== undefined && (output.length !== 1 || output[0] !== expected))
      sink.report(Messages.OutputDoesNotFitLoss, all, `the run's output ${fmtShape(output)} does not fit ${loss.name} on ${data.name} with ${labels}: it needs [${expected}]`);
  }
  if (sink.diagnostics.length) {
    io.err(formatDiagnostics(sink.diagnostics, text) + '\n');
    return undefined;
  }

  const chosen = await chooseBackend(options.backend, io);
  if (!chosen) return undefined;
  const { tf, name: backend } = chosen;
  let run: OpenRun;
  try {
    run = openRun(runDir, tf, undefined, checkpoint);
  } catch (e) {
    if (e instanceof RunError) return fail(io, e.message);
    throw e;
  }
  return { run, tf, backend, data, dataText: text, split: picked.split, loss, classification: isClassificationLoss(loss.name) };
}

interface ChosenData {
  data: Dataset;
  text: string;
  split: InferenceSetup['split'];
}

/** --data, its paths relative to the current directory; generated sets are drawn from --seed, else the run's seed. */
async function givenData(config: CallConfig, options: InferenceCommandOptions, info: RunInfo, io: Io): Promise<ChosenData> {
  const seed = options.seed ?? info.program.ensemble.seed;
  if (generatedSets.includes(config.name) && options.seed === undefined) {
    io.err(`note: ${config.name}() is drawn from the run's seed (${seed}), as its training data was, so its examples overlap those the run trained on; give --seed for new ones, or leave out --data to use the run's held-out split\n`);
  }
  const vocabulary = await runVocabulary(config, info);
  const tokenIds = tokenReader(info.model) !== undefined;
  const data = await loadDataset(config, { baseDir: process.cwd(), seed, tokenIds, ...(vocabulary ? { vocabulary } : {}) });
  checkLoadedTokens(data, info.model);
  return { data: withRunClasses(data, config, info), text: options.data!, split: null };
}

/**
 * Text given with --data to a run trained on text: its words take the ids the run trained on, the run's own
 * vocabulary (learnt again from its training rows), not one learnt from the new texts.
 */
async function runVocabulary(config: CallConfig, info: RunInfo): Promise<string[] | undefined> {
  const train = info.program.train;
  if (!train || !textSources.includes(config.name) || !textSources.includes(train.data.name)) return undefined;
  const seed = info.program.ensemble.seed;
  const baseDir = info.base_dir ?? dirname(resolve(info.file));
  return (await loadDataset(train.data, { baseDir, seed, holdout: holdoutOf(train, seed) })).vocabulary;
}

const generatedSets = ['xor', 'moons', 'spirals'];

/**
 * The run's own held-out data, split as it was trained (run.json's source, seed and fractions): its test
 * split, else its validation split. Says on stderr which it is and which examples.
 */
async function runSplit(runDir: string, info: RunInfo, io: Io): Promise<ChosenData> {
  const train = info.program.train;
  const fractions = { validation: train?.validation ?? 0, test: train?.test ?? 0 };
  const members = info.program.ensemble.split;
  const own = members ? `; under split: ${splitText(members)} each member validates on examples of its own, so none is held out from all of them: set test: for that` : '';
  const none = `give --data: ${runDir} holds out no data of its own (its train block sets neither test: nor validation:${own})`;
  if (!train || (fractions.test === 0 && fractions.validation === 0)) throw new UsageError(none);
  const text = formatDataSource(train.data);
  const tokenIds = tokenReader(info.model) !== undefined;
  const all = await loadDataset(train.data, { baseDir: info.base_dir ?? dirname(resolve(info.file)), seed: info.program.ensemble.seed, holdout: holdoutOf(train, info.program.ensemble.seed), tokenIds });
  checkLoadedLabels(all, train.loss.name, info.model);
  checkLoadedTokens(all, info.model);
  const splits = splitData(all, fractions.validation, fractions.test, train.holdout === 'shuffled' ? info.program.ensemble.seed : undefined);
  const split = splits.test ? 'test' : splits.validation ? 'validation' : undefined;
  if (!split) throw new UsageError(none);
  const data = splits[split]!;
  const first = all.count - (splits.test?.count ?? 0) - (split === 'validation' ? data.count : 0);
  const range = `examples ${first} to ${first + data.count - 1} of the ${all.count} of ${text}, held out by ${split}: ${fractions[split]}`;
  io.err(
    split === 'test'
      ? `data: the run's test split: ${range}; the members were never trained or ranked on them\n`
      : `data: the run's validation split (it has no test split): ${range}; the members were ranked on these, so they are not unseen\n`,
  );
  return { data, text, split };
}

function fail(io: Io, message: string): undefined {
  io.err(`netc: ${message}\n`);
  return undefined;
}

/** What `netc predict --help` says about its output. */
export const predictHelp = `
Output, one row (CSV) or one object (JSON) per example, in the order of the data:
  example              the example's index in the data, from 0
  label                its label as the data gives it (a class index, or label0, label1, ... for
                       several label columns)
  ensemble_...         the ensemble's prediction (left out with --combine none):
                         mean  ensemble_class, ensemble_p0 ... ensemble_pK-1: the mean of the members'
                               outputs (probabilities for sigmoid and softmax outputs) and its class,
                               the argmax; one sigmoid output gives ensemble_class (p > 0.5) and
                               ensemble_p, the probability of class 1
                         vote  ensemble_class, ensemble_votes: the class most members predict and how
                               many do; a tie goes to the lowest class index
  member_ID_...        each member's own prediction, by member id: member_ID_class and its outputs
                       member_ID_p0 ... (or member_ID_p for one output)
A run trained with a regression loss (mse, mae, huber) has no classes: its outputs are ensemble_y and
member_ID_y (ensemble_y0 ... and member_ID_y0 ... for several outputs), and --combine vote is refused.

--format json writes { "combine", "members": [ids], "predictions": [ { "example", "label",
"ensemble": { "class", "p": [...] } (mean) | { "class", "votes" } (vote) | { "y": [...] } (regression),
"members": [ { "class", "p": [...] } | { "y": [...] }, ... in the order of "members" ] } ] }.
Outputs are written with 6 significant digits.

Data: --data takes a data source as a train block's data: entry does, e.g. 'mnist(offset: 9500)',
'csv("new.csv", label: "y")' or 'npy(x: "x.npy", y: "y.npy")'; csv, idx, npy and npz paths are relative
to the current directory. Generated sources
(xor, moons, spirals) are drawn from the run's seed unless --seed is given. Without --data, the run's
test split is used (else its validation split), split as it was trained; "example" then counts from the
split's first example, which a line on stderr names.
`;

export interface PredictOptions extends InferenceCommandOptions {
  combine: Combine;
  format: 'csv' | 'json';
  output?: string;
  /** with output: replace an existing file */
  force?: boolean;
}

export async function predictCommand(runDir: string, options: PredictOptions, io: Io): Promise<number> {
  try {
    if (options.output !== undefined) checkOutputFile(options.output, runDir, options.force);
  } catch (e) {
    if (!(e instanceof RunError)) throw e;
    fail(io, e.message);
    return ExitCode.errors;
  }
  const setup = await prepareInference(runDir, options, io, { labels: false, vote: options.combine === 'vote' });
  if (!setup) return ExitCode.errors;
  const { run, data, classification } = setup;
  try {
    const ids = run.manifest.member_ids;
    io.err(`predicting ${data.count} example${data.count === 1 ? '' : 's'} of ${data.name} with ${ids.length} member${ids.length === 1 ? '' : 's'} of ${run.info.model.name} (step ${run.manifest.position.step}), combine ${options.combine}\n`);
    const k = run.info.model.ops[run.info.model.output].shape.reduce((a, b) => a * b, 1);
    const writer = options.format === 'json' ? jsonWriter(options.combine, ids, classification, data) : csvWriter(options.combine, ids, classification, k, data);
    const chunks: string[] = [];
    if (options.output === undefined && io === processIo) quietOnClosedStdout();
    const emit = (text: string) => {
      if (options.output === undefined) io.out(text);
      else chunks.push(text);
    };
    emit(writer.head);
    for await (const batch of predictBatches(run.population, data, { batch: options.batch ?? DEFAULT_INFERENCE_BATCH, combine: options.combine, classification })) {
      if (stdoutClosed) break;
      emit(writer.batch(batch));
    }
    emit(writer.tail);
    if (options.output !== undefined) {
      try {
        writeAtomic(options.output, chunks.join(''));
      } catch (e) {
        io.err(`netc: cannot write ${options.output}: ${(e as Error).message}\n`);
        return ExitCode.errors;
      }
      io.err(`wrote ${data.count} prediction${data.count === 1 ? '' : 's'} to ${options.output}\n`);
    }
    return ExitCode.ok;
  } finally {
    run.population.dispose();
  }
}

let stdoutClosed = false;
let stdoutGuarded = false;

/**
 * `netc predict ... | head`: once the reader has gone, stop predicting and end quietly, as Unix tools do,
 * instead of dying on the EPIPE error that process.stdout emits.
 */
function quietOnClosedStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    stdoutClosed = true;
  });
}

/** A number as written: 6 significant digits, no trailing zeros. */
const num = (v: number): number => (Number.isFinite(v) ? Number(v.toPrecision(6)) : v);
/** In CSV, small values in exponent form (8.34103e-6 rather than 0.00000834103). */
const cell = (v: number): string => {
  const n = num(v);
  return n !== 0 && Math.abs(n) < 1e-4 ? n.toExponential() : String(n);
};

interface Writer {
  head: string;
  batch(b: BatchPrediction): string;
  tail: string;
}

function labelOf(ds: Dataset, e: number): number | number[] {
  const width = labelWidth(ds.labels);
  if (ds.labels.kind === 'classes' || width === 1) return ds.y[e * width];
  return Array.from(ds.y.subarray(e * width, (e + 1) * width));
}

/** Output columns `prefix` + p0..pK-1 (or `prefix` + p for one output); y for regression. */
function outputNames(prefix: string, classification: boolean, k: number): string[] {
  const letter = classification ? 'p' : 'y';
  return k === 1 ? [`${prefix}${letter}`] : Array.from({ length: k }, (_, j) => `${prefix}${letter}${j}`);
}

function csvWriter(combine: Combine, ids: number[], classification: boolean, k: number, ds: Dataset): Writer {
  const width = labelWidth(ds.labels);
  const labelColumns = ds.labels.kind === 'classes' || width === 1 ? ['label'] : Array.from({ length: width }, (_, j) => `label${j}`);
  const ensemble = combine === 'mean' ? [...(classification ? ['ensemble_class'] : []), ...outputNames('ensemble_', classification, k)] : combine === 'vote' ? ['ensemble_class', 'ensemble_votes'] : [];
  const members = ids.flatMap((id) => [...(classification ? [`member_${id}_class`] : []), ...outputNames(`member_${id}_`, classification, k)]);
  const n = ids.length;
  return {
    head: ['example', ...labelColumns, ...ensemble, ...members].join(',') + '\n',
    batch(b) {
      const lines: string[] = [];
      for (let i = 0; i < b.size; i++) {
        const e = b.start + i;
        const row: (string | number)[] = [e, ...[labelOf(ds, e)].flat().map(cell)];
        if (combine === 'mean') {
          if (classification) row.push(b.classes![i]);
          for (let j = 0; j < k; j++) row.push(cell(b.mean![i * k + j]));
        } else if (combine === 'vote') row.push(b.classes![i], b.votes![i]);
        for (let m = 0; m < n; m++) {
          if (classification) row.push(b.memberClasses![m * b.size + i]);
          const at = (m * b.size + i) * k;
          for (let j = 0; j < k; j++) row.push(cell(b.members[at + j]));
        }
        lines.push(row.join(',') + '\n');
      }
      return lines.join('');
    },
    tail: '',
  };
}

function jsonWriter(combine: Combine, ids: number[], classification: boolean, ds: Dataset): Writer {
  let first = true;
  const n = ids.length;
  const outputs = (values: Float32Array, at: number, k: number) => Array.from(values.subarray(at, at + k), num);
  return {
    head: `{"combine":${JSON.stringify(combine)},"members":${JSON.stringify(ids)},"predictions":[`,
    batch(b) {
      const { k } = b;
      const lines: string[] = [];
      for (let i = 0; i < b.size; i++) {
        const e = b.start + i;
        const prediction: Record<string, unknown> = { example: e, label: labelOf(ds, e) };
        if (combine === 'mean') prediction.ensemble = classification ? { class: b.classes![i], p: outputs(b.mean!, i * k, k) } : { y: outputs(b.mean!, i * k, k) };
        else if (combine === 'vote') prediction.ensemble = { class: b.classes![i], votes: b.votes![i] };
        prediction.members = Array.from({ length: n }, (_, m) => {
          const values = outputs(b.members, (m * b.size + i) * k, k);
          return classification ? { class: b.memberClasses![m * b.size + i], p: values } : { y: values };
        });
        lines.push(`${first ? '\n' : ',\n'}${JSON.stringify(prediction)}`);
        first = false;
      }
      return lines.join('');
    },
    tail: '\n]}\n',
  };
}
