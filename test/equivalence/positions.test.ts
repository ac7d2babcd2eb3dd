// embedding's learned positions, which tfjs-layers has no layer for (its reference rule refuses them), held
// to the same computation written out in plain TF.js ops: rows of the member's table at the ids, plus its
// [steps, dim] positions, then flatten and dense; trained by sgd on mse, with tf.grad's gradients (on cpu,
// where TF.js's gather has its gradient), under every lowering; and netc's population trained on wasm, whose
// gather gradient is netc's own scatter (TF.js has none there), to the same weights.
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

  const batches = (b: Built) => Array.from({ length: 3 }, (_, s) => ({ x: inputBatch(b.ir, 100 + s, [BATCH, 5]), y: randomBatch(200 + s, [BATCH, 2]) }));

  /** Each member's weights by short name after the batches, trained by the written-out model. */
  function writtenTrained(b: Built, data: { x: tf.Tensor; y: tf.Tensor }[]): Record<string, Float32Array>[] {
    return Array.from({ length: MEMBERS }, (_, m) => {
      const w = memberVariables(b, m);
      for (const { x, y } of data) {
        const { grads } = tf.variableGrads(() => tf.losses.meanSquaredError(y, written(w, x)) as tf.Scalar, Object.values(w));
        for (const v of Object.values(w)) v.assign(tf.sub(v, tf.mul(grads[v.name], LRS[m])));
      }
      return Object.fromEntries(Object.entries(w).map(([name, v]) => [name, v.dataSync() as Float32Array]));
    });
  }

  async function expectTrained(b: Built, expected: Record<string, Float32Array>[]) {
    for (const [m, w] of expected.entries()) {
      const fused = await b.pop.memberWeights(m);
      for (const [name, v] of Object.entries(w)) expectClose(fused.get(`embedding_1/${name}`) ?? fused.get(`dense_1/${name}`)!, v, `member ${m} ${name}`);
    }
  }

  it.each(lowerings)('forward and three sgd steps: %s', async (lowering) => {
    const b = build(SOURCE, lowering, MEMBERS, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
    const data = batches(b);
    const out = b.pop.forward(data[0].x, false);
    for (let m = 0; m < MEMBERS; m++) expectClose(memberRows(out, m), written(memberVariables(b, m), data[0].x).dataSync(), `member ${m} forward`);
    for (const { x, y } of data) b.pop.step({ kind: 'tensors', x, y }).dispose();
    await expectTrained(b, writtenTrained(b, data));
    b.pop.dispose();
  });

  // dropout's value is each member's own ([N, B, T] grouped, [B, N*T] blockdiag), and at inference the ids themselves
  it.each(lowerings)("on each member's own ids (after a dropout, at inference): %s", (lowering) => {
    const b = build(SOURCE.replace('embedding(', 'dropout(0.5)\nembedding('), lowering, MEMBERS);
    // ids in [0, 7) (the input's reader is the dropout, which holds no token ids of its own)
    const x = tf.tensor(Array.from({ length: BATCH * 5 }, (_, i) => (i * 5) % 7), [BATCH, 5]);
    const out = b.pop.forward(x, false);
    for (let m = 0; m < MEMBERS; m++) expectClose(memberRows(out, m), written(memberVariables(b, m), x).dataSync(), `member ${m} forward`);
    b.pop.dispose();
  });

  it('netc trains it on wasm, where TF.js has no gather gradient', async () => {
    const reference = build(SOURCE, 'grouped', MEMBERS);
    const expected = writtenTrained(reference, batches(reference));
    reference.pop.dispose();
    await useBackend('wasm');
    const b = build(SOURCE, 'grouped', MEMBERS, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
    for (const { x, y } of batches(b)) b.pop.step({ kind: 'tensors', x, y }).dispose();
    await expectTrained(b, expected);
    b.pop.dispose();
    await useBackend('cpu');
  });
});
