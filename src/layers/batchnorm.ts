// batchnorm(): normalises over the batch on the last axis; keeps running statistics per member (or one
// set for all, shared).
import type { LayerKind } from './layer-kind.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';
import { blockMembers, fromMembersFirst, groupedMembers, groupedVector, membersFirst } from './widened.js';
import { blockVector } from '../kernels/block-vector.js';

/**
 * Normalises x with the batch's statistics (training) or the running ones, and records the new running
 * statistics. `axes` are the batch axes; `vec` shapes per-member values to broadcast against x, and
 * `stat` shapes a statistic as the parameter is stored.
 */
function normalise(
  ctx: ForwardContext,
  x: Tensor,
  p: Record<string, Tensor>,
  axes: number[],
  vec: (values: number[]) => Tensor,
  param: (t: Tensor) => Tensor,
  stat: (t: Tensor) => Tensor,
  statVec: (values: number[]) => Tensor = vec,
): Tensor {
  const { tf } = ctx;
  let mean: Tensor;
  let variance: Tensor;
  if (ctx.training) {
    ({ mean, variance } = tf.moments(x, axes, true));
    const keep = statVec(ctx.hyper('momentum'));
    // Keras: moving -= (moving - batch) * (1 - momentum)
    ctx.update('moving_mean', tf.sub(p.moving_mean, tf.mul(tf.sub(p.moving_mean, stat(mean)), tf.sub(1, keep))));
    ctx.update('moving_variance', tf.sub(p.moving_variance, tf.mul(tf.sub(p.moving_variance, stat(variance)), tf.sub(1, keep))));
  } else {
    mean = param(p.moving_mean);
    variance = param(p.moving_variance);
  }
  const inv = tf.rsqrt(tf.add(variance, vec(ctx.hyper('epsilon'))));
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), inv), param(p.gamma)), param(p.beta));
}

export const batchnorm: LayerKind = {
  name: 'batchnorm',
  summary: 'batch normalisation over the last axis, with running statistics',
  args: [
    { name: 'momentum', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, default: 0.99, hyper: true },
    { name: 'epsilon', type: { kind: 'number', min: 0, minExclusive: true }, default: 1e-3, hyper: true },
  ],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params(_, [input]) {
    const c = [input[input.length - 1]];
    return [
      { name: 'gamma', shape: c, init: 'ones', trainable: true },
      { name: 'beta', shape: c, init: 'zeros', trainable: true },
      { name: 'moving_mean', shape: c, init: 'zeros', trainable: false },
      { name: 'moving_variance', shape: c, init: 'ones', trainable: false },
    ];
  },
  widen: { keepsShared: false },
  forward: {
    single(ctx, [x], p) {
      const axes = x.shape.slice(0, -1).map((_, i) => i);
      const stat = (t: Tensor) => ctx.tf.reshape(t, [-1]);
      return normalise(ctx, x, p, axes, (v) => ctx.tf.scalar(v[0]), (t) => t, stat);
    },
    // [N, B, ..., C]: statistics per member over its batch; parameters [N, C] -> [N, 1, ..., C]
    grouped(ctx, [a], p) {
      const { tf } = ctx;
      const x = groupedMembers(ctx, a);
      const axes = x.shape.slice(1, -1).map((_, i) => i + 1);
      const [n, c] = [x.shape[0], x.shape[x.rank - 1]];
      const param = (t: Tensor) => tf.reshape(t, [n, ...axes.map(() => 1), c]);
      const stat = (t: Tensor) => tf.reshape(t, [n, c]);
      const vec = (v: number[]) => groupedVector(tf, v, x.rank);
      // momentum per member, against statistics stored as [N, C]
      const statVec = (v: number[]) => ctx.tf.tensor(v, [n, 1]);
      return { t: normalise(ctx, x, p, axes, vec, param, stat, statVec), shared: false };
    },
    // [B, ..., N*C]: every channel already belongs to one member
    blockdiag(ctx, [a], p) {
      const { tf } = ctx;
      const x = blockMembers(ctx, a);
      const axes = x.shape.slice(0, -1).map((_, i) => i);
      const width = x.shape[x.rank - 1] / ctx.members;
      const stat = (t: Tensor) => tf.reshape(t, [-1]);
      return { t: normalise(ctx, x, p, axes, (v) => blockVector(tf, v, width), (t) => t, stat), shared: false };
    },
    // one gamma, beta and pair of running statistics [C] for every member. On a shared input it runs once;
    // on per-member inputs each member is normalised with its own batch's statistics (as a Keras layer
    // called on each member's activations would be), and the running statistics move towards the mean of
    // the members' batch statistics, one update per step whatever the member count
    shared(ctx, [a], p) {
      if (a.shared) return { t: batchnorm.forward.single(ctx, [a.t], p), shared: true };
      const { tf } = ctx;
      const x = membersFirst(ctx, a);
      const axes = x.shape.slice(1, -1).map((_, i) => i + 1);
      const c = x.shape[x.rank - 1];
      const stat = (t: Tensor) => tf.mean(tf.reshape(t, [-1, c]), 0);
      // the members' momentum and epsilon are one value: a shared layer's arguments cannot vary
      const scalar = (v: number[]) => tf.scalar(v[0]);
      return fromMembersFirst(ctx, normalise(ctx, x, p, axes, scalar, (t) => t, stat));
    },
  },
};
