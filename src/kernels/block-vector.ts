// blockdiag's per-member values: a hyperparameter (momentum, leaky_relu's alpha, ...) laid out to
// broadcast against the blockdiag layout [.., N*C], each member's value over its own C channels.
import type { TF, Tensor } from './tf.js';
import { kernel } from './kernel.js';

/** Per-member values repeated over each member's `width` channels: broadcasts against [.., N*width]. */
function blockVectorKernel(tf: TF, values: number[], width: number): Tensor {
  const out = new Float32Array(values.length * width);
  values.forEach((v, i) => out.fill(v, i * width, (i + 1) * width));
  return tf.tensor1d(out);
}

// a kernel: one opaque call in a traced step (src/kernels/kernel.ts)
export const blockVector = kernel('blockVector', blockVectorKernel, { values: [1] });
