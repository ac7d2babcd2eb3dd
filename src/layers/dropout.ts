// dropout(rate): zeroes a fraction of activations while training (inverted dropout); each member
// draws its own mask.
import type { LayerKind } from './layer-kind.js';
import { normWgsl } from './norm-wgsl.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';
import { groupedMembers, membersToBlocks, blockMembers } from './widened.js';
import type { WasmContext, WasmRule } from './wasm-rule.js';
import { address, forEachFloat, loadAt } from '../wasm/blocks.js';
import { kwargName } from '../interop/torch-code.js';
import { selfOf } from './export-rule.js';

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
  wasm: dropoutKernel(),
  reference: { layers: ({ tf, args, name }) => [tf.layers.dropout({ rate: args.rate as number, name })] },
  // nn.Dropout, its rate the constructor's keyword argument; in ONNX's inference graph nothing
  export: {
    node: (ctx) => ({
      ...ctx.base,
      order: ctx.inputs[0].order,
      torch: { init: [`${selfOf(ctx)} = nn.Dropout(p=${kwargName(ctx.base, 'rate')})`], forward: ([x]) => `${selfOf(ctx)}(${x})` },
      onnx: ({ g, xs, out }) => g.op('Identity', xs.slice(0, 1), [], out),
    }),
  },
  wgsl: normWgsl('dropout'),
};

/**
 * The generated step's dropout, per member: the mask from the host's draws of this step (the op path's
 * memberDraws), (u >= rate) / (1 - rate), kept for the backward pass; out = x * mask, dx = dy * mask.
 */
function dropoutKernel(): WasmRule {
  return {
    draws: true,
    forward(k) {
      const { code: c } = k;
      if (!k.training) return copyInput(k);
      const u = k.draws();
      const mask = k.saved('mask', k.output.width);
      const keep = c.local('f32');
      // 1 - rate, in float32 as tf.sub(1, rate) computes it
      c.f32(1).get(k.hyper('rate')).f32Sub().set(keep);
      forEachFloat(
        c,
        () => c.get(k.batch).i32(k.output.width).i32Mul(),
        (v, off) => {
          const m = v.floatLocal();
          address(c, mask.base, mask.offset, off);
          v.const(1);
          v.const(0);
          loadAt(v, u, off);
          c.get(k.hyper('rate'));
          v.splat();
          v.ge();
          v.select();
          c.get(keep);
          v.splat();
          v.div();
          c.tee(m);
          v.store();
          address(c, k.output.base, k.output.offset, off);
          loadAt(v, k.inputs[0], off);
          c.get(m);
          v.mul();
          v.store();
        },
      );
    },
    backward(k) {
      const dx = k.dInputs[0];
      if (!dx) return;
      const mask = k.saved('mask', k.output.width);
      const c = k.code;
      forEachFloat(
        c,
        () => c.get(k.batch).i32(k.output.width).i32Mul(),
        (v, off) => {
          address(c, dx.base, dx.offset, off);
          loadAt(v, k.dOutput, off);
          loadAt(v, mask, off);
          v.mul();
          v.store();
        },
      );
    },
  };
}

/** Outside training, dropout's output is its input. */
function copyInput(k: WasmContext): void {
  const { code: c } = k;
  const [x, y] = [k.inputs[0], k.output];
  forEachFloat(
    c,
    () => c.get(k.batch).i32(y.width).i32Mul(),
    (v, off) => {
      address(c, y.base, y.offset, off);
      loadAt(v, x, off);
      v.store();
    },
  );
}

