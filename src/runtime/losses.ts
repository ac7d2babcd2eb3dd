// Losses and metrics per member, on member-first predictions [N, B, K] against labels shared by all
// members. Each returns one value per member, [N]: the mean over the batch, as Keras computes it on
// probabilities (clipped to [eps, 1 - eps]).
import type { TF, Tensor } from './tf.js';

const EPS = 1e-7;

/** yTrue is [B, K] (binary/onehot/values) or [B, 1] class indices (sparse). */
export function memberLosses(tf: TF, loss: string, args: Record<string, unknown>, yPred: Tensor, yTrue: Tensor): Tensor {
  const perExample = (() => {
    switch (loss) {
      case 'binary_crossentropy': {
        const p = tf.clipByValue(yPred, EPS, 1 - EPS);
        return tf.neg(tf.mean(tf.add(tf.mul(yTrue, tf.log(p)), tf.mul(tf.sub(1, yTrue), tf.log(tf.sub(1, p)))), -1));
      }
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
