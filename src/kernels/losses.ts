// Losses and metrics per member, on member-first predictions [N, B, K] against labels shared by all
// members, [B, K], or each member's own, [N, B, K] (members trained on their own examples). Each returns
// one value per member, [N]: the mean over the batch, as Keras computes it on probabilities (clipped to
// [eps, 1 - eps]); the example* forms return each example's value, [N, B].
import type { TF, Tensor } from './tf.js';
import { kernel } from './kernel.js';

type GradFunc = Parameters<TF['customGrad']>[0];

const EPS = 1e-7;

/**
 * yTrue is [B, K] (binary/onehot/values) or [B, 1] class indices (sparse); or [N, B, K], [N, B, 1] per member.
 * `weights` [N, B] (1 for a member's real rows, 0 for padding; src/runtime/member-data.ts) makes each
 * member's value the mean over its real rows only: sum(w l) / sum(w).
 */
export function memberLosses(tf: TF, loss: string, args: Record<string, unknown>, yPred: Tensor, yTrue: Tensor, weights?: Tensor): Tensor {
  if (weights) return weightedMean(tf, exampleLosses(tf, loss, args, yPred, yTrue), weights);
  if (loss === 'binary_crossentropy') return binaryCrossentropy(tf, yPred, yTrue);
  return tf.mean(exampleLosses(tf, loss, args, yPred, yTrue), -1);
}

/** Each member's mean of per-example values [N, B, ...] (an example's own axes averaged first) over its rows of weight 1, [N]. */
function weightedMean(tf: TF, values: Tensor, weights: Tensor): Tensor {
  const perRow = values.rank === 2 && values.shape[1] === weights.shape[1] ? values : tf.mean(tf.reshape(values, [...weights.shape, -1]), -1);
  return tf.div(tf.sum(tf.mul(perRow, weights), -1), tf.sum(weights, -1));
}

/** Class indices [B, 1] or [N, B, 1] as one-hot rows that broadcast against yPred [N, B, K]. */
function oneHotOf(tf: TF, yTrue: Tensor, yPred: Tensor): Tensor {
  const k = yPred.shape[yPred.rank - 1];
  const onehot = tf.oneHot(tf.cast(tf.reshape(yTrue, [-1]), 'int32'), k);
  return yTrue.rank === yPred.rank ? tf.reshape(onehot, yPred.shape) : onehot;
}

/** Each example's loss, [N, B]. */
export function exampleLosses(tf: TF, loss: string, args: Record<string, unknown>, yPred: Tensor, yTrue: Tensor): Tensor {
  switch (loss) {
    case 'binary_crossentropy': {
      const p = tf.clipByValue(yPred, EPS, 1 - EPS);
      return tf.neg(tf.mean(tf.add(tf.mul(yTrue, tf.log(p)), tf.mul(tf.sub(1, yTrue), tf.log(tf.sub(1, p)))), -1));
    }
    case 'categorical_crossentropy':
    case 'sparse_categorical_crossentropy': {
      const onehot = loss === 'sparse_categorical_crossentropy' ? oneHotOf(tf, yTrue, yPred) : yTrue;
      const p = tf.clipByValue(tf.div(yPred, tf.sum(yPred, -1, true)), EPS, 1 - EPS);
      return tf.neg(tf.sum(tf.mul(onehot, tf.log(p)), -1));
    }
    case 'mse':
      return tf.mean(tf.square(tf.sub(yPred, yTrue)), -1);
    case 'mae':
      return tf.mean(tf.abs(tf.sub(yPred, yTrue)), -1);
    case 'huber': {
      const delta = (args.delta as number | undefined) ?? 1;
      const err = tf.abs(tf.sub(yPred, yTrue));
      const quadratic = tf.minimum(err, delta);
      return tf.mean(tf.add(tf.mul(0.5, tf.square(quadratic)), tf.mul(delta, tf.sub(err, quadratic))), -1);
    }
    default:
      throw new Error(`unknown loss ${loss}`);
  }
}

/**
 * Binary cross-entropy per member, [N], of probabilities yPred [N, B, K] clipped to [eps, 1 - eps]
 * (Keras' rule) against yTrue [B, K] (or [N, B, K], each member's own): the mean over the batch of the mean over K of
 * -(y log p + (1 - y) log(1 - p)). One op whose gradient is written out,
 *   dL/dp = dy / (B K) * (p - y) / (p (1 - p))   where p is inside [eps, 1 - eps], 0 where it was clipped
 * (clipByValue's gradient), in 9 kernels where TF.js's autodiff of the expression runs about 30 (one
 * gradient per op, with broadcasts and reductions). The value is computed by the same ops as before.
 */
function binaryCrossentropyKernel(tf: TF, yPred: Tensor, yTrue: Tensor): Tensor {
  const f = tf.customGrad(((p: Tensor, save: (ts: Tensor[]) => void) => {
    const clipped = tf.clipByValue(p, EPS, 1 - EPS);
    const rest = tf.sub(1, clipped);
    const perExample = tf.neg(tf.mean(tf.add(tf.mul(yTrue, tf.log(clipped)), tf.mul(tf.sub(1, yTrue), tf.log(rest))), -1));
    save([p, clipped, rest]);
    return {
      value: tf.mean(perExample, -1),
      gradFunc: (dy: Tensor, [ps, cs, rs]: Tensor[]) => {
        const perElement = tf.div(tf.sub(cs, yTrue), tf.mul(cs, rs));
        const outer = [...dy.shape, ...new Array<number>(ps.rank - dy.rank).fill(1)];
        const scaled = tf.mul(perElement, tf.div(tf.reshape(dy, outer), ps.size / dy.size));
        // inside the clip range the clipped value is p itself; NaN compares unequal, as it fails the range
        return tf.where(tf.equal(ps, cs), scaled, tf.zerosLike(scaled));
      },
    };
  }) as unknown as GradFunc);
  return (f as unknown as (p: Tensor) => Tensor)(yPred);
}

/** Accuracy per member [N]: thresholded at 0.5 for one output, argmax otherwise. */
export function memberAccuracy(tf: TF, loss: string, yPred: Tensor, yTrue: Tensor): Tensor {
  return tf.mean(exampleHits(tf, loss, yPred, yTrue), -1);
}

/** Each example's hit (1) or miss (0), [N, B]. */
export function exampleHits(tf: TF, loss: string, yPred: Tensor, yTrue: Tensor): Tensor {
  const k = yPred.shape[yPred.rank - 1];
  let hits: Tensor;
  if (k === 1) hits = tf.equal(tf.greater(yPred, 0.5), tf.greater(yTrue, 0.5));
  else {
    // class indices: [B] shared, or [N, B] each member's own
    const indices = yTrue.rank === yPred.rank ? yPred.shape.slice(0, -1) : [-1];
    const truth = loss === 'sparse_categorical_crossentropy' || yTrue.shape[yTrue.rank - 1] === 1 ? tf.cast(tf.reshape(yTrue, indices), 'int32') : tf.argMax(yTrue, -1);
    hits = tf.equal(tf.argMax(yPred, -1), truth);
  }
  return tf.reshape(tf.cast(hits, 'float32'), [yPred.shape[0], -1]);
}

/**
 * A metric per member [N] by name: `accuracy`, or `mse`/`mae` of the outputs against the labels as the loss
 * sees them, class indices (sparse) one-hot.
 */
export function memberMetric(tf: TF, name: string, loss: string, yPred: Tensor, yTrue: Tensor, weights?: Tensor): Tensor {
  // over a member's real rows only: each example's value, then their weighted mean
  if (weights) return weightedMean(tf, exampleMetric(tf, name, loss, yPred, yTrue), weights);
  if (name === 'accuracy') return memberAccuracy(tf, loss, yPred, yTrue);
  if (name !== 'mse' && name !== 'mae') throw new Error(`internal error: unknown metric ${name}`);
  const truth = loss === 'sparse_categorical_crossentropy' ? tf.cast(oneHotOf(tf, yTrue, yPred), 'float32') : yTrue;
  return memberError(tf, name, yPred, truth);
}

/** mse or mae per member, whatever the loss. */
export function memberError(tf: TF, metric: 'mse' | 'mae', yPred: Tensor, yTrue: Tensor): Tensor {
  const d = tf.sub(yPred, yTrue);
  return tf.mean(tf.reshape(metric === 'mse' ? tf.square(d) : tf.abs(d), [yPred.shape[0], -1]), -1);
}

/**
 * A metric of each example, [N, B], by name: `accuracy` (a hit, 1, or a miss, 0), `mse` or `mae` of the
 * outputs against the labels as the loss sees them (class indices one-hot under the sparse loss).
 */
export function exampleMetric(tf: TF, name: string, loss: string, yPred: Tensor, yTrue: Tensor): Tensor {
  if (name === 'accuracy') return exampleHits(tf, loss, yPred, yTrue);
  if (name !== 'mse' && name !== 'mae') throw new Error(`internal error: unknown metric ${name}`);
  const truth = loss === 'sparse_categorical_crossentropy' ? tf.cast(oneHotOf(tf, yTrue, yPred), 'float32') : yTrue;
  const d = tf.sub(yPred, truth);
  return tf.mean(name === 'mse' ? tf.square(d) : tf.abs(d), -1);
}

/** A kernel (src/kernels/kernel.ts): one opaque call in a traced step, as its gradient is netc's own. */
export const binaryCrossentropy = kernel('binaryCrossentropy', binaryCrossentropyKernel);
