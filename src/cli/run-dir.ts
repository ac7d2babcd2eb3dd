// The run directory on disk. run.json says what was trained (the .net source, the configuration, the
// ensemble IR and its slicing map), population.json and population-STEP.bin hold the latest checkpoint.
// Every file is written to a temporary name and renamed, and the buffer is written before the manifest
// that names it: a run killed at any moment leaves the previous checkpoint or the new one, never half.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { writeAtomic, writeAtomicBy, writeAtomicByAsync, writeAtomicChunks } from '../util/write-atomic.js';
import { maxOf } from '../util/extrema.js';
import { plural } from '../util/plural.js';
import { join } from 'node:path';
import type { Program } from '../check/program.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { slicingMap, type SlicingMap } from '../ensemble/slicing-map.js';
import { printModelIR } from '../ir/print.js';
import type { ModelIR } from '../ir/model-ir.js';
import { damagedTensor, decodeTensors, describeCheckpoint, manifestChunks, manifestProblem, nonFiniteIn, nonFiniteParameter, tensorBytes, memberParams, restore, type CheckpointManifest, type ManifestDraft, type RetiredMember, type StateSource, type TensorValues, type TrainPosition } from '../train/checkpoint.js';
import { Population } from '../runtime/population.js';
import { compiledRun, type CompiledRun } from '../runtime/compiled-run.js';
import type { TF } from '../kernels/tf.js';
import type { Lowering } from '../layers/forward.js';
import { widen } from '../ensemble/widen.js';

export interface RunInfo {
  format: 'netc-run-1';
  file: string;
  source: string;
  fingerprint: string;
  program: Pick<Program, 'ensemble' | 'train'>;
  model: ModelIR;
  ensemble: EnsembleIR;
  slicing_map: SlicingMap;
  /** `netc train`'s command-line options that shape the run, so that `--resume RUN` alone continues it (absent in older runs) */
  options?: RunOptions;
  /** the .net file's folder, which its data paths are relative to (absent in older runs) */
  base_dir?: string;
}

/** The options of `netc train` a run keeps: those given on the command line, in run.json's spelling. */
export interface RunOptions {
  members?: number;
  epochs?: number;
  steps?: number;
  seed?: number;
  lowering?: Lowering;
  backend?: string;
  engine?: string;
  resident?: number;
  checkpoint_every?: number;
  checkpoint_minutes?: number;
  /** --workers: a count or 'auto' */
  workers?: number | 'auto';
  /** --queue: the Redis URL, unless it holds a password */
  queue?: string;
  shards?: number;
}

/** Something wrong with a run directory: printed as `netc: <message>`, exit code 1. */
export class RunError extends Error {
  override name = 'RunError';
}

export { writeAtomic };

export const fingerprint = (model: ModelIR): string => createHash('sha256').update(printModelIR(model)).digest('hex').slice(0, 16);

export function writeRunInfo(
  dir: string,
  file: string,
  source: string,
  program: Program,
  model: ModelIR,
  ensemble: EnsembleIR,
  how: { options?: RunOptions; base_dir?: string } = {},
): RunInfo {
  const info: RunInfo = {
    format: 'netc-run-1',
    file,
    source,
    fingerprint: fingerprint(model),
    program: { ensemble: program.ensemble, train: program.train },
    model,
    ensemble,
    slicing_map: slicingMap(ensemble),
    ...how,
  };
  writeAtomic(join(dir, 'run.json'), JSON.stringify(info, null, 1) + '\n');
  // the inverse map on its own too, for tools that slice members out of population-STEP.bin themselves
  writeAtomic(join(dir, 'slicing-map.json'), JSON.stringify(info.slicing_map, null, 1) + '\n');
  return info;
}

/** Replaces the options a run keeps (a resume that changed the step budget, the backend, ...). */
export function updateRunOptions(dir: string, options: RunOptions): void {
  const info = readRunInfo(dir);
  writeAtomic(join(dir, 'run.json'), JSON.stringify({ ...info, options }, null, 1) + '\n');
}

export function readRunInfo(dir: string): RunInfo {
  const path = join(dir, 'run.json');
  if (!existsSync(path)) throw new RunError(`'${dir}' is not a netc run directory: it has no run.json`);
  const info = readJson(path) as RunInfo;
  if (info?.format !== 'netc-run-1') throw new RunError(`${path}: unknown format '${info?.format}'`);
  const problem = runInfoProblem(info);
  if (problem) throw new RunError(`${path} is damaged: ${problem}`);
  return info;
}

/** A file of the run that is not valid JSON (truncated by a full disk, edited): `why` is the parser's word. */
export class NotJsonError extends RunError {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super(`${path} is damaged: it is not valid JSON (${why})`);
  }
}

/** A JSON file of the run; one that does not parse is a NotJsonError. */
function readJson(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new NotJsonError(path, `${(e as Error).message}${text.length ? '' : '; the file is empty'}`);
  }
}

const OPTION_COUNTS = ['members', 'epochs', 'steps', 'seed', 'resident', 'checkpoint_every', 'shards'] as const;
const OPTION_NAMES = ['lowering', 'backend', 'engine', 'queue'] as const;

/** What is wrong with run.json's fields, or undefined when each has its type. */
function runInfoProblem(info: RunInfo): string | undefined {
  for (const key of ['file', 'source', 'fingerprint'] as const) if (typeof info[key] !== 'string') return `its '${key}' is not a string`;
  if (info.base_dir !== undefined && typeof info.base_dir !== 'string') return "its 'base_dir' is not a string";
  const isObject = (v: unknown) => typeof v === 'object' && v !== null;
  if (!isObject(info.program) || !isObject(info.program.ensemble)) return "its 'program' is not a checked program";
  if (!isObject(info.model) || !Array.isArray(info.model.ops) || !Array.isArray(info.model.params)) return "its 'model' is not a model IR";
  if (!isObject(info.ensemble) || !Number.isSafeInteger(info.ensemble.members) || !Array.isArray(info.ensemble.params)) return "its 'ensemble' is not an ensemble IR";
  const options = info.options ?? {};
  if (!isObject(options)) return "its 'options' is not an object";
  for (const key of OPTION_COUNTS) if (options[key] !== undefined && !(Number.isSafeInteger(options[key]) && options[key]! >= 0)) return `its option '${key}' (${JSON.stringify(options[key])}) is not a non-negative integer`;
  for (const key of OPTION_NAMES) if (options[key] !== undefined && typeof options[key] !== 'string') return `its option '${key}' (${JSON.stringify(options[key])}) is not a name`;
  const workers = options.workers;
  if (workers !== undefined && workers !== 'auto' && !(Number.isSafeInteger(workers) && workers >= 1)) return `its option 'workers' (${JSON.stringify(workers)}) is neither a count nor 'auto'`;
  const minutes = options.checkpoint_minutes;
  if (minutes !== undefined && !(typeof minutes === 'number' && minutes > 0)) return `its option 'checkpoint_minutes' (${JSON.stringify(minutes)}) is not a positive number`;
  return undefined;
}

export async function writeCheckpoint(
  dir: string,
  population: Population | StateSource,
  position: TrainPosition,
  meta: { fingerprint: string; seed: number; hyperKeys: string[]; retired?: RetiredMember[]; extra?: Map<string, Float32Array> },
): Promise<void> {
  const data = `population-${position.step}.bin`;
  // a population's tensors are read one at a time as the writer comes to them (populationSource)
  const { manifest, tensors } = await describeCheckpoint(population, position, { ...meta, data });
  await writeCheckpointFiles(dir, manifest, tensors);
}

/**
 * The buffer first, under a temporary name, read back and checked against its checksums before it is
 * renamed into place, then the manifest naming it; only then do the buffers it supersedes (those of earlier
 * steps) go. A checkpoint that the run could not read back (a buffer that reads back otherwise, an active
 * member's parameter that is not finite, a manifest that is not well formed) is refused before anything
 * is replaced: until the new checkpoint is whole on disk the previous one stays as it was. A buffer of a
 * later step than this one (left by a run killed before its manifest) is not superseded and stays.
 */
export async function writeCheckpointFiles(dir: string, given: ManifestDraft, tensors: Map<string, TensorValues>): Promise<void> {
  const bin = join(dir, given.data);
  const kept = `the checkpoint is not written, and the previous one is kept (population.json names it)`;
  // tensor by tensor, each read (where it is a read), checksummed and written at its offset, then let go:
  // neither the whole population nor a copy of it is on the host at once
  const checksums = new Map<string, string>();
  let manifest: ManifestDraft | undefined;
  await writeAtomicByAsync(
    bin,
    async (fd) => {
      for (const t of given.tensors) {
        const values = tensors.get(t.name)!;
        const hash = createHash('sha256');
        let at = 4 * t.offset;
        const write = (piece: Float32Array) => {
          refuseNonFinite(given, t, piece, at / 4 - t.offset, kept);
          const bytes = tensorBytes(piece);
          hash.update(bytes);
          writeAllSync(fd, bytes, at);
          at += bytes.length;
        };
        if (typeof values === 'function') await values(write);
        else write(values);
        if (at !== 4 * (t.offset + t.length)) throw new Error(`internal error: the checkpoint's tensor ${t.name} came to ${(at / 4) - t.offset} values, not ${t.length}`);
        checksums.set(t.name, hash.digest('hex'));
      }
    },
    (written) => {
      manifest = { ...given, tensors: given.tensors.map((t) => ({ ...t, sha256: checksums.get(t.name)! })) };
      const problem = given.hyperparameters instanceof Array ? manifestProblem(manifest, statSync(written).size / 4) : undefined;
      if (problem) throw new Error(`internal error: the checkpoint's manifest is not well formed: ${problem}`);
      if (!readsBackWhole(written, manifest)) throw new RunError(`the checkpoint buffer ${bin} did not read back as it was written; ${kept}`);
    },
  );
  writeAtomicChunks(join(dir, 'population.json'), manifestChunks(manifest!));
  const step = manifest!.position.step;
  for (const f of readdirSync(dir)) {
    const at = /^population-(\d+)\.bin$/.exec(f);
    if (at && Number(at[1]) < step) rmSync(join(dir, f), { force: true });
  }
}

/**
 * A piece of an active member's parameter (not a stopped member's copy, `NAME@ID`, nor an optimizer slot,
 * `NAME:SLOT`) that holds a NaN or an infinity is refused: readCheckpoint would refuse the checkpoint.
 * `from` is the piece's first value within the tensor.
 */
function refuseNonFinite(manifest: ManifestDraft, t: CheckpointManifest['tensors'][number], piece: Float32Array, from: number, kept: string): void {
  const found = nonFiniteIn(manifest, t, piece, from);
  if (!found) return;
  const whose = found.shared ? "a shared layer's parameter" : `member ${found.member}'s parameter`;
  throw new RunError(`${whose} ${t.name} holds ${found.value}, which a run cannot resume from; ${kept}`);
}

/** Writes all of `bytes` at `position` (writeSync may write less than it is given). */
function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/**
 * Whether the buffer on disk has the manifest's size and every tensor its checksum, read a piece of at
 * most READ_BACK bytes at a time (100,000 members' largest tensor is 16 MB).
 */
function readsBackWhole(bin: string, manifest: Pick<CheckpointManifest, 'tensors'>): boolean {
  const expected = 4 * manifest.tensors.reduce((n, t) => n + t.length, 0);
  if (statSync(bin).size !== expected) return false;
  const fd = openSync(bin, 'r');
  try {
    const scratch = Buffer.allocUnsafe(Math.min(READ_BACK, 4 * Math.max(0, maxOf(manifest.tensors.map((t) => t.length)))));
    return manifest.tensors.every((t) => {
      const hash = createHash('sha256');
      for (let done = 0; done < 4 * t.length; ) {
        const read = readSync(fd, scratch, 0, Math.min(scratch.length, 4 * t.length - done), 4 * t.offset + done);
        if (read === 0) return false;
        hash.update(scratch.subarray(0, read));
        done += read;
      }
      return hash.digest('hex') === t.sha256;
    });
  } finally {
    closeSync(fd);
  }
}

const READ_BACK = 1 << 20;

/** How to get past a damaged checkpoint: there is no other one, so only starting again. */
const startAgain = (dir: string) => `the run cannot continue from it; train it again with --out (netc train FILE --out DIR), or restore ${dir} from a backup`;

export function readCheckpoint(dir: string): { manifest: CheckpointManifest; tensors: Map<string, Float32Array> } {
  const path = join(dir, 'population.json');
  if (!existsSync(path)) throw new RunError(`'${dir}' holds no checkpoint (no population.json)`);
  const manifest = readJson(path) as CheckpointManifest;
  if (manifest?.format !== 'netc-checkpoint-1') throw new RunError(`${path}: unknown format '${manifest?.format}'`);
  const bin = join(dir, String(manifest.data));
  const bytes = typeof manifest.data === 'string' && /^population-\d+\.bin$/.test(manifest.data) && existsSync(bin) ? readFileSync(bin) : undefined;
  const problem = manifestProblem(manifest, (bytes?.length ?? Infinity) / 4);
  if (problem) throw new RunError(`${path} is damaged: ${problem}; ${startAgain(dir)}`);
  if (!bytes) throw new RunError(`${path} names ${manifest.data}, which is missing`);
  const expected = 4 * manifest.tensors.reduce((n, t) => n + t.length, 0);
  if (bytes.length !== expected) throw new RunError(`${bin} has ${plural(bytes.length, 'byte')}, the manifest describes ${expected}; ${startAgain(dir)}`);
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  const damaged = damagedTensor(manifest, view);
  if (damaged !== undefined) throw new RunError(`${bin} is damaged: the values of tensor ${damaged} do not match their checksum in population.json; ${startAgain(dir)}`);
  const tensors = decodeTensors(manifest, view);
  const poisoned = nonFiniteParameter(manifest, tensors);
  if (poisoned) {
    const whose = poisoned.shared ? "a shared layer's parameter" : `member ${poisoned.member}'s parameter`;
    throw new RunError(`${bin} is damaged: ${whose} ${poisoned.tensor} holds a NaN or an infinity, which netc never checkpoints for a member still training; ${startAgain(dir)}`);
  }
  return { manifest, tensors };
}

/** A run brought back to life: its description, checkpoint and a population holding its weights. */
export interface OpenRun {
  info: RunInfo;
  /** run.json's program and IRs, with their hyperparameter table */
  compiled: CompiledRun<RunInfo['program']>;
  manifest: CheckpointManifest;
  population: Population;
}

/**
 * Rebuilds a run's population on `tf`, with the checkpoint's weights, optimizer state and per-member
 * hyperparameters, under the lowering it was trained with (or `lowering`).
 */
export function openRun(dir: string, tf: TF, lowering?: Lowering, checkpoint = readCheckpoint(dir)): OpenRun {
  const info = readRunInfo(dir);
  const { manifest, tensors } = checkpoint;
  if (manifest.fingerprint !== info.fingerprint) throw new RunError(`${dir}: the checkpoint is of another model than run.json describes`);
  const ensemble = lowering && lowering !== info.ensemble.lowering ? widen(info.model, lowering, manifest.members) : { ...info.ensemble, members: manifest.members };
  const position = new Map(manifest.member_ids.map((id, m) => [id, m]));
  const compiled = compiledRun(info.program, info.model, ensemble);
  const population = new Population({
    tf,
    ensemble,
    memberIds: manifest.member_ids,
    seed: manifest.seed,
    optimizer: manifest.optimizer,
    loss: info.program.train?.loss ?? { name: 'mse', args: {} },
    hyper: (key, id) => manifest.hyperparameters[position.get(id)!]?.[key] ?? NaN,
    base: (key) => compiled.hyper.base(key),
    initial: (id) => memberParams(manifest, tensors, position.get(id)!),
  });
  restore(population, manifest, tensors);
  return { info, compiled, manifest, population };
}
