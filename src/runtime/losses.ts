// Losses and metrics per member, on member-first predictions [N, B, K] against labels shared by all
// members. Each returns one value per member, [N]: the mean over the batch, as Keras computes it on
// probabilities (clipped to [eps, 1 - eps]).
import type { TF, Tensor } from './tf.js';

type GradFunc = Parameters<TF['customGrad']>[0];

const EPS = 1e-7;

/** yTrue is [B, K] (binary/onehot/values) or [B, 1] class indices (sparse). */
export function memberLosses(tf: TF, loss: string, args: Record<string, unknown>, yPred: Tensor, yTrue: Tensor): Tensor {
  if (loss === 'binary_crossentropy') return binaryCrossentropy(tf, yPred, yTrue);
  const perExample = (() => {
    switch (loss) {
      case 'categorical_crossentropy':
      case 'sparse_categorical_crossentropy': {
        const k = yPred.shape[yPred.rank - 1];
        const onehot = loss === 'sparse_categorical_crossentropy' ? tf.oneHot(tf.cast(tf.reshape(yTrue, [-1]), 'int32'), k) : yTrue;
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
  })();
  return tf.mean(perExample, -1);
}

/**
 * Binary cross-entropy per member, [N], of probabilities yPred [N, B, K] clipped to [eps, 1 - eps]
 * (Keras' rule) against yTrue [B, K]: the mean over the batch of the mean over K of
 * -(y log p + (1 - y) log(1 - p)). One op whose gradient is written out,
 *   dL/dp = dy / (B K) * (p - y) / (p (1 - p))   where p is inside [eps, 1 - eps], 0 where it was clipped
 * (clipByValue's gradient), in 9 kernels where TF.js's autodiff of the expression runs about 30 (one
 * gradient per op, with broadcasts and reductions). The value is computed by the same ops as before.
 */
function binaryCrossentropy(tf: TF, yPred: Tensor, yTrue: Tensor): Tensor {
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
  const k = yPred.shape[yPred.rank - 1];
  let hits: Tensor;
  if (k === 1) hits = tf.equal(tf.greater(yPred, 0.5), tf.greater(yTrue, 0.5));
  else {
    const truth = loss === 'sparse_categorical_crossentropy' || yTrue.shape[yTrue.rank - 1] === 1 ? tf.cast(tf.reshape(yTrue, [-1]), 'int32') : tf.argMax(yTrue, -1);
    hits = tf.equal(tf.argMax(yPred, -1), truth);
  }
  return tf.mean(tf.reshape(tf.cast(hits, 'float32'), [yPred.shape[0], -1]), -1);
}

/**
 * A metric per member [N] by name: `accuracy`, or `mse`/`mae` of the outputs against the labels as the loss
 * sees them, class indices (sparse) one-hot.
 */
export function memberMetric(tf: TF, name: string, loss: string, yPred: Tensor, yTrue: Tensor): Tensor {
  if (name === 'accuracy') return memberAccuracy(tf, loss, yPred, yTrue);
  if (name !== 'mse' && name !== 'mae') throw new Error(`internal error: unknown metric ${name}`);
  const k = yPred.shape[yPred.rank - 1];
  const truth = loss === 'sparse_categorical_crossentropy' ? tf.cast(tf.oneHot(tf.cast(tf.reshape(yTrue, [-1]), 'int32'), k), 'float32') : yTrue;
  return memberError(tf, name, yPred, truth);
}

/** mse or mae per member, whatever the loss. */
export function memberError(tf: TF, metric: 'mse' | 'mae', yPred: Tensor, yTrue: Tensor): Tensor {
  const d = tf.sub(yPred, yTrue);
  return tf.mean(tf.reshape(metric === 'mse' ? tf.square(d) : tf.abs(d), [yPred.shape[0], -1]), -1);
}
