// Import into runs whose population changed while training: halving (members stopped, their weights kept as
// `param@member` tensors) and PBT with halving (members that copied another's weights and hyperparameters,
// next to stopped ones; import into a PBT run with no stopped member is covered by the same test). Import
// changes the one member it names, nothing else in the checkpoint, refuses a stopped member, and the run
// resumes from the result.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { readCheckpoint } from '../src/cli/run-dir.js';
import { memberParams } from '../src/train/checkpoint.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-import-'));

// 6 steps an epoch; trained for 15 of its 24 steps, then imported into and resumed
const RATES = [0.1, 0.2, 0.3, 0.4];
const POPULATION = (schedule: string) => `model m(input: [2]) {
  dense(8, activation: relu)
  drop = dropout(0.5)
  dense(1, activation: sigmoid)
}
ensemble { members: 4 seed: 3 vary lr: [0.01, 0.03, 0.1, 0.3] vary drop.rate: [${RATES.join(', ')}] }
train { data: moons(n: 200) validation: 0.25 loss: binary_crossentropy optimizer: adam batch: 25 epochs: 4 }
${schedule}
`;
const runs = {
  halved: POPULATION('schedule halving { every: 2 epochs, keep: 0.5, metric: val_loss }'),
  pbt: POPULATION('schedule pbt { every: 1 epochs, metric: val_loss, quantile: 0.25 }\nschedule halving { every: 2 epochs, keep: 0.5, metric: val_loss }'),
};

/** A run trained part of the way, with the file it was trained from. */
async function partly(source: string): Promise<{ file: string; run: string; dir: string }> {
  const dir = tmp();
  const file = join(dir, 'm.net');
  writeFileSync(file, source);
  const run = join(dir, 'run');
  const r = await netc('train', file, '--steps', '15', '--backend', 'cpu', '--out', run);
  expect(r.code, r.err).toBe(0);
  return { file, run, dir };
}

/** Every tensor's values as a plain array, except the member at `skip` (population position) of fused ones. */
function othersOf(run: string, skip: number): { manifest: object; values: Record<string, number[]> } {
  const { manifest, tensors } = readCheckpoint(run);
  const values: Record<string, number[]> = {};
  for (const t of manifest.tensors) {
    const all = Array.from(tensors.get(t.name)!);
    // a retired member's tensor holds one member; a fused one holds every active member, member after member
    if (t.name.includes('@')) values[t.name] = all;
    else {
      const size = t.length / manifest.members;
      values[t.name] = [...all.slice(0, skip * size), ...all.slice((skip + 1) * size)];
    }
  }
  const { acc_beta1, acc_beta2, ...rest } = manifest;
  const others = (a: number[]) => a.filter((_, m) => m !== skip);
  // a fused tensor's checksum covers the member imported into too; its values without that member are compared
  const tensorsWithout = manifest.tensors.map(({ sha256, ...t }) => (t.name.includes('@') ? { ...t, sha256 } : t));
  return { manifest: { ...rest, tensors: tensorsWithout, acc_beta1: others(acc_beta1), acc_beta2: others(acc_beta2) }, values };
}

describe.each(Object.entries(runs))('import into a %s run', (kind, source) => {
  it('replaces one active member, leaves every other member and retired tensor as it was, and resumes', async () => {
    const { file, run, dir } = await partly(source);
    const before = readCheckpoint(run).manifest;
    expect(before.retired!.length).toBe(2);
    // under PBT, into a member that has copied another's weights
    const exploited = readFileSync(join(run, 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.event === 'exploit');
    const into = kind === 'pbt' ? exploited.map((e) => e.member as number).find((id) => before.member_ids.includes(id))! : before.member_ids[0];
    expect(into, 'an active member to import into').toBeDefined();
    const from = before.member_ids.find((id) => id !== into)!;
    const m = before.member_ids.indexOf(into);
    expect((await netc('extract', run, '--member', String(from), '--out', join(dir, 'from'), '--backend', 'cpu')).code).toBe(0);
    const untouched = othersOf(run, m);

    const r = await netc('import', join(dir, 'from'), '--into', run, '--member', String(into));
    expect(r.code, r.err).toBe(0);
    const { manifest, tensors } = readCheckpoint(run);
    expect(othersOf(run, m)).toEqual(untouched);
    const imported = memberParams(manifest, tensors, manifest.member_ids.indexOf(from));
    for (const [name, values] of memberParams(manifest, tensors, m)) expect(Array.from(values), name).toEqual(Array.from(imported.get(name)!));
    // the imported member's optimizer state starts afresh
    for (const t of manifest.tensors.filter((t) => t.name.includes(':'))) {
      const size = t.length / manifest.members;
      expect(tensors.get(t.name)!.subarray(m * size, (m + 1) * size).every((v) => v === 0), t.name).toBe(true);
    }
    expect([manifest.acc_beta1[m], manifest.acc_beta2[m]]).toEqual([1, 1]);

    // the run was started with --steps 15, which it keeps: --epochs 4 (the file's) asks for the rest
    const resumed = await netc('train', file, '--resume', run, '--backend', 'cpu', '--epochs', '4');
    expect(resumed.code, resumed.err).toBe(0);
    const after = readCheckpoint(run).manifest;
    expect(after.position.step).toBe(24);
    expect(after.retired!.slice(0, 2)).toEqual(before.retired);
  });
});

describe('import into a stopped member', () => {
  it('is refused with the step it stopped at and how to get its weights, and changes nothing', async () => {
    const { run, dir } = await partly(runs.halved);
    const { manifest } = readCheckpoint(run);
    const [active] = manifest.member_ids;
    const stopped = manifest.retired![0];
    expect((await netc('extract', run, '--member', String(active), '--out', join(dir, 'a'), '--backend', 'cpu')).code).toBe(0);
    const untouched = readCheckpoint(run);
    const r = await netc('import', join(dir, 'a'), '--into', run, '--member', String(stopped.member));
    expect(r.code).toBe(1);
    expect(r.err).toContain(`member ${stopped.member} of ${run} was stopped at step ${stopped.step}`);
    expect(r.err).toContain(`netc extract ${run} --member ${stopped.member}`);
    expect(r.err).not.toContain('    at ');
    const now = readCheckpoint(run);
    expect(now.manifest).toEqual(untouched.manifest);
    expect(now.tensors).toEqual(untouched.tensors);
    // what can be done instead: extract it, with the weights and the dropout rate it stopped with
    expect((await netc('extract', run, '--member', String(stopped.member), '--out', join(dir, 's'), '--backend', 'cpu')).code).toBe(0);
    const layers = JSON.parse(readFileSync(join(dir, 's', 'model.json'), 'utf8')).modelTopology.config.layers as { name: string; config: { rate?: number } }[];
    expect(layers.find((l) => l.name === 'dropout_1')!.config.rate).toBe(RATES[stopped.member]);
    const missing = await netc('import', join(dir, 'a'), '--into', run, '--member', '9');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`${run} has no member 9`);
  });
});
