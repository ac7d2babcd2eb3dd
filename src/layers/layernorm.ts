// layernorm(): normalises each example over its last axis.
import type { LayerKind } from './layer-kind.js';
import type { Tensor, TF } from '../kernels/tf.js';
import { groupedMembers, groupedVector, joinMembers, splitMembers, blockMembers, sharedByFolding } from './widened.js';

/** (x - mean) / sqrt(var + eps) * gamma + beta over the last axis of each example. */
function normalise(tf: TF, x: Tensor, gamma: Tensor, beta: Tensor, epsilon: Tensor): Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, epsilon))), gamma), beta);
}

export const layernorm: LayerKind = {
  name: 'layernorm',
  summary: 'layer normalisation over the last axis of each example',
  args: [{ name: 'epsilon', type: { kind: 'number', min: 0, minExclusive: true }, default: 1e-3, hyper: true }],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params(_, [input]) {
    const c = [input[input.length - 1]];
    return [
      { name: 'gamma', shape: c, init: 'ones', trainable: true },
      { name: 'beta', shape: c, init: 'zeros', trainable: true },
    ];
  },
  widen: { keepsShared: false },
  forward: {
    single: ({ tf, hyper }, [x], p) => normalise(tf, x, p.gamma, p.beta, tf.scalar(hyper('epsilon')[0])),
    // [N, B, ..., C] with gamma, beta [N, C] -> [N, 1, ..., C]
    grouped(ctx, [a], p) {
      const { tf } = ctx;
      const x = groupedMembers(ctx, a);
      const shape = [x.shape[0], ...x.shape.slice(1, -1).map(() => 1), x.shape[x.rank - 1]];
      const eps = groupedVector(tf, ctx.hyper('epsilon'), x.rank);
      return { t: normalise(tf, x, tf.reshape(p.gamma, shape), tf.reshape(p.beta, shape), eps), shared: false };
    },
    // [B, ..., N*C] -> [B, ..., N, C], normalised per member over C
    blockdiag(ctx, [a], p) {
      const { tf, members: n } = ctx;
      const x = splitMembers(tf, blockMembers(ctx, a), n);
      const c = x.shape[x.rank - 1];
      const eps = tf.tensor(ctx.hyper('epsilon'), [n, 1]);
      return { t: joinMembers(tf, normalise(tf, x, tf.reshape(p.gamma, [n, c]), tf.reshape(p.beta, [n, c]), eps)), shared: false };
    },
    // one gamma and beta [C] for every member's examples (the members' epsilon is one value: it cannot vary)
    shared: sharedByFolding(({ tf, hyper }, [x], p) => normalise(tf, x, p.gamma, p.beta, tf.scalar(hyper('epsilon')[0]))),
  },
};
