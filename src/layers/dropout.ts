// dropout(rate): zeroes a fraction of activations while training (inverted dropout); each member
// draws its own mask.
import type { LayerKind } from './layer-kind.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';
import { groupedMembers, membersToBlocks, blockMembers } from './widened.js';

/** Inverted-dropout masks, member-first [N, ...shape]: 0 where dropped, 1/(1 - rate) where kept. */
function masks(ctx: ForwardContext, shape: number[]): Tensor {
  const { tf } = ctx;
  const rates = ctx.hyper('rate');
  const u = ctx.draws(shape);
  const rate = tf.tensor(rates, [rates.length, ...shape.map(() => 1)]);
  return tf.div(tf.cast(tf.greaterEqual(u, rate), 'float32'), tf.sub(1, rate));
}

export const dropout: LayerKind = {
  name: 'dropout',
  summary: 'randomly zero a fraction `rate` of activations while training',
  args: [{ name: 'rate', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, positional: true, required: true, hyper: true }],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params: () => [],
  widen: { keepsShared: false },
  forward: {
    single: (ctx, [x]) => (ctx.training ? ctx.tf.mul(x, ctx.tf.squeeze(masks(ctx, x.shape), [0])) : x),
    grouped(ctx, [x]) {
      if (!ctx.training) return x;
      const t = groupedMembers(ctx, x);
      return { t: ctx.tf.mul(t, masks(ctx, t.shape.slice(1))), shared: false };
    },
    blockdiag(ctx, [x]) {
      if (!ctx.training) return x;
      const t = blockMembers(ctx, x);
      const perMember = [...t.shape.slice(0, -1), t.shape[t.rank - 1] / ctx.members];
      return { t: ctx.tf.mul(t, membersToBlocks(ctx.tf, masks(ctx, perMember))), shared: false };
    },
  },
};
