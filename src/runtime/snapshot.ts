// The population's state on disk, independent of the lowering: each parameter as [N, ...shape], member
// after member, in one little-endian float32 file, described by a JSON manifest. Written to a temporary
// name and renamed, so a reader never sees half a file.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Population } from './population.js';

export interface SnapshotManifest {
  format: 'netc-population-1';
  model: string;
  lowering: string;
  members: number;
  member_ids: number[];
  step: number;
  seed: number;
  /** per member, in population order: hyperparameter key -> value */
  hyperparameters: Record<string, number>[];
  params: { name: string; shape: number[]; offset: number; length: number; trainable: boolean }[];
}

export function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

export async function writeSnapshot(dir: string, population: Population, seed: number, hyperKeys: string[]): Promise<SnapshotManifest> {
  mkdirSync(dir, { recursive: true });
  const members = await Promise.all(population.memberIds.map((_, m) => population.memberWeights(m)));
  const params: SnapshotManifest['params'] = [];
  const chunks: Float32Array[] = [];
  let offset = 0;
  for (const p of population.ir.params) {
    const size = p.shape.reduce((a, b) => a * b, 1);
    for (const m of members) chunks.push(m.get(p.name)!);
    params.push({ name: p.name, shape: [population.n, ...p.shape], offset, length: size * population.n, trainable: p.trainable });
    offset += size * population.n;
  }
  const all = new Float32Array(offset);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  const manifest: SnapshotManifest = {
    format: 'netc-population-1',
    model: population.ir.model.name,
    lowering: population.ir.lowering,
    members: population.n,
    member_ids: population.memberIds,
    step: population.step,
    seed,
    hyperparameters: population.memberIds.map((id) => Object.fromEntries(hyperKeys.map((k) => [k, population.spec.hyper(k, id)]))),
    params,
  };
  writeAtomic(join(dir, 'weights.bin'), new Uint8Array(all.buffer));
  writeAtomic(join(dir, 'population.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}
