// embedding's learned positions, which tfjs-layers has no layer for (its reference rule refuses them), held
// to the same computation written out in plain TF.js ops: rows of the member's table at the ids, plus its
// [steps, dim] positions, then flatten and dense; trained by sgd on mse, with tf.grad's gradients (on cpu,
// where TF.js's gather has its gradient), under every lowering.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lowerings } from '../../src/layers/forward.js';
import { initMember } from '../../src/kernels/init.js';
import { build, expectClose, inputBatch, memberRows, randomBatch, tf, useBackend, type Built } from './harness.js';

const MEMBERS = 3;
const BATCH = 4;
const LRS = [0.1, 0.03, 0.2];
const SOURCE = `model m(input: [5]) {\nembedding(7, 3, positions: 5)\nflatten()\ndense(2)\n}\nensemble { seed: 5 vary lr: [${LRS.join(', ')}] }\n`;

/** The member's weights by their short names, as variables. */
function memberVariables(b: Built, m: number): Record<string, tf.Variable> {
  const initial = initMember(b.ir, b.program.ensemble.seed, m);
  return Object.fromEntries(b.ir.params.map((p) => [p.name.split('/')[1], tf.variable(tf.tensor(initial.get(p.name)!, p.shape))]));
}

/** The model written out: flatten(embeddings[ids] + positions) kernel + bias. */
function written(w: Record<string, tf.Variable>, x: tf.Tensor): tf.Tensor {
  const rows = tf.add(tf.gather(w.embeddings, tf.cast(x, 'int32')), w.positions);
  return tf.add(tf.matMul(tf.reshape(rows, [x.shape[0], -1]), w.kernel), w.bias);
}

describe('embedding with positions against the same ops written out, on cpu', () => {
  beforeAll(() => useBackend('cpu'));
  afterAll(() => tf.disposeVariables());

  it.each(lowerings)('forward and three sgd steps: %s', async (lowering) => {
    const b = build(SOURCE, lowering, MEMBERS, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
    const data = Array.from({ length: 3 }, (_, s) => ({ x: inputBatch(b.ir, 100 + s, [BATCH, 5]), y: randomBatch(200 + s, [BATCH, 2]) }));
    const out = b.pop.forward(data[0].x, false);
    const members = Array.from({ length: MEMBERS }, (_, m) => memberVariables(b, m));
    members.forEach((w, m) => expectClose(memberRows(out, m), written(w, data[0].x).dataSync(), `member ${m} forward`));
    for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
    for (const [m, w] of members.entries()) {
      for (const { x, y } of data) {
        const { grads } = tf.variableGrads(() => tf.losses.meanSquaredError(y, written(w, x)) as tf.Scalar, Object.values(w));
        for (const v of Object.values(w)) v.assign(tf.sub(v, tf.mul(grads[v.name], LRS[m])));
      }
      const fused = await b.pop.memberWeights(m);
      for (const [name, v] of Object.entries(w)) expectClose(fused.get(`embedding_1/${name}`) ?? fused.get(`dense_1/${name}`)!, v.dataSync(), `member ${m} ${name}`);
    }
    b.pop.dispose();
  });
});
