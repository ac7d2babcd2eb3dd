// The run directory on disk. run.json says what was trained (the .net source, the configuration, the
// ensemble IR and its slicing map), population.json and population-STEP.bin hold the latest checkpoint.
// Every file is written to a temporary name and renamed, and the buffer is written before the manifest
// that names it: a run killed at any moment leaves the previous checkpoint or the new one, never half.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeAtomic } from '../util/write-atomic.js';
import { plural } from '../util/plural.js';
import { join } from 'node:path';
import type { Program } from '../check/program.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { slicingMap, type SlicingMap } from '../ensemble/slicing-map.js';
import { printModelIR } from '../ir/print.js';
import type { ModelIR } from '../ir/model-ir.js';
import { decodeTensors, encodeCheckpoint, memberParams, restore, type CheckpointManifest, type RetiredMember, type StateSource, type TrainPosition } from '../train/checkpoint.js';
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
  const info = JSON.parse(readFileSync(path, 'utf8')) as RunInfo;
  if (info.format !== 'netc-run-1') throw new RunError(`${path}: unknown format '${info.format}'`);
  return info;
}

export async function writeCheckpoint(
  dir: string,
  population: Population | StateSource,
  position: TrainPosition,
  meta: { fingerprint: string; seed: number; hyperKeys: string[]; retired?: RetiredMember[]; extra?: Map<string, Float32Array> },
): Promise<void> {
  const data = `population-${position.step}.bin`;
  const { manifest, bytes } = await encodeCheckpoint(population, position, { ...meta, data });
  writeCheckpointFiles(dir, manifest, bytes);
}

/** The buffer first, then the manifest naming it, then older buffers go. */
export function writeCheckpointFiles(dir: string, manifest: CheckpointManifest, bytes: Uint8Array): void {
  writeAtomic(join(dir, manifest.data), bytes);
  writeAtomic(join(dir, 'population.json'), JSON.stringify(manifest) + '\n');
  for (const f of readdirSync(dir)) if (/^population-\d+\.bin$/.test(f) && f !== manifest.data) rmSync(join(dir, f), { force: true });
}

export function readCheckpoint(dir: string): { manifest: CheckpointManifest; tensors: Map<string, Float32Array> } {
  const path = join(dir, 'population.json');
  if (!existsSync(path)) throw new RunError(`'${dir}' holds no checkpoint (no population.json)`);
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as CheckpointManifest;
  if (manifest.format !== 'netc-checkpoint-1') throw new RunError(`${path}: unknown format '${manifest.format}'`);
  const bin = join(dir, manifest.data);
  if (!existsSync(bin)) throw new RunError(`${path} names ${manifest.data}, which is missing`);
  const bytes = readFileSync(bin);
  const expected = 4 * manifest.tensors.reduce((n, t) => n + t.length, 0);
  if (bytes.length !== expected) throw new RunError(`${bin} has ${plural(bytes.length, 'byte')}, the manifest describes ${expected}`);
  return { manifest, tensors: decodeTensors(manifest, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)) };
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
export function openRun(dir: string, tf: TF, lowering?: Lowering): OpenRun {
  const info = readRunInfo(dir);
  const { manifest, tensors } = readCheckpoint(dir);
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
