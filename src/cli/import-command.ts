// `netc import MODEL_DIR --into RUN --member K [--shared]`: the inverse of extract. An existing
// LayersModel's weights go into member K's slot of the run's checkpoint (a warm start, or seeding PBT);
// that member's optimizer state starts afresh. A shared layer's weights serve every member: they are left
// as they are, and weights that differ from them are refused unless --shared asks to replace them (for
// every member). Names and shapes must match the run's model. Only a member still
// training can be imported into: a stopped member (halving, early stopping, divergence) is a record of
// what it was when it stopped, and nothing would ever train the weights put there.
import { placeMember } from '../kernels/fused.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Messages } from '../diagnostics/messages.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { CheckpointManifest } from '../train/checkpoint.js';
import { readCheckpoint, readRunInfo, RunError, writeCheckpointFiles } from './run-dir.js';
import { ExitCode, type Io } from './io.js';
import { lockRun, type RunLock } from './run-lock.js';

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
}

export function importCommand(modelDir: string, run: string, member: number, io: Io, options: { shared?: boolean } = {}): number {
  let lock: RunLock | undefined;
  try {
    const info = readRunInfo(run);
    lock = lockRun(run, 'import');
    const { manifest, tensors } = readCheckpoint(run);
    const m = activePosition(run, manifest, member);
    const modelJson = join(modelDir, 'model.json');
    if (!existsSync(modelJson)) throw new RunError(`'${modelDir}' holds no model.json`);
    const text = readFileSync(modelJson, 'utf8');
    const model = JSON.parse(text) as { weightsManifest: { paths: string[]; weights: WeightSpec[] }[] };
    // weights in manifest order, from the files the groups name
    const incoming = new Map<string, Float32Array>();
    const sink = new DiagnosticSink(modelJson);
    const specs: WeightSpec[] = [];
    for (const group of model.weightsManifest) {
      const bytes = Buffer.concat(group.paths.map((p) => readFileSync(join(modelDir, p))));
      let offset = 0;
      for (const spec of group.weights) {
        const size = spec.shape.reduce((a, b) => a * b, 1);
        if (spec.dtype !== 'float32') throw new RunError(`${modelJson}: weight ${spec.name} is ${spec.dtype}; netc reads float32 weights`);
        incoming.set(spec.name, new Float32Array(bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + 4 * size)));
        specs.push(spec);
        offset += 4 * size;
      }
    }
    const at = (name: string) => {
      const i = text.indexOf(`"${name}"`);
      return { start: Math.max(0, i), length: name.length + 2 };
    };
    const expected = info.model.params.map((p) => p.name);
    for (const spec of specs) {
      const param = info.model.params.find((p) => p.name === spec.name);
      if (!param) sink.report(Messages.CheckpointMismatch, at(spec.name), `the run's model '${info.model.name}' has no weight '${spec.name}'${didYouMean(spec.name, expected)}; its weights are: ${expected.join(', ')}`);
      else if (param.shape.join() !== spec.shape.join()) sink.report(Messages.CheckpointMismatch, at(spec.name), `weight '${spec.name}' has shape [${spec.shape.join(', ')}]; the run's model needs [${param.shape.join(', ')}]`);
    }
    for (const name of expected) if (!incoming.has(name)) sink.report(Messages.CheckpointMismatch, { start: 0, length: 1 }, `the model has no weight '${name}', which the run's model '${info.model.name}' needs`);
    if (sink.errorCount) {
      io.err(formatDiagnostics(sink.diagnostics, text) + '\n');
      return ExitCode.errors;
    }
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
    const all = new Float32Array(manifest.tensors.reduce((n, t) => n + t.length, 0));
    for (const t of manifest.tensors) all.set(tensors.get(t.name)!, t.offset);
    writeCheckpointFiles(run, manifest, new Uint8Array(all.buffer));
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
