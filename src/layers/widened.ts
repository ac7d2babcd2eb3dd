// Layout helpers for the widened forms, shared by the layer kinds' forward rules.
import type { TF, Tensor } from '../kernels/tf.js';
import type { Act, ForwardContext, ForwardRules, Params } from './forward.js';

/** grouped: a shared [B, ...] activation as [N, B, ...] (a broadcast view where the op allows it). */
export function groupedMembers(ctx: ForwardContext, a: Act): Tensor {
  return a.shared ? ctx.tf.broadcastTo(a.t, [ctx.members, ...a.t.shape]) : a.t;
}

/** blockdiag: a shared [B, ..., C] activation as [B, ..., N*C], member-major on the last axis. */
export function blockMembers(ctx: ForwardContext, a: Act): Tensor {
  if (!a.shared) return a.t;
  return ctx.tf.tile(a.t, [...a.t.shape.slice(0, -1).map(() => 1), ctx.members]);
}

/** Per-member values as a tensor that broadcasts against a grouped activation of rank `rank`. */
export function groupedVector(tf: TF, values: number[], rank: number): Tensor {
  return tf.tensor(values, [values.length, ...new Array(rank - 1).fill(1)]);
}

/** blockdiag: [B, ..., N*C] -> [B, ..., N, C], so an op can work per member on the last axis. */
export function splitMembers(tf: TF, t: Tensor, members: number): Tensor {
  const c = t.shape[t.rank - 1] / members;
  return tf.reshape(t, [...t.shape.slice(0, -1), members, c]);
}

export function joinMembers(tf: TF, t: Tensor): Tensor {
  return tf.reshape(t, [...t.shape.slice(0, -2), t.shape[t.rank - 2] * t.shape[t.rank - 1]]);
}

/** [N, B, ..., C] -> [B, ..., N*C]: member-first values in the blockdiag layout. */
export function membersToBlocks(tf: TF, t: Tensor): Tensor {
  const perm = [...Array.from({ length: t.rank - 2 }, (_, i) => i + 1), 0, t.rank - 1];
  return joinMembers(tf, tf.transpose(t, perm));
}

/** [B, ..., N*C] -> [N, B, ..., C]: the blockdiag layout member-first (for the loss and metrics). */
export function blocksToMembers(tf: TF, t: Tensor, members: number): Tensor {
  const split = splitMembers(tf, t, members);
  const r = split.rank;
  return tf.transpose(split, [r - 2, ...Array.from({ length: r - 2 }, (_, i) => i), r - 1]);
}

/** Any widened activation member-first, [N, B, ...] (a shared one broadcast to every member). */
export function membersFirst(ctx: ForwardContext, a: Act): Tensor {
  if (a.shared) return ctx.tf.broadcastTo(a.t, [ctx.members, ...a.t.shape]);
  return ctx.lowering === 'grouped' ? a.t : blocksToMembers(ctx.tf, a.t, ctx.members);
}

/** Member-first [N, B, ...] values back in the lowering's layout. */
export function fromMembersFirst(ctx: ForwardContext, t: Tensor): Act {
  return { t: ctx.lowering === 'grouped' ? t : membersToBlocks(ctx.tf, t), shared: false };
}

/** A layer's single-member rule, told whether its inputs are data (no gradient needed for them). */
export type SingleRule = (ctx: ForwardContext, inputs: Tensor[], params: Params, data: boolean) => Tensor;

/**
 * The `shared` rule of a layer whose examples do not interact (dense, conv2d, layernorm), from its
 * single-member rule: on shared inputs it runs once and its value stays shared; on per-member inputs
 * every member's rows are folded into one batch, [N*B, ...], so that one set of parameters serves them
 * all (its gradient sums the members'), and unfolded into the lowering's layout.
 */
export function sharedByFolding(single: SingleRule): NonNullable<ForwardRules['shared']> {
  return (ctx, inputs, params) => {
    const { tf, members: n } = ctx;
    if (inputs.every((a) => a.shared)) return { t: single(ctx, inputs.map((a) => a.t), params, inputs.every((a) => a.data)), shared: true };
    const folded = inputs.map((a) => {
      const t = membersFirst(ctx, a);
      return tf.reshape(t, [n * t.shape[1]!, ...t.shape.slice(2)]);
    });
    const y = single(ctx, folded, params, false);
    return fromMembersFirst(ctx, tf.reshape(y, [n, y.shape[0] / n, ...y.shape.slice(1)]));
  };
}
