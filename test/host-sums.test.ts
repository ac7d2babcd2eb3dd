// HostSums adds a whole batch at once into one Float64Array per metric; what it keeps must be what the
// sums of one object per member kept (the reference below, as the trainer had it): the same means and the
// same checkpoint JSON, bit for bit, through batches of changing members, non-finite losses, clears and
// restores from a checkpoint's sums.
import { describe, expect, it } from 'vitest';
import type { SumsState } from '../src/train/checkpoint.js';
import { HostSums } from '../src/train/member-metrics.js';
import { Rng } from '../src/util/rng.js';

/** One object per member, each metric summed as `(sum ?? 0) + value * size`. */
class Reference {
  private sums = new Map<number, { values: Record<string, number>; count: number }>();
  constructor(from?: SumsState) {
    if (!from?.ids) return;
    from.ids.forEach((id, i) => this.sums.set(id, { values: Object.fromEntries(Object.entries(from.values).map(([name, v]) => [name, v[i] ?? 0])), count: from.counts?.[i] ?? from.count }));
  }
  addBatch(ids: number[], values: Record<string, ArrayLike<number>>, size: number): void {
    ids.forEach((id, m) => {
      if (!Number.isFinite(values.loss[m])) return;
      const s = this.sums.get(id) ?? { values: {}, count: 0 };
      for (const [name, v] of Object.entries(values)) s.values[name] = (s.values[name] ?? 0) + v[m] * size;
      s.count += size;
      this.sums.set(id, s);
    });
  }
  mean(id: number, names: readonly string[]): Record<string, number> {
    const s = this.sums.get(id);
    return Object.fromEntries(names.map((name) => [name, s && s.count && s.values[name] !== undefined ? s.values[name] / s.count : NaN]));
  }
  clear(): void {
    this.sums.clear();
  }
  toJSON(): SumsState {
    const ids = [...this.sums.keys()];
    const v = ids.map((id) => this.sums.get(id)!);
    const names = [...new Set(v.flatMap((x) => Object.keys(x.values)))];
    return { count: v[0]?.count ?? 0, ids, counts: v.map((x) => x.count), values: Object.fromEntries(names.map((name) => [name, v.map((x) => x.values[name] ?? 0)])) };
  }
}

const NAMES = ['loss', 'accuracy', 'mae'];

/** A batch of float32 values for these members; now and then a non-finite loss or a NaN metric. */
function batch(rng: Rng, n: number): Record<string, Float32Array> {
  const value = (name: string) => {
    const r = rng.uniform();
    if (name === 'loss' && r < 0.03) return r < 0.015 ? NaN : Infinity;
    if (name === 'mae' && r < 0.02) return NaN;
    return rng.uniform() * 10 ** Math.floor(rng.uniform() * 6 - 3);
  };
  return Object.fromEntries(NAMES.map((name) => [name, Float32Array.from({ length: n }, () => value(name))]));
}

describe('HostSums', () => {
  it('keeps the means and checkpoint JSON of per-member sums, bit for bit', () => {
    const rng = Rng.of(3, 'host-sums');
    let sums = new HostSums();
    let reference = new Reference();
    let ids = [4, 0, 7, 2, 9, 1, 3];
    for (let step = 0; step < 400; step++) {
      const values = batch(rng, ids.length);
      const size = 1 + Math.floor(rng.uniform() * 64);
      sums.addBatch(ids, values, size);
      reference.addBatch(ids, values, size);
      // halving drops members, a new wave brings others, an epoch ends, a run resumes from its checkpoint
      if (step % 97 === 96) ids = ids.filter((_, m) => m % 2 === 0);
      if (step % 61 === 60) ids = [...ids, 11 + step];
      if (step % 37 === 36) [sums, reference].forEach((s) => s.clear());
      if (step % 150 === 149) [sums, reference] = [new HostSums(), new Reference()];
      if (step % 43 === 42) [sums, reference] = [new HostSums(JSON.parse(JSON.stringify(sums))), new Reference(JSON.parse(JSON.stringify(reference)))];
      expect(JSON.stringify(sums), `step ${step}`).toBe(JSON.stringify(reference));
    }
    for (const id of [...ids, 4, 7, 9, 1, 3, 100]) expect(sums.mean(id, [...NAMES, 'mse']), `member ${id}`).toEqual(reference.mean(id, [...NAMES, 'mse']));
    // the comparison had something to compare: sums of many batches, of every member
    expect(sums.toJSON().ids!.length).toBeGreaterThan(3);
    expect(sums.toJSON().counts!.every((c) => c > 100)).toBe(true);
  });

  it('a member whose loss is not finite is left out of that batch, its count too', () => {
    const sums = new HostSums();
    sums.addBatch([5, 6], { loss: [1, NaN], accuracy: [0.5, 1] }, 4);
    sums.addBatch([5, 6], { loss: [3, 2], accuracy: [1, 0] }, 2);
    expect(sums.mean(5, ['loss', 'accuracy'])).toEqual({ loss: (4 + 6) / 6, accuracy: (2 + 2) / 6 });
    expect(sums.mean(6, ['loss', 'accuracy'])).toEqual({ loss: 2, accuracy: 0 });
    expect(sums.mean(7, ['loss'])).toEqual({ loss: NaN });
    sums.clear();
    expect(sums.toJSON()).toEqual({ count: 0, ids: [], counts: [], values: {} });
  });
});
