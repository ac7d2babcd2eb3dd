// Gathering along the member axis (PBT's exploit, compaction of stopped members) under every lowering:
// a gathered member continues exactly as it would have in its original population.
import { describe, expect, it } from 'vitest';
import { lowerings } from '../src/layers/forward.js';
import { build, randomBatch, tf, useBackend } from './equivalence/harness.js';

const SRC = `model m(input: [5, 5, 1]) {
  conv2d(2, kernel: 3, activation: relu)
  flatten()
  drop = dropout(0.2)
  dense(4, activation: tanh)
  batchnorm()
  dense(3, activation: softmax)
}
ensemble { seed: 12 vary lr: [0.01, 0.02, 0.005, 0.03] }
train { data: csv("none.csv") loss: categorical_crossentropy optimizer: adam steps: 6 }
`;

const batches = () =>
  Array.from({ length: 6 }, (_, s) => ({ x: randomBatch(20 + s, [4, 5, 5, 1]), y: tf.oneHot(tf.tensor1d([0, 1, 2, s % 3], 'int32'), 3).toFloat() }));

describe.each(lowerings)('%s', (lowering) => {
  it('a compacted population continues exactly as the full one', async () => {
    await useBackend('cpu');
    const data = batches();
    const full = build(SRC, lowering, 4);
    for (const { x, y } of data.slice(0, 3)) full.pop.step({ kind: 'tensors', x, y }).dispose();
    const kept = full.pop.gather([3, 1]);
    expect(kept.memberIds).toEqual([3, 1]);
    for (const { x, y } of data.slice(3)) {
      full.pop.step({ kind: 'tensors', x, y }).dispose();
      kept.step({ kind: 'tensors', x, y }).dispose();
    }
    const a = await full.pop.exportState();
    const b = await kept.exportState();
    for (const [name, values] of a) {
      const size = values.length / 4;
      const expected = [...values.slice(3 * size, 4 * size), ...values.slice(size, 2 * size)];
      expect(Array.from(b.get(name)!), name).toEqual(expected);
    }
    full.pop.dispose();
    kept.dispose();
  });

  it('a member takes another member\'s weights and optimizer state (PBT exploit)', async () => {
    await useBackend('cpu');
    const data = batches();
    const b = build(SRC, lowering, 4);
    for (const { x, y } of data.slice(0, 2)) b.pop.step({ kind: 'tensors', x, y }).dispose();
    const copied = b.pop.gather([0, 0, 2, 0], [0, 1, 2, 3]);
    expect(copied.memberIds).toEqual([0, 1, 2, 3]);
    const state = await copied.exportState();
    for (const [name, values] of state) {
      const size = values.length / 4;
      expect(Array.from(values.slice(size, 2 * size)), name).toEqual(Array.from(values.slice(0, size)));
      expect(Array.from(values.slice(3 * size)), name).toEqual(Array.from(values.slice(0, size)));
    }
    expect(copied.state.accBeta1[1]).toBe(b.pop.state.accBeta1[0]);
    b.pop.dispose();
    copied.dispose();
  });
});
