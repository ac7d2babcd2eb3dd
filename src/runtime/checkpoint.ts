// The population's whole state as one manifest and one float32 buffer, independent of the lowering:
// parameters and optimizer slots as [N, ...shape], each member's hyperparameters, Adam's running beta
// powers, the step, and the data position with the running sums of the current epoch. Together with
// the seed (which names every random stream) that is all a resumed run needs to continue bit for bit.
import type { Population } from './population.js';

export interface TrainPosition {
  /** optimizer steps taken */
  step: number;
  /** the next batch: epoch (from 0) and batch index within it */
  epoch: number;
  batch: number;
  /** the current epoch's example-weighted metric sums so far, and how many examples they cover */
  sums?: { count: number; values: Record<string, number[]> };
}

export interface CheckpointManifest {
  format: 'netc-checkpoint-1';
  model: string;
  /** identifies the model IR: a checkpoint only restores into the same architecture */
  fingerprint: string;
  members: number;
  member_ids: number[];
  lowering: string;
  seed: number;
  optimizer: string;
  position: TrainPosition;
  acc_beta1: number[];
  acc_beta2: number[];
  /** per member (population order): every hyperparameter key -> value */
  hyperparameters: Record<string, number>[];
  /** the buffer's file, next to the manifest */
  data: string;
  tensors: { name: string; shape: number[]; offset: number; length: number }[];
}

export async function encodeCheckpoint(
  population: Population,
  position: TrainPosition,
  meta: { fingerprint: string; seed: number; hyperKeys: string[]; data: string },
): Promise<{ manifest: CheckpointManifest; bytes: Uint8Array }> {
  const state = await population.exportState();
  const tensors: CheckpointManifest['tensors'] = [];
  let offset = 0;
  for (const [name, values] of state) {
    const own = population.ir.params.find((p) => p.name === name.split(':')[0])!.shape;
    tensors.push({ name, shape: [population.n, ...own], offset, length: values.length });
    offset += values.length;
  }
  const all = new Float32Array(offset);
  for (const t of tensors) all.set(state.get(t.name)!, t.offset);
  const manifest: CheckpointManifest = {
    format: 'netc-checkpoint-1',
    model: population.ir.model.name,
    fingerprint: meta.fingerprint,
    members: population.n,
    member_ids: population.memberIds,
    lowering: population.ir.lowering,
    seed: meta.seed,
    optimizer: population.spec.optimizer,
    position,
    acc_beta1: population.state.accBeta1,
    acc_beta2: population.state.accBeta2,
    hyperparameters: population.memberIds.map((id) => Object.fromEntries(meta.hyperKeys.map((k) => [k, population.spec.hyper(k, id)]))),
    data: meta.data,
    tensors,
  };
  return { manifest, bytes: new Uint8Array(all.buffer) };
}

/** The tensors of a checkpoint's buffer, by name. */
export function decodeTensors(manifest: CheckpointManifest, bytes: Uint8Array): Map<string, Float32Array> {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const all = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  return new Map(manifest.tensors.map((t) => [t.name, all.subarray(t.offset, t.offset + t.length)]));
}

/** Puts a checkpoint back into a freshly built population of the same model and members. */
export function restore(population: Population, manifest: CheckpointManifest, tensors: Map<string, Float32Array>): void {
  population.importState(tensors);
  population.step = manifest.position.step;
  population.state.accBeta1 = [...manifest.acc_beta1];
  population.state.accBeta2 = [...manifest.acc_beta2];
}

/** Member m's own parameters from a checkpoint, by name. */
export function memberParams(manifest: CheckpointManifest, tensors: Map<string, Float32Array>, m: number): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const t of manifest.tensors) {
    if (t.name.includes(':')) continue;
    const size = t.length / manifest.members;
    out.set(t.name, tensors.get(t.name)!.slice(m * size, (m + 1) * size));
  }
  return out;
}
