// `netc import MODEL_DIR --into RUN --member K [--shared]`: the inverse of extract. An existing
// LayersModel's weights go into member K's slot of the run's checkpoint (a warm start, or seeding PBT);
// that member's optimizer state starts afresh. A shared layer's weights serve every member: they are left
// as they are, and weights that differ from them are refused unless --shared asks to replace them (for
// every member). Names and shapes must match the run's model. Only a member still
// training can be imported into: a stopped member (halving, early stopping, divergence) is a record of
// what it was when it stopped, and nothing would ever train the weights put there. MODEL may also be a
// PyTorch state_dict in a .safetensors file (what `netc extract --format pytorch` writes, or a model trained
// from that model.py), brought back by the inverse of export/'s layout rules.
import { placeMember } from '../kernels/fused.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Span } from '../diagnostics/diagnostic.js';
import { plural } from '../util/plural.js';
import { Messages } from '../diagnostics/messages.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { CheckpointManifest } from '../train/checkpoint.js';
import { readCheckpoint, readRunInfo, RunError, writeCheckpointFiles } from './run-dir.js';
import { ExitCode, type Io } from './io.js';
import { lockRun, type RunLock } from './run-lock.js';
import { decodeSafetensors, SafetensorsError } from '../export/safetensors.js';
import { netcWeights, StateDictError } from '../export/import-state.js';
import type { RunInfo } from './run-dir.js';

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
}

export async function importCommand(modelDir: string, run: string, member: number, io: Io, options: { shared?: boolean } = {}): Promise<number> {
  let lock: RunLock | undefined;
  try {
    const info = readRunInfo(run);
    lock = lockRun(run, 'import');
    const { manifest, tensors } = readCheckpoint(run);
    const m = activePosition(run, manifest, member);
    const incoming = modelDir.endsWith('.safetensors') ? stateDictWeights(modelDir, info, manifest.hyperparameters[m]) : layersModelWeights(modelDir, info, io);
    if (!incoming) return ExitCode.errors;
    const shared = changedSharedWeights(manifest, tensors, incoming);
    if (shared.length && !options.shared) {
      throw new RunError(
        `the model's weights of the shared layers (${shared.join(', ')}) differ from the run's: one set of them serves all ${manifest.members} members, ` +
          `so netc imports only member ${member}'s own weights and leaves them as they are; add --shared to replace them too, for every member (their optimizer state starts afresh)`,
      );
    }
    replaceMember(manifest, tensors, m, incoming);
    manifest.acc_beta1[m] = 1;
    manifest.acc_beta2[m] = 1;
    if (shared.length) replaceShared(manifest, tensors, incoming);
    await writeCheckpointFiles(run, manifest, tensors);
    const also = shared.length ? `; the shared layers' weights are replaced for every member, their optimizer state afresh too` : '';
    io.out(`${modelDir} -> member ${member} of ${run} (step ${manifest.position.step}; its optimizer state starts afresh${also})\n`);
    return ExitCode.ok;
  } catch (e) {
    if (e instanceof RunError) {
      io.err(`netc: ${e.message}\n`);
      return ExitCode.errors;
    }
    throw e;
  } finally {
    lock?.release();
  }
}


/** A .safetensors state_dict's weights in netc's layout; every mistake in it is a RunError naming the file. */
function stateDictWeights(file: string, info: RunInfo, hyperparameters: Record<string, number>): Map<string, Float32Array> {
  if (!existsSync(file) || !statSync(file).isFile()) throw new RunError(`${file} is not a file`);
  try {
    const state = decodeSafetensors(readFileSync(file)).tensors;
    for (const [name, t] of state) {
      const i = t.data instanceof Float32Array ? firstNonFinite(t.data) : -1;
      if (i >= 0) throw new RunError(`${file}: '${name}' holds ${t.data[i]} (value ${i}, counting from 0); netc imports finite weights only, and a run refuses a checkpoint that holds another`);
    }
    return netcWeights(info.model, hyperparameters, state);
  } catch (e) {
    if (e instanceof SafetensorsError || e instanceof StateDictError) throw new RunError(`${file}: ${e.message}`);
    throw e;
  }
}

/** A LayersModel folder's weights, checked against the run's model; undefined after printing its diagnostics. */
function layersModelWeights(modelDir: string, info: RunInfo, io: Io): Map<string, Float32Array> | undefined {
  const modelJson = join(modelDir, 'model.json');
  const text = readModelJson(modelDir, modelJson);
  const sink = new DiagnosticSink(modelJson);
  const at = (name: string) => {
    const i = text.indexOf(`"${name}"`);
    return { start: Math.max(0, i), length: name.length + 2 };
  };
  const { incoming, specs } = readWeights(modelDir, modelJson, parseModelJson(modelJson, text), sink, at);
  if (sink.errorCount) {
    io.err(formatDiagnostics(sink.diagnostics, text) + '\n');
    return undefined;
  }
  const expected = info.model.params.map((p) => p.name);
  for (const spec of specs) {
    const param = info.model.params.find((p) => p.name === spec.name);
    if (!param) sink.report(Messages.CheckpointMismatch, at(spec.name), `the run's model '${info.model.name}' has no weight '${spec.name}'${didYouMean(spec.name, expected)}; its weights are: ${expected.join(', ')}`);
    else if (param.shape.join() !== spec.shape.join()) sink.report(Messages.CheckpointMismatch, at(spec.name), `weight '${spec.name}' has shape [${spec.shape.join(', ')}]; the run's model needs [${param.shape.join(', ')}]`);
  }
  for (const name of expected) if (!incoming.has(name)) sink.report(Messages.CheckpointMismatch, { start: 0, length: 1 }, `the model has no weight '${name}', which the run's model '${info.model.name}' needs`);
  if (sink.errorCount) {
    io.err(formatDiagnostics(sink.diagnostics, text) + '\n');
    return undefined;
  }
  return incoming;
}

type ModelJson = { weightsManifest: { paths: string[]; weights: WeightSpec[] }[] };

/** model.json's text; a missing one is a RunError. */
function readModelJson(modelDir: string, modelJson: string): string {
  if (!existsSync(modelJson)) throw new RunError(`'${modelDir}' holds no model.json`);
  if (!statSync(modelJson).isFile()) throw new RunError(`${modelJson} is not a file`);
  return readFileSync(modelJson, 'utf8');
}

/** model.json parsed and its weightsManifest's form checked: a RunError saying what is wrong otherwise. */
function parseModelJson(modelJson: string, text: string): ModelJson {
  let model: ModelJson;
  try {
    model = JSON.parse(text) as ModelJson;
  } catch (e) {
    throw new RunError(`${modelJson} is not valid JSON (${(e as Error).message}); give the folder of a TF.js LayersModel (model.json and its weight files)`);
  }
  const isGroup = (g: ModelJson['weightsManifest'][number]) =>
    g !== null && typeof g === 'object' && Array.isArray(g.paths) && g.paths.every((p) => typeof p === 'string') && Array.isArray(g.weights) && g.weights.every(isWeightSpec);
  if (model === null || typeof model !== 'object' || !Array.isArray(model.weightsManifest) || !model.weightsManifest.every(isGroup)) {
    throw new RunError(`${modelJson} has no valid weightsManifest (a list of { paths: [file names], weights: [{ name, shape, dtype }] }); it is not a TF.js LayersModel's model.json`);
  }
  return model;
}

const isWeightSpec = (w: WeightSpec): boolean =>
  w !== null && typeof w === 'object' && typeof w.name === 'string' && typeof w.dtype === 'string' && Array.isArray(w.shape) && w.shape.every((d) => Number.isInteger(d) && d >= 0);

/**
 * The weights model.json's groups describe, in manifest order, from the files the groups name. A path that
 * leaves the model's folder, a missing file and a group whose files hold other than the bytes its weights
 * need are reported at the path in model.json.
 */
function readWeights(modelDir: string, modelJson: string, model: ModelJson, sink: DiagnosticSink, at: (name: string) => Span): { incoming: Map<string, Float32Array>; specs: WeightSpec[] } {
  const incoming = new Map<string, Float32Array>();
  const specs: WeightSpec[] = [];
  const named = new Set<string>();
  for (const group of model.weightsManifest) {
    const bytes = groupBytes(modelDir, group, sink, at);
    if (!bytes) continue;
    const need = group.weights.reduce((n, w) => n + 4 * w.shape.reduce((a, b) => a * b, 1), 0);
    if (bytes.length !== need) {
      sink.report(Messages.ModelWeightsFile, at(group.paths[0] ?? 'weightsManifest'), `${group.paths.join(', ')} ${group.paths.length === 1 ? 'holds' : 'hold'} ${plural(bytes.length, 'byte')}; model.json's weights need ${need} (${plural(need / 4, 'float32 value')}): the file is truncated or is not this model's`);
      continue;
    }
    let offset = 0;
    for (const spec of group.weights) {
      const size = spec.shape.reduce((a, b) => a * b, 1);
      if (spec.dtype !== 'float32') throw new RunError(`${modelJson}: weight ${spec.name} is ${spec.dtype}; netc reads float32 weights`);
      const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + 4 * size));
      offset += 4 * size;
      const bad = firstNonFinite(values);
      if (named.has(spec.name)) sink.report(Messages.ModelWeightsFile, at(spec.name), `model.json names the weight '${spec.name}' twice; each weight is named once`);
      else if (bad >= 0) sink.report(Messages.ModelWeightsFile, at(spec.name), `weight '${spec.name}' holds ${values[bad]} (value ${bad}, counting from 0) in ${group.paths.join(', ')}; netc imports finite weights only, and a run refuses a checkpoint that holds another`);
      named.add(spec.name);
      if (bad < 0) {
        incoming.set(spec.name, values);
        specs.push(spec);
      }
    }
  }
  return { incoming, specs };
}

/** A group's files, concatenated; undefined after a diagnostic for a path outside the folder or a missing file. */
function groupBytes(modelDir: string, group: ModelJson['weightsManifest'][number], sink: DiagnosticSink, at: (name: string) => Span): Buffer | undefined {
  const folder = resolve(modelDir);
  const files: Buffer[] = [];
  for (const p of group.paths) {
    const file = resolve(folder, p);
    const inside = relative(folder, file);
    if (isAbsolute(p) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      sink.report(Messages.ModelWeightsFile, at(p), `the weight file '${p}' is outside the model's folder ${modelDir}; model.json may only name files in its own folder`);
      return undefined;
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      sink.report(Messages.ModelWeightsFile, at(p), `the weight file '${p}' is missing from ${modelDir}`);
      return undefined;
    }
    files.push(readFileSync(file));
  }
  return Buffer.concat(files);
}

/** The shared layers' parameters whose incoming values differ from the run's. */
function changedSharedWeights(manifest: CheckpointManifest, tensors: Map<string, Float32Array>, incoming: Map<string, Float32Array>): string[] {
  const differs = (a: Float32Array, b: Float32Array) => a.some((v, i) => !Object.is(v, b[i]));
  return manifest.tensors.filter((t) => t.shared && !t.name.includes(':') && differs(tensors.get(t.name)!, incoming.get(t.name)!)).map((t) => t.name);
}

/** The shared layers' parameters from `incoming`, for every member, with their optimizer slots zeroed and Adam's beta powers reset. */
function replaceShared(manifest: CheckpointManifest, tensors: Map<string, Float32Array>, incoming: Map<string, Float32Array>): void {
  for (const t of manifest.tensors) {
    if (!t.shared) continue;
    const [name, slot] = t.name.split(':');
    if (slot) tensors.get(t.name)!.fill(0);
    else tensors.get(t.name)!.set(incoming.get(name)!);
  }
  manifest.acc_beta_shared = [1, 1];
}

/** Member `member`'s position in the fused tensors; a stopped or unknown member is a RunError saying why. */
function activePosition(run: string, manifest: CheckpointManifest, member: number): number {
  const m = manifest.member_ids.indexOf(member);
  if (m >= 0) return m;
  const active = manifest.member_ids.join(', ');
  const stopped = manifest.retired?.find((r) => r.member === member);
  if (!stopped) throw new RunError(`${run} has no member ${member}; its members still training are ${active}`);
  throw new RunError(
    `member ${member} of ${run} was stopped at step ${stopped.step} (${stopped.reason}); a stopped member trains no more and keeps ` +
      `its weights as they were then, so netc imports only into a member still training: ${active}. ` +
      `The weights it stopped with can still be extracted: netc extract ${run} --member ${member} --out DIR`,
  );
}

/**
 * Puts `incoming` into position m of every fused parameter and zeroes m's optimizer slots. A stopped
 * member's tensors (`param@member`, one member long) are no member's slot and stay as they are, and so
 * do the shared layers' (replaceShared's).
 */
function replaceMember(manifest: CheckpointManifest, tensors: Map<string, Float32Array>, m: number, incoming: Map<string, Float32Array>): void {
  for (const t of manifest.tensors) {
    if (t.name.includes('@') || t.shared) continue;
    const [name, slot] = t.name.split(':');
    const shape = t.shape.slice(1);
    placeMember('stacked', shape, manifest.members, tensors.get(t.name)!, m, slot ? new Float32Array(t.length / manifest.members) : incoming.get(name)!);
  }
}

/** The index of the first NaN or infinity of `values`, or -1. */
function firstNonFinite(values: Float32Array): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return i;
  return -1;
}
