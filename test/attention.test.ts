// attention's rules beyond the equivalence cases: a causal layer's step never reads a later step, and a
// `shared` attention layer (one set of projections, the members' rows folded into one batch) computes and
// trains as the loop lowering's one-member-at-a-time `single` rule does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, expectClose, memberRows, randomBatch, tf, useBackend } from './equivalence/harness.js';

const model = (layers: string, input = [4, 4]) => `model m(input: [${input.join(', ')}]) {\n${layers}\n}\nensemble { seed: 4 vary lr: [0.1, 0.05] }\n`;

beforeAll(() => useBackend('cpu'));
afterAll(() => tf.disposeVariables());

describe('attention', () => {
  it.each(['grouped', 'blockdiag'] as const)('causal: a step reads itself and the steps before it only (%s)', (lowering) => {
    const b = build(model('attention(2, causal: true)'), lowering, 2);
    const x = randomBatch(1, [3, 4, 4]);
    // the last step changed: every earlier step's output stays as it was, the last one's moves
    const changed = tf.concat([tf.slice(x, [0, 0, 0], [3, 3, 4]), tf.add(tf.slice(x, [0, 3, 0], [3, 1, 4]), 1)], 1);
    const [a, c] = [b.pop.forward(x, false), b.pop.forward(changed, false)];
    const steps = (t: tf.Tensor, from: number, size: number) => tf.slice(t, [0, 0, from, 0], [2, 3, size, 4]).dataSync();
    expectClose(steps(c, 0, 3), steps(a, 0, 3), 'the steps before the changed one');
    expect(Math.max(...Array.from(tf.abs(tf.sub(c, a)).dataSync()))).toBeGreaterThan(1e-3);
    b.pop.dispose();
  });

  it.each(['grouped', 'blockdiag'] as const)('shared: one set of projections for every member, as the loop lowering computes it (%s)', async (lowering) => {
    const layers = 'dense(4)\nshared attention(2)\nflatten()\ndense(2)';
    const [fused, loop] = [build(model(layers), lowering, 2, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' }), build(model(layers), 'loop', 2, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' })];
    for (let s = 0; s < 2; s++) {
      const [x, y] = [randomBatch(10 + s, [3, 4, 4]), randomBatch(20 + s, [3, 2])];
      const [a, c] = [fused.pop.forward(x, false), loop.pop.forward(x, false)];
      for (let m = 0; m < 2; m++) expectClose(memberRows(a, m), memberRows(c, m), `step ${s}, member ${m}'s output`);
      for (const p of [fused, loop]) p.pop.step({ kind: 'tensors', x, y }).dispose();
    }
    for (let m = 0; m < 2; m++) {
      const [w, v] = [await fused.pop.memberWeights(m), await loop.pop.memberWeights(m)];
      for (const [name, values] of v) expectClose(w.get(name)!, values, `member ${m}'s ${name} after two steps`);
    }
    fused.pop.dispose();
    loop.pop.dispose();
  });
});
