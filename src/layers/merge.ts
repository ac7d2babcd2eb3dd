// add(a, b, ...) and concat(a, b, ...): merge labelled outputs, for residual and branching graphs.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind } from './layer-kind.js';
import { blockMembers, groupedMembers, joinMembers, splitMembers } from './widened.js';
import { address, forEachFloat, loadAt, type Mat } from '../wasm/blocks.js';
import type { Code, Local } from '../wasm/module.js';
import { channelAxis, concatOrder, sameOrder } from '../interop/layout.js';
import { int } from '../interop/onnx-graph.js';
import { product } from './spatial.js';
import { mergeBackward, mergeCells, mergeForward, mergeLayer, perCellMerge, whyNotMerge, type Merge, type MergeLayer } from '../wgsl/graph.js';
import type { WgslLayerRule } from '../wgsl/rule.js';

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
  // the generated step: the inputs summed in order; each input's gradient is the output's
  wasm: {
    forward(k) {
      forEachFloat(
        k.code,
        () => k.code.get(k.batch).i32(k.output.width).i32Mul(),
        (v, off) => {
          address(k.code, k.output.base, k.output.offset, off);
          k.inputs.forEach((x, i) => {
            loadAt(v, x, off);
            if (i > 0) v.add();
          });
          v.store();
        },
      );
    },
    backward(k) {
      for (const d of k.dInputs) if (d) copyRows(k.code, k.batch, k.dOutput, 0, d, 0, k.output.width);
    },
  },
  reference: { layers: ({ tf, name }) => [tf.layers.add({ name })] },
  // the inputs summed; their feature orders must agree, or the plan is made again with none
  export: {
    node(ctx) {
      const [x, ...rest] = ctx.inputs;
      if (rest.some((v) => !sameOrder(v.order, x.order))) ctx.conflict();
      return { ...ctx.base, order: x.order, torch: { init: [], forward: (vars) => vars.join(' + ') }, onnx: ({ g, xs, out }) => g.op('Sum', xs, [], out) };
    },
  },
  wgsl: mergeWgsl('add'),
};

/** dst[b, dstCol..+width] = src[b, srcCol..+width] for every row b (columns, not bytes). */
function copyRows(c: Code, batch: Local, src: Mat, srcCol: number, dst: Mat, dstCol: number, width: number): void {
  const b = c.local('i32');
  const from = c.local('i32');
  const to = c.local('i32');
  c.for(b, () => c.i32(0), () => c.get(batch), () => {
    address(c, src.base, src.offset + srcCol * 4, b, src.width * 4);
    c.set(from);
    address(c, dst.base, dst.offset + dstCol * 4, b, dst.width * 4);
    c.set(to);
    forEachFloat(
      c,
      () => c.i32(width),
      (v, off) => {
        address(c, to, 0, off);
        loadAt(v, { base: from, offset: 0 }, off);
        v.store();
      },
    );
  });
}

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
  // the generated step: each example's row is the inputs' rows side by side; the gradient is cut back apart
  wasm: {
    whyNot: (_, inputs) => (inputs.some((s) => s.length > 1) ? 'concat of inputs with more than one axis' : undefined),
    forward(k) {
      let col = 0;
      for (const x of k.inputs) {
        copyRows(k.code, k.batch, x, 0, k.output, col, x.width);
        col += x.width;
      }
    },
    backward(k) {
      let col = 0;
      k.inputs.forEach((x, i) => {
        const d = k.dInputs[i];
        if (d) copyRows(k.code, k.batch, k.dOutput, col, d, 0, x.width);
        col += x.width;
      });
    },
  },
  reference: { layers: ({ tf, name }) => [tf.layers.concatenate({ axis: -1, name })] },
  // along the channels (NCHW's axis 1) or the features, whose orders join side by side
  export: {
    node(ctx) {
      const { shape, layout } = ctx.base;
      const axis = channelAxis(shape);
      return {
        ...ctx.base,
        order: layout === 'flat' ? concatOrder(ctx.inputs.map((v) => ({ order: v.order, width: v.shape[0] }))) : undefined,
        torch: { init: [], forward: (vars) => `torch.cat([${vars.join(', ')}], dim=${axis})` },
        onnx: ({ g, xs, out }) => g.op('Concat', xs, [int('axis', axis)], out),
      };
    },
  },
  wgsl: mergeWgsl('concat'),
};

/**
 * The WGSL step's add and concat (src/wgsl/graph.ts): forward elementwise (a concat of images per cell, its
 * channels joined), backward one kernel per operand that needs a gradient.
 */
function mergeWgsl(merge: Merge): WgslLayerRule<MergeLayer> {
  return {
    whyNot: (op, c) => whyNotMerge(merge, op, c.inputs),
    onShared: 'never',
    layer: (b) => mergeLayer(b.base, merge, b.inputs.map(({ input, shape }) => ({ input, width: product(shape) / mergeCells(merge, b.base.op.shape) }))),
    forward: (w, l) => [mergeForward(w.all(l.cells), perCellMerge(l))],
    backward: (w, l, into) => into.flatMap((t, j) => (t ? [mergeBackward(w.all(l.cells), perCellMerge(l), j, t)] : [])),
  };
}
