// Widened == stack of singles, for every layer kind and every lowering: the fused forward pass of
// member i equals member i's own tfjs-layers model on the same input.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lowerings } from '../../src/layers/forward.js';
import { alone, backends, build, expectClose, inputBatch, memberRows, tf, useBackend } from './harness.js';

import { layerCases, source } from './cases.js';

const MEMBERS = 3;
const BATCH = 4;

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
            const model = alone(b, m);
            const expected = (model.apply(x, { training }) as tf.Tensor).dataSync();
            expectClose(memberRows(out, m), expected, `member ${m} (${training ? 'training' : 'inference'})`);
            model.dispose();
          }
          out.dispose();
        }
        x.dispose();
        b.pop.dispose();
      });
    });
  }
});
