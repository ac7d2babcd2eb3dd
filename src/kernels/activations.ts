// Activation functions as TF.js ops, with Keras' definitions.
import type { TF, Tensor } from './tf.js';
import { LEAKY_RELU_ALPHA } from '../math/activations.js';

/** `alpha` (leaky_relu) is a number or a tensor that broadcasts against x. */
export function activate(tf: TF, name: string, x: Tensor, alpha: number | Tensor = LEAKY_RELU_ALPHA): Tensor {
  switch (name) {
    case 'linear':
      return x;
    case 'relu':
      return tf.relu(x);
    case 'sigmoid':
      return tf.sigmoid(x);
    case 'tanh':
      return tf.tanh(x);
    case 'softmax':
      return tf.softmax(x);
    case 'elu':
      return tf.elu(x);
    case 'gelu': // the exact form: x * Phi(x)
      return tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
    case 'swish':
      return tf.mul(x, tf.sigmoid(x));
    case 'leaky_relu': // prelu, not where(x > 0, ...): Greater has no gradient in TF.js
      return typeof alpha === 'number' ? tf.leakyRelu(x, alpha) : tf.prelu(x, tf.broadcastTo(alpha, x.shape));
    default:
      throw new Error(`unknown activation ${name}`);
  }
}
