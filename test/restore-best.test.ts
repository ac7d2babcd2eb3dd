// Early stopping with restore_best: a member that stops retires with the parameters it had at the epoch end
// where its metric was best (checked against a run stopped by --steps at that epoch), and with that
// epoch's metrics; the copies kept along the way travel in checkpoints, so a resumed run ends the same, and
// a population trained in waves keeps the same copies.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { readCheckpoint } from '../src/cli/run-dir.js';
import { memberParams, retiredMembers } from '../src/train/checkpoint.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-best-'));
async function netc(...argv: string[]) {
  let err = '';
  const code = await main(argv, { out: () => {}, err: (t) => void (err += t) });
  return { code, err };
}
const bytes = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

// 200 training examples in batches of 20: 10 steps an epoch; large rates make some members' val_loss turn up
const source = (restore: boolean) => `model m(input: [2]) {
  dense(16, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 6 seed: 2 vary lr: [0.3, 0.01, 1, 0.1, 3, 0.03] }
train { data: moons(n: 250, noise: 0.3) validation: 0.2 loss: binary_crossentropy optimizer: adam batch: 20 epochs: 8 metrics: [accuracy] }
schedule early_stopping { metric: val_loss, patience: 2, restore_best: ${restore} }
`;

/** Each stopped member and the step of its best epoch: the last epoch whose val_loss beat every earlier one. */
function bestSteps(dir: string): Map<number, { step: number; row: Record<string, number> }> {
  const rows = lines(join(dir, 'metrics.jsonl'));
  const stopped = lines(join(dir, 'events.jsonl')).filter((e) => e.event === 'stop' && e.reason.startsWith('early stopping'));
  return new Map(
    stopped.map((e) => {
      let best = { step: 0, row: {} as Record<string, number>, value: Infinity };
      for (const row of rows.filter((r) => r.member === e.member)) if (row.val_loss < best.value) best = { step: row.step, row, value: row.val_loss };
      return [e.member, best];
    }),
  );
}

describe('early stopping with restore_best', () => {
  const dir = tmp();
  const file = join(dir, 'best.net');
  writeFileSync(file, source(true));
  const straight = join(dir, 'straight');

  it("a stopped member keeps the weights of its best epoch, equal to a run stopped by --steps there, and that epoch's metrics", async () => {
    const r = await netc('train', file, '--backend', 'cpu', '--out', straight);
    expect(r.code, r.err).toBe(0);
    const best = bestSteps(straight);
    expect(best.size).toBeGreaterThan(0);
    const { manifest, tensors } = readCheckpoint(straight);
    const retired = new Map(retiredMembers(manifest, tensors).map((m) => [m.member, m]));
    const summary = JSON.parse(readFileSync(join(straight, 'summary.json'), 'utf8'));
    for (const [member, { step, row }] of best) {
      const gone = retired.get(member)!;
      expect(gone.reason).toContain(`it keeps the weights of step ${step}, its best`);
      // one run per distinct best step
      const cut = join(dir, `steps-${step}`);
      if (!existsSync(cut)) expect((await netc('train', file, '--backend', 'cpu', '--steps', String(step), '--out', cut)).code).toBe(0);
      const at = readCheckpoint(cut);
      const there = memberParams(at.manifest, at.tensors, at.manifest.member_ids.indexOf(member));
      for (const [name, values] of there) expect(bytes(gone.params.get(name)!).equals(bytes(values)), `member ${member} ${name}`).toBe(true);
      const shown = summary.per_member.find((m: { member: number }) => m.member === member);
      expect(shown.metrics.val_loss).toBe(row.val_loss);
    }
  });

  it('without restore_best a stopped member keeps its last weights', async () => {
    const plain = join(dir, 'plain');
    writeFileSync(join(dir, 'plain.net'), source(false));
    expect((await netc('train', join(dir, 'plain.net'), '--backend', 'cpu', '--out', plain)).code).toBe(0);
    const { manifest, tensors } = readCheckpoint(plain);
    const [gone] = retiredMembers(manifest, tensors).filter((m) => m.reason.startsWith('early stopping'));
    expect(gone.reason).not.toContain('keeps the weights');
    const kept = retiredMembers(readCheckpoint(straight).manifest, readCheckpoint(straight).tensors).find((m) => m.member === gone.member)!;
    const same = [...gone.params].every(([name, v]) => bytes(v).equals(bytes(kept.params.get(name)!)));
    expect(same).toBe(false);
  });

  it('trained in waves (the population in host memory), it keeps the same copies', async () => {
    const waves = join(dir, 'waves');
    expect((await netc('train', file, '--backend', 'cpu', '--resident', '2', '--out', waves)).code).toBe(0);
    const read = (d: string, name: string) => readFileSync(join(d, name));
    const manifest = JSON.parse(read(straight, 'population.json').toString());
    for (const name of ['population.json', manifest.data, 'events.jsonl']) expect(read(waves, name).equals(read(straight, name)), name).toBe(true);
  });

  it.each([25, 40])('stopped at step %i and resumed, it ends byte-identical, kept copies and all', async (stop) => {
    const stopped = join(dir, `stopped-${stop}`);
    expect((await netc('train', file, '--backend', 'cpu', '--steps', String(stop), '--out', stopped)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(stopped, 'population.json'), 'utf8')).position.best.length).toBeGreaterThan(0);
    // a run started with --steps keeps that budget: the file's own is asked for again
    const r = await netc('train', file, '--backend', 'cpu', '--resume', stopped, '--epochs', '8');
    expect(r.code, r.err).toBe(0);
    const read = (d: string, name: string) => readFileSync(join(d, name));
    const manifest = JSON.parse(read(straight, 'population.json').toString());
    for (const name of ['population.json', manifest.data, 'events.jsonl', 'metrics.jsonl']) expect(read(stopped, name).equals(read(straight, name)), name).toBe(true);
  });
});
