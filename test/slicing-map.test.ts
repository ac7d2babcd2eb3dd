// The slicing map is the exact inverse of widening: slicing member i's parameters out of the fused
// tensors, as the map says, gives member i's own weights, under every lowering.
import { describe, expect, it } from 'vitest';
import { lowerings } from '../src/layers/forward.js';
import { slicingMap } from '../src/ensemble/slicing-map.js';
import { initMember } from '../src/runtime/init.js';
import { build, tf, useBackend } from './equivalence/harness.js';

const SRC = `model m(input: [6, 6, 1]) {
  conv2d(3, kernel: 3, activation: relu)
  b = batchnorm()
  flatten()
  dense(4)
  dense(2, activation: softmax)
}
ensemble { seed: 8 }
`;

describe.each(lowerings)('%s', (lowering) => {
  it('slices every member back out of the fused tensors', async () => {
    await useBackend('cpu');
    const b = build(SRC, lowering, 3);
    const map = slicingMap(b.pop.ir);
    expect(map.slices).toHaveLength(3);
    const fused = new Map<string, tf.Tensor>();
    for (const p of b.pop.ir.params) b.pop.variables.get(p.name)!.forEach((v, m) => fused.set(p.layout === 'separate' ? `${p.name}#${m}` : p.name, v));
    for (const t of map.tensors) expect(fused.get(t.name)!.shape, t.name).toEqual(t.shape);
    for (let m = 0; m < 3; m++) {
      const own = initMember(b.ir, 8, m);
      for (const [name, slice] of Object.entries(map.slices[m])) {
        const values = tf.tidy(() => tf.reshape(tf.slice(fused.get(slice.tensor)!, slice.begin, slice.size), slice.shape).dataSync());
        expect(Array.from(values), `member ${m} ${name}`).toEqual(Array.from(own.get(name)!));
      }
    }
    b.pop.dispose();
  });
});
