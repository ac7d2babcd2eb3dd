// layernorm(): normalises each example over its last axis.
import type { LayerKind } from './layer-kind.js';
import { normWgsl } from './norm-wgsl.js';
import type { Tensor, TF } from '../kernels/tf.js';
import { groupedMembers, groupedVector, joinMembers, splitMembers, blockMembers, sharedByFolding } from './widened.js';
import { lastAxisRows, type LastAxisRows, type WasmBackwardContext, type WasmContext, type WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import { address, zeroFloats, type Mat } from '../wasm/blocks.js';
import { pow1_5 } from '../wasm/math.js';
import { initializerConfig } from './reference-rule.js';
import { featureParams, featureTensors, selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { float, int, ints, toChannelsFirst, toChannelsLast } from '../interop/onnx-graph.js';
import { kwargName } from '../interop/torch-code.js';

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
  wasm: layernormKernel(),
  reference: {
    layers: (ctx) => [ctx.tf.layers.layerNormalization({ axis: -1, epsilon: ctx.args.epsilon as number, ...initializerConfig(ctx, ['gammaInitializer', 'betaInitializer']), name: ctx.name })],
  },
  export: { node: exportNode },
  wgsl: normWgsl('layernorm', true),
};

/** PyTorch's LayerNorm (ONNX's LayerNormalization) over the last axis: an NCHW image's channels moved last and back. */
function exportNode(ctx: ExportContext): ExportNode {
  const { shape, layout } = ctx.base;
  const self = selfOf(ctx);
  const order = ctx.inputs[0].order;
  return {
    ...ctx.base,
    order,
    tensors: featureTensors(ctx, ['weight', 'bias']),
    torch: {
      init: [`${self} = nn.LayerNorm(${shape[shape.length - 1]}, eps=${kwargName(ctx.base, 'epsilon')})`],
      forward: ([x]) => (layout === 'nchw' ? `${self}(${x}.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)` : `${self}(${x})`),
    },
    onnx({ g, xs: [x], out, tensors }) {
      const attrs = [int('axis', -1), float('epsilon', ctx.args.epsilon as number)];
      if (layout !== 'nchw') return g.op('LayerNormalization', [x, ...tensors()], attrs, out);
      const last = g.op('Transpose', [x], [ints('perm', toChannelsLast(4))]);
      return g.op('Transpose', [g.op('LayerNormalization', [last, ...tensors()], attrs)], [ints('perm', toChannelsFirst(4))], out);
    },
    params: (t) => featureParams(t, ['weight', 'bias'], order),
  };
}

/**
 * The generated step's layernorm, per member and example (one float at a time): m = mean(x), d = x - m,
 * s = mean(d^2) + epsilon, y = d / sqrt(s) * gamma + beta, keeping d and s for the backward pass, which is
 * autodiff's of tf.moments (whose variance does not pass a gradient to the mean) and rsqrt.
 */
function layernormKernel(): WasmRule {
  return {
    // a sequence [T, F] is B*T rows of F (lastAxisRows). An image's per-pixel rule is batchnorm's view
    // (channels.ts), but its rsqrt gradient needs pow(s, 1.5) at every pixel, which the backend's powf gives in
    // its own last bit about once in 1,500 (math.ts): after a conv2d, with relu, mse and adam, 20 steps ended
    // 1.5e-6 from the op path and 100 steps 1.3e-5
    whyNot: (_, [input]) => (input.length > 2 ? 'layernorm of an input with more than one axis' : undefined),
    forward(k) {
      const { code: c } = k;
      const r = lastAxisRows(k);
      const width = r.of(k.output).width;
      const d = r.of(k.saved('d', k.output.width));
      const s = r.of(k.saved('s', r.steps));
      eachRow(c, k, r, (at) => {
        const [sum, mean, rs] = [c.local('f32'), c.local('f32'), c.local('f32')];
        overColumns(c, width, (j) => c.get(sum).get(at.x).get(j).i32Add().loadF32().f32Add().set(sum), () => c.f32(0).set(sum));
        c.get(sum).f32(width).f32Div().set(mean);
        c.f32(0).set(sum);
        overColumns(c, width, (j) => {
          const dj = c.local('f32');
          c.get(at.x).get(j).i32Add().loadF32().get(mean).f32Sub().set(dj);
          c.get(at.d).get(j).i32Add().get(dj).storeF32();
          c.get(sum).get(dj).get(dj).f32Mul().f32Add().set(sum);
        });
        c.get(sum).f32(width).f32Div().get(k.hyper('epsilon')).f32Add().set(rs);
        c.get(at.s).get(rs).storeF32();
        c.f32(1).get(rs).f32Sqrt().f32Div().set(rs);
        // (d * r) * gamma + beta
        overColumns(c, width, (j) => {
          c.get(at.y).get(j).i32Add();
          c.get(at.d).get(j).i32Add().loadF32().get(rs).f32Mul();
          c.get(k.params.gamma as Local).get(j).i32Add().loadF32().f32Mul();
          c.get(k.params.beta as Local).get(j).i32Add().loadF32().f32Add();
          c.storeF32();
        });
      }, { d, s });
    },
    backward(k) {
      const { code: c } = k;
      const r = lastAxisRows(k);
      const width = r.of(k.output).width;
      const d = r.of(k.saved('d', k.output.width));
      const s = r.of(k.saved('s', r.steps));
      const [dGamma, dBeta] = [k.grads.gamma, k.grads.beta];
      if (!k.accumulate) {
        zeroFloats(c, dGamma, width);
        zeroFloats(c, dBeta, width);
      }
      const dx = k.dInputs[0] && r.of(k.dInputs[0]);
      eachRow(c, k, r, (at) => {
        const [r, dr, dv, dm, si] = [c.local('f32'), c.local('f32'), c.local('f32'), c.local('f32'), c.local('f32')];
        c.get(at.s).loadF32().set(si);
        c.f32(1).get(si).f32Sqrt().f32Div().set(r);
        c.f32(0).set(dr);
        c.f32(0).set(dm);
        overColumns(c, width, (j) => {
          const [dyj, dj, dxh] = [c.local('f32'), c.local('f32'), c.local('f32')];
          c.get(at.dy).get(j).i32Add().loadF32().set(dyj);
          c.get(at.d).get(j).i32Add().loadF32().set(dj);
          // dgamma += dy * (d * r), dbeta += dy; dxhat = dy * gamma
          address(c, dGamma.base, dGamma.offset, j);
          address(c, dGamma.base, dGamma.offset, j);
          c.loadF32().get(dyj).get(dj).get(r).f32Mul().f32Mul().f32Add().storeF32();
          address(c, dBeta.base, dBeta.offset, j);
          address(c, dBeta.base, dBeta.offset, j);
          c.loadF32().get(dyj).f32Add().storeF32();
          c.get(dyj).get(k.params.gamma as Local).get(j).i32Add().loadF32().f32Mul().set(dxh);
          // through d * r: dd = dxhat * r (kept in dx for now), dr += dxhat * d; the mean takes -sum(dd)
          c.get(dr).get(dxh).get(dj).f32Mul().f32Add().set(dr);
          if (at.dx) {
            c.get(at.dx).get(j).i32Add().get(dxh).get(r).f32Mul().storeF32();
            c.get(dm).get(dxh).get(r).f32Mul().f32Sub().set(dm);
          }
        });
        const dxAt = at.dx;
        if (!dxAt) return;
        // rsqrt's gradient: dr / (s^1.5 * -2); the variance's: (dv / C) * (d * 2); the mean's: dm / C
        c.get(dr);
        pow1_5(c, si);
        c.f32(-2).f32Mul().f32Div().f32(width).f32Div().set(dv);
        c.get(dm).f32(width).f32Div().set(dm);
        overColumns(c, width, (j) => {
          c.get(dxAt).get(j).i32Add();
          c.get(dxAt).get(j).i32Add().loadF32();
          c.get(dv).get(at.d).get(j).i32Add().loadF32().f32(2).f32Mul().f32Mul().f32Add();
          c.get(dm).f32Add();
          c.storeF32();
        });
      }, { d, s, ...(dx ? { dx } : {}) });
    },
  };
}

interface RowAddresses {
  x: Local;
  y: Local;
  d: Local;
  s: Local;
  dy: Local;
  dx?: Local;
}

/** For each row b (an example, or a step of one): the addresses of its rows (x, y, d, dy, dx) and of its s. */
function eachRow(c: Code, k: WasmContext | WasmBackwardContext, r: LastAxisRows, body: (at: RowAddresses) => void, buffers: { d: Mat; s: Mat; dx?: Mat }): void {
  const b = c.local('i32');
  const width = r.of(k.output).width;
  const row = (m: Mat, w: number) => {
    const l = c.local('i32');
    address(c, m.base, m.offset, b, w * 4);
    c.set(l);
    return l;
  };
  c.for(b, () => c.i32(0), () => c.get(r.rows), () => {
    const dOut = 'dOutput' in k ? (k as WasmBackwardContext).dOutput : k.output;
    const at: RowAddresses = { x: row(k.inputs[0], width), y: row(k.output, width), d: row(buffers.d, width), s: row(buffers.s, 1), dy: row(dOut, width) };
    if (buffers.dx) at.dx = row(buffers.dx, width);
    body(at);
  });
}

/** for j in 0..width (j a byte offset), after `init` */
function overColumns(c: Code, width: number, body: (j: Local) => void, init?: () => void): void {
  init?.();
  const j = c.local('i32');
  c.for(j, () => c.i32(0), () => c.i32(width * 4), () => body(j), 4);
}

