// Widened == stack of singles, for every layer kind and every lowering: the fused forward pass of
// member i equals member i's own tfjs-layers model on the same input.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lowerings } from '../../src/layers/forward.js';
import { alone, aloneFused, backends, build, expectClose, hasLayersReference, inputBatch, memberRows, randomBatch, tf, useBackend, type Built } from './harness.js';

import { layerCases, source } from './cases.js';

const MEMBERS = 3;
const BATCH = 4;

/** Member m's output as its own tfjs-layers model computes it. */
function layersForward(b: Built, m: number, x: tf.Tensor, training: boolean): Float32Array {
  const model = alone(b, m);
  const expected = (model.apply(x, { training }) as tf.Tensor).dataSync() as Float32Array;
  model.dispose();
  return expected;
}

/** Member m's output as a run of it alone computes it (a model that tfjs-layers cannot express). */
function fusedForward(text: string, m: number, x: tf.Tensor, training: boolean): Float32Array {
  const one = aloneFused(text, m, MEMBERS);
  const out = one.pop.forward(x, training);
  const expected = memberRows(out, 0);
  out.dispose();
  one.pop.dispose();
  return expected;
}

describe.each(backends)('forward on %s', (backend) => {
  beforeAll(() => useBackend(backend));
  afterAll(() => tf.disposeVariables());
  for (const [name, c] of Object.entries(layerCases)) {
    describe(name, () => {
      it.each(lowerings)('%s', (lowering) => {
        const b = build(source(c), lowering, MEMBERS);
        const x = inputBatch(b.ir, 1, [BATCH, ...c.input]);
        const trainingModes = name.startsWith('batchnorm') ? [false, true] : [false];
        for (const training of trainingModes) {
          const out = b.pop.forward(x, training);
          for (let m = 0; m < MEMBERS; m++) {
            const expected = hasLayersReference(b) ? layersForward(b, m, x, training) : fusedForward(source(c), m, x, training);
            expectClose(memberRows(out, m), expected, `member ${m} (${training ? 'training' : 'inference'})`);
          }
          out.dispose();
        }
        x.dispose();
        b.pop.dispose();
      });
    });
  }
});
