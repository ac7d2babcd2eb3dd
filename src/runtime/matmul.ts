// matMul with gradients that never use the transposed-operand forms of BatchMatMul: on the wasm
// backend `matMul(a, b, true, false)` runs about 2.5x slower than transposing `a` first and multiplying
// plainly (measured on [784, 64] x [64, 1024]; see bench/NOTES.md). Same values, cheaper backward.
import type { TF, Tensor } from './tf.js';

type GradFunc = Parameters<TF['customGrad']>[0];

/** Swaps the last two axes. */
function swap(tf: TF, t: Tensor): Tensor {
  const perm = t.shape.map((_, i) => i);
  [perm[t.rank - 2], perm[t.rank - 1]] = [perm[t.rank - 1], perm[t.rank - 2]];
  return tf.transpose(t, perm);
}

/** a [..., M, K] x b [..., K, N] with the same leading axes, differentiable in both. */
export function matMul(tf: TF, a: Tensor, b: Tensor): Tensor {
  const f = tf.customGrad(((x: Tensor, w: Tensor, save: (ts: Tensor[]) => void) => {
    save([x, w]);
    return {
      value: tf.matMul(x, w),
      gradFunc: (dy: Tensor, [xs, ws]: Tensor[]) => [tf.matMul(dy, swap(tf, ws)), tf.matMul(swap(tf, xs), dy)],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (x: Tensor, w: Tensor) => Tensor)(a, b);
}

/** a x b where a is data: only b gets a gradient (the first layer's input needs none). */
export function matMulOfData(tf: TF, a: Tensor, b: Tensor): Tensor {
  const f = tf.customGrad(((w: Tensor, save: (ts: Tensor[]) => void) => {
    // the transposed data is made and saved inside, so it lives until the backward pass
    const at = swap(tf, a);
    save([at]);
    return { value: tf.matMul(a, w), gradFunc: (dy: Tensor, [ats]: Tensor[]) => [tf.matMul(ats, dy)] };
  }) as unknown as GradFunc);
  return (f as unknown as (w: Tensor) => Tensor)(b);
}
