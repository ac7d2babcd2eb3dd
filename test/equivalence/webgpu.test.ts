// The fused population on the WebGPU backend (Dawn on Mesa's software Vulkan here) against cpu. Never a
// silent pass: without a Vulkan adapter the test is skipped with the reason printed, and with
// NETC_REQUIRE_WEBGPU=1 (set by .ci/run once it installed the driver) a missing adapter fails it.
import { describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/runtime/backend.js';
import { lowerings } from '../../src/layers/forward.js';
import { build, maxRelDiff, randomBatch, tf } from './harness.js';
import { webgpuUnavailable } from '../helpers.js';

const missing = await webgpuUnavailable();
const required = process.env['NETC_REQUIRE_WEBGPU'] === '1';
if (missing && !required) console.warn(`SKIPPED: the fused-population webgpu test did not run: ${missing}`);

const SOURCE = `model m(input: [6, 6, 1]) {
  conv2d(3, kernel: 3, activation: relu)
  maxpool2d(2)
  flatten()
  dense(8, activation: tanh)
  dense(2, activation: softmax)
}
ensemble { seed: 3 vary lr: [0.01, 0.003, 0.03] }
train { data: csv("none.csv") loss: categorical_crossentropy optimizer: adam steps: 5 }
`;

async function trainOn(backend: 'cpu' | 'webgpu', lowering: (typeof lowerings)[number]) {
  await selectBackend(backend, { log: () => {} });
  const b = build(SOURCE, lowering, 3);
  for (let s = 0; s < 5; s++) {
    const x = randomBatch(10 + s, [4, 6, 6, 1]);
    const y = tf.oneHot(tf.tensor1d([0, 1, 1, s % 2], 'int32'), 2).toFloat();
    b.pop.step({ kind: 'tensors', x, y }).dispose();
    tf.dispose([x, y]);
  }
  const weights = await Promise.all([0, 1, 2].map((m) => b.pop.memberWeights(m)));
  b.pop.dispose();
  return weights;
}

describe('webgpu', () => {
  it.skipIf(missing != null && !required).each(lowerings)('trains a fused population as cpu does: %s', async (lowering) => {
    if (missing) throw new Error(`NETC_REQUIRE_WEBGPU=1 but ${missing}`);
    const cpu = await trainOn('cpu', lowering);
    const gpu = await trainOn('webgpu', lowering);
    for (let m = 0; m < 3; m++) {
      for (const [name, values] of cpu[m]) {
        const d = maxRelDiff(gpu[m].get(name)!, values);
        expect(d, `member ${m} ${name}: ${d.toExponential(2)}`).toBeLessThanOrEqual(1e-4);
      }
    }
  }, 60_000);
});
