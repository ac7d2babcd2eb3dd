// add(a, b, ...) and concat(a, b, ...): merge labelled outputs, for residual and branching graphs.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind } from './layer-kind.js';
import { blockMembers, groupedMembers, joinMembers, splitMembers } from './widened.js';

export const add: LayerKind = {
  name: 'add',
  summary: 'element-wise sum of labelled outputs of one shape',
  args: [],
  reads: 'labels',
  shape(ctx) {
    const [first, ...rest] = ctx.inputs;
    if (rest.some((s) => fmtShape(s) !== fmtShape(first))) {
      ctx.error(Messages.ShapeMismatch, undefined, 'add', ctx.inputs.map(fmtShape).join(' and '));
      return undefined;
    }
    return first;
  },
  params: () => [],
  widen: { keepsShared: true },
  forward: {
    single: ({ tf }, xs) => tf.addN(xs),
    // a shared [B, ...] operand broadcasts against the members' [N, B, ...]
    grouped: ({ tf }, xs) => ({ t: xs.map((x) => x.t).reduce((a, b) => tf.add(a, b)), shared: xs.every((x) => x.shared) }),
    blockdiag(ctx, xs) {
      const shared = xs.every((x) => x.shared);
      const ts = xs.map((x) => (shared ? x.t : blockMembers(ctx, x)));
      return { t: ts.reduce((a, b) => ctx.tf.add(a, b)), shared };
    },
  },
};

export const concat: LayerKind = {
  name: 'concat',
  summary: 'join labelled outputs along the last axis',
  args: [],
  reads: 'labels',
  shape(ctx) {
    const [first, ...rest] = ctx.inputs;
    const lead = (s: number[]) => fmtShape(s.slice(0, -1));
    if (rest.some((s) => s.length !== first.length || lead(s) !== lead(first))) {
      ctx.error(Messages.ShapeMismatch, undefined, 'concat (all but the last axis)', ctx.inputs.map(fmtShape).join(' and '));
      return undefined;
    }
    return [...first.slice(0, -1), ctx.inputs.reduce((n, s) => n + s[s.length - 1], 0)];
  },
  params: () => [],
  widen: { keepsShared: true },
  forward: {
    single: ({ tf }, xs) => tf.concat(xs, -1),
    grouped(ctx, xs) {
      if (xs.every((x) => x.shared)) return { t: ctx.tf.concat(xs.map((x) => x.t), -1), shared: true };
      return { t: ctx.tf.concat(xs.map((x) => groupedMembers(ctx, x)), -1), shared: false };
    },
    // per member: [B, ..., N, Ca] and [B, ..., N, Cb] -> [B, ..., N, Ca+Cb]
    blockdiag(ctx, xs) {
      const { tf } = ctx;
      if (xs.every((x) => x.shared)) return { t: tf.concat(xs.map((x) => x.t), -1), shared: true };
      return { t: joinMembers(tf, tf.concat(xs.map((x) => splitMembers(tf, blockMembers(ctx, x), ctx.members)), -1)), shared: false };
    },
  },
};
