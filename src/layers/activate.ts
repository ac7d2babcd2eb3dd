// Applies an activation to a widened activation. Only softmax needs care: it normalises over one
// member's features, so in the blockdiag layout it runs on [..., N, C].
import { activate } from '../kernels/activations.js';
import { LEAKY_RELU_ALPHA } from '../math/activations.js';
import type { Tensor } from '../kernels/tf.js';
import type { Act, ForwardContext } from './forward.js';
import { joinMembers, splitMembers } from './widened.js';

export function activateWide(ctx: ForwardContext, name: string, a: Act, alpha: number | Tensor = LEAKY_RELU_ALPHA): Act {
  const { tf } = ctx;
  if (name === 'softmax' && ctx.lowering === 'blockdiag' && !a.shared) {
    return { t: joinMembers(tf, tf.softmax(splitMembers(tf, a.t, ctx.members))), shared: false };
  }
  return { t: activate(tf, name, a.t, alpha), shared: a.shared };
}
