// batchnorm(): normalises over the batch on the last axis; keeps running statistics per member (or one
// set for all, shared).
import type { LayerKind } from './layer-kind.js';
import { normWgsl } from './norm-wgsl.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';
import { blockMembers, fromMembersFirst, groupedMembers, groupedVector, membersFirst } from './widened.js';
import { blockVector } from '../kernels/block-vector.js';
import type { WasmContext, WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import type { Lanes } from '../wasm/lanes.js';
import { address, columns, forRows, rowOf, zeroRow, type Mat } from '../wasm/blocks.js';
import { pow1_5 } from '../wasm/math.js';
import { perPixel } from './channels.js';
import { initializerConfig } from './reference-rule.js';
import { featureParams, featureTensors, selfOf } from './export-rule.js';
import { UnsupportedExportError, type ExportContext, type ExportNode, type ExportTensor } from '../interop/export-node.js';
import { float, ints, toChannelsFirst, toChannelsLast } from '../interop/onnx-graph.js';
import { kwargName } from '../interop/torch-code.js';

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
  weights?: Tensor,
): Tensor {
  const { tf } = ctx;
  let mean: Tensor;
  let variance: Tensor;
  if (ctx.training) {
    ({ mean, variance } = weights ? weightedMoments(ctx, x, weights, axes) : tf.moments(x, axes, true));
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

/**
 * The batch's mean and variance over `axes` counting each row by its weight (`weights` broadcasts against
 * x: 1 for a real row, 0 for padding), so that padding rows are not seen: sum(w x) / sum(w), then
 * sum(w (x - mean)^2) / sum(w), the two-pass rule tf.moments follows over the real rows alone.
 */
function weightedMoments(ctx: ForwardContext, x: Tensor, weights: Tensor, axes: number[]): { mean: Tensor; variance: Tensor } {
  const { tf } = ctx;
  const count = tf.sum(tf.broadcastTo(weights, x.shape), axes, true);
  const mean = tf.div(tf.sum(tf.mul(x, weights), axes, true), count);
  const variance = tf.div(tf.sum(tf.mul(tf.square(tf.sub(x, mean)), weights), axes, true), count);
  return { mean, variance };
}

/** ctx.rowWeights ([N, B], or [B] for one member) as `leading` followed by 1 on x's other axes, to broadcast against x. */
function rowWeightsLike(ctx: ForwardContext, x: Tensor, leading: number[]): Tensor | undefined {
  const w = ctx.rowWeights;
  return w && ctx.tf.reshape(w, [...leading, ...new Array<number>(x.rank - leading.length).fill(1)]);
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
      const scalar = (v: number[]) => ctx.tf.scalar(v[0]);
      return normalise(ctx, x, p, axes, scalar, (t) => t, stat, scalar, rowWeightsLike(ctx, x, [x.shape[0]]));
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
      return { t: normalise(ctx, x, p, axes, vec, param, stat, statVec, rowWeightsLike(ctx, x, [n, x.shape[1] as number])), shared: false };
    },
    // [B, ..., N*C]: every channel already belongs to one member
    blockdiag(ctx, [a], p) {
      const { tf } = ctx;
      const x = blockMembers(ctx, a);
      const axes = x.shape.slice(0, -1).map((_, i) => i);
      const width = x.shape[x.rank - 1] / ctx.members;
      const stat = (t: Tensor) => tf.reshape(t, [-1]);
      const vec = (v: number[]) => blockVector(tf, v, width);
      // [N, B] as [B, ..., N*C]: member m's weight on each of its C columns
      const w = ctx.rowWeights && tf.reshape(tf.tile(tf.reshape(tf.transpose(ctx.rowWeights), [x.shape[0], ctx.members, 1]), [1, 1, width]), [x.shape[0], ...axes.slice(1).map(() => 1), ctx.members * width]);
      return { t: normalise(ctx, x, p, axes, vec, (t) => t, stat, vec, w), shared: false };
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
  wasm: batchnormKernel(),
  reference: {
    layers: (ctx) => [
      ctx.tf.layers.batchNormalization({
        axis: -1,
        momentum: ctx.args.momentum as number,
        epsilon: ctx.args.epsilon as number,
        ...initializerConfig(ctx, ['gammaInitializer', 'betaInitializer', 'movingMeanInitializer', 'movingVarianceInitializer']),
        name: ctx.name,
      }),
    ],
  },
  export: { node: exportNode },
  wgsl: normWgsl('batchnorm'),
};

const STATISTICS = ['weight', 'bias', 'running_mean', 'running_var'];

/**
 * PyTorch's BatchNorm1d, 2d (an NCHW image) or 3d, on the channels first (other ranks move their last axis
 * there and back); its momentum the share moved, Keras' the share kept. ONNX's BatchNormalization likewise.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const { shape, layout } = ctx.base;
  const features = shape[shape.length - 1];
  const tensors: ExportTensor[] = [...featureTensors(ctx, STATISTICS), { name: 'num_batches_tracked', shape: [], data: new BigInt64Array(1) }];
  if (shape.length > 4) throw new UnsupportedExportError(`${ctx.base.name}: PyTorch has no batchnorm for ${shape.length}-axis examples`);
  const self = selfOf(ctx);
  const kw = (arg: string) => kwargName(ctx.base, arg);
  const dims = layout === 'nchw' ? 2 : shape.length === 4 ? 3 : 1;
  const rank = shape.length + 1;
  const order = ctx.inputs[0].order;
  return {
    ...ctx.base,
    order,
    tensors,
    torch: {
      // Keras' momentum is the share of the running statistics kept; PyTorch's, the share moved
      init: [`${self} = nn.BatchNorm${dims}d(${features}, eps=${kw('epsilon')}, momentum=1 - ${kw('momentum')})`],
      forward: ([x]) => (layout === 'last' ? `${self}(${x}.movedim(-1, 1)).movedim(1, -1)` : `${self}(${x})`),
    },
    onnx({ g, xs: [x], out, tensors: names }) {
      const attrs = [float('epsilon', ctx.args.epsilon as number), float('momentum', ctx.args.momentum as number)];
      if (layout !== 'last') return g.op('BatchNormalization', [x, ...names()], attrs, out);
      const first = g.op('Transpose', [x], [ints('perm', toChannelsFirst(rank))]);
      return g.op('Transpose', [g.op('BatchNormalization', [first, ...names()], attrs)], [ints('perm', toChannelsLast(rank))], out);
    },
    params: (t) => featureParams(t, STATISTICS, order),
  };
}

/**
 * The generated step's batchnorm in training, per member, on [B, C] (an image's [B, H, W, C] as B*H*W
 * rows of C: channels.ts): each column's mean and variance over the rows (summed in order, then / rows, as tf.moments), the running statistics moved as Keras
 * moves them, y = (x - mean) * rsqrt(variance + epsilon) * gamma + beta. Four columns at a time: every
 * lane's arithmetic is its own column's, in the op path's order. The backward pass is autodiff's of the
 * op path: the mean takes the normalisation's gradient and then the squared deviations'.
 */
function batchnormKernel(): WasmRule {
  return {
    forward(layer) {
      const k = perPixel(layer);
      const { code: c } = k;
      const width = k.output.width;
      const [gamma, beta, movingMean, movingVariance] = (['gamma', 'beta', 'moving_mean', 'moving_variance'] as const).map((n) => k.params[n] as Local);
      if (!k.training) return byRunningStatistics(k, layer.saved('inv', width), { gamma, beta, movingMean, movingVariance });
      // the statistics, one row of C (the layer's own buffers: the per-pixel view's would be H*W times larger)
      const [mean, s, inv] = ['mean', 's', 'inv'].map((n) => rowAddress(c, layer.saved(n, width)));
      const d = k.saved('d', width);
      const count = c.local('f32');
      c.get(k.batch).f32ConvertI32S().set(count);
      const keep = c.local('f32');
      c.f32(1).get(k.hyper('momentum')).f32Sub().set(keep);
      // the mean: each column summed over the rows, then / B
      zeroRow(c, mean, width);
      overRows(c, k.batch, [k.inputs[0]], ([x]) => accumulate(c, mean, width, (v, col) => load(c, v, x, col)));
      columns(c, width, (v, col) => store(c, v, mean, col, () => (load(c, v, mean, col), c.get(count), v.splat(), v.div())));
      // the deviations, kept, and their squares summed
      zeroRow(c, s, width);
      overRows(c, k.batch, [k.inputs[0], d], ([x, dRow]) =>
        columns(c, width, (v, col) => {
          const t = v.floatLocal();
          load(c, v, x, col);
          load(c, v, mean, col);
          v.sub();
          c.set(t);
          store(c, v, dRow, col, () => c.get(t));
          store(c, v, s, col, () => (load(c, v, s, col), c.get(t), c.get(t), v.mul(), v.add()));
        }),
      );
      // the variance; the running statistics: moving -= (moving - batch) * (1 - momentum); s = variance + epsilon
      columns(c, width, (v, col) => {
        const variance = v.floatLocal();
        load(c, v, s, col);
        c.get(count);
        v.splat();
        v.div();
        c.set(variance);
        const toward = (moving: Local, batch: () => void) => store(c, v, moving, col, () => (load(c, v, moving, col), load(c, v, moving, col), batch(), v.sub(), c.get(keep), v.splat(), v.mul(), v.sub()));
        toward(movingMean, () => load(c, v, mean, col));
        toward(movingVariance, () => c.get(variance));
        store(c, v, s, col, () => (c.get(variance), c.get(k.hyper('epsilon')), v.splat(), v.add()));
        store(c, v, inv, col, () => (v.const(1), load(c, v, s, col), v.sqrt(), v.div()));
      });
      // y = ((d * inv) * gamma) + beta
      overRows(c, k.batch, [d, k.output], ([dRow, y]) =>
        columns(c, width, (v, col) => store(c, v, y, col, () => (load(c, v, dRow, col), load(c, v, inv, col), v.mul(), load(c, v, gamma, col), v.mul(), load(c, v, beta, col), v.add()))),
      );
    },
    backward(layer) {
      const k = perPixel(layer);
      const { code: c } = k;
      const width = k.output.width;
      const gamma = k.params.gamma as Local;
      const [s, inv, dInv, dMean] = ['s', 'inv', 'dinv', 'dmean'].map((n) => rowAddress(c, layer.saved(n, width)));
      const [dGamma, dBeta] = [k.grads.gamma, k.grads.beta].map((m) => rowAddress(c, m));
      const d = k.saved('d', width);
      const dx = k.dInputs[0];
      for (const l of [dGamma, dBeta, dInv, dMean]) zeroRow(c, l, width);
      overRows(c, k.batch, [k.dOutput, d, ...(dx ? [dx] : [])], ([dy, dRow, dxRow]) =>
        columns(c, width, (v, col) => {
          const [g, dd, dxh] = [v.floatLocal(), v.floatLocal(), v.floatLocal()];
          load(c, v, dy, col);
          c.set(g);
          load(c, v, dRow, col);
          c.set(dd);
          // dgamma += dy * (d * inv), dbeta += dy; dxhat = dy * gamma; dinv += dxhat * d
          store(c, v, dGamma, col, () => (load(c, v, dGamma, col), c.get(g), c.get(dd), load(c, v, inv, col), v.mul(), v.mul(), v.add()));
          store(c, v, dBeta, col, () => (load(c, v, dBeta, col), c.get(g), v.add()));
          c.get(g);
          load(c, v, gamma, col);
          v.mul();
          c.set(dxh);
          store(c, v, dInv, col, () => (load(c, v, dInv, col), c.get(dxh), c.get(dd), v.mul(), v.add()));
          if (!dxRow) return;
          // through d * inv: dx = dxhat * inv for now; the mean takes -sum(that)
          const t = v.floatLocal();
          c.get(dxh);
          load(c, v, inv, col);
          v.mul();
          c.set(t);
          store(c, v, dxRow, col, () => c.get(t));
          store(c, v, dMean, col, () => (load(c, v, dMean, col), c.get(t), v.sub()));
        }),
      );
      if (!dx) return;
      const count = c.local('f32');
      c.get(k.batch).f32ConvertI32S().set(count);
      // rsqrt's gradient: dinv / (s^1.5 * -2), then the variance's mean: / B (kept in dinv); one column at a time
      const [j, sj] = [c.local('i32'), c.local('f32')];
      c.for(j, () => c.i32(0), () => c.i32(width * 4), () => {
        c.get(s).get(j).i32Add().loadF32().set(sj);
        c.get(dInv).get(j).i32Add();
        c.get(dInv).get(j).i32Add().loadF32();
        pow1_5(c, sj);
        c.f32(-2).f32Mul().f32Div().get(count).f32Div().storeF32();
      }, 4);
      // the squared deviations' share of the mean's gradient, -sum(dv * (d * 2)), added after the normalisation's; then / B
      const dSquares = rowAddress(c, layer.saved('dsq', width));
      zeroRow(c, dSquares, width);
      overRows(c, k.batch, [d], ([dRow]) => accumulate(c, dSquares, width, (v, col) => (load(c, v, dInv, col), load(c, v, dRow, col), v.const(2), v.mul(), v.mul())));
      columns(c, width, (v, col) => store(c, v, dMean, col, () => (load(c, v, dMean, col), load(c, v, dSquares, col), v.sub(), c.get(count), v.splat(), v.div())));
      // dx += dv * (d * 2), then + dmean
      overRows(c, k.batch, [dx, d], ([dxRow, dRow]) =>
        columns(c, width, (v, col) => store(c, v, dxRow, col, () => (load(c, v, dxRow, col), load(c, v, dInv, col), load(c, v, dRow, col), v.const(2), v.mul(), v.mul(), v.add(), load(c, v, dMean, col), v.add()))),
      );
    },
  };
}

/** Outside training: y = ((x - moving_mean) * rsqrt(moving_variance + epsilon)) * gamma + beta. */
function byRunningStatistics(k: WasmContext, invRow: Mat, p: { gamma: Local; beta: Local; movingMean: Local; movingVariance: Local }): void {
  const { code: c } = k;
  const width = k.output.width;
  const inv = rowAddress(c, invRow);
  columns(c, width, (v, col) => store(c, v, inv, col, () => (v.const(1), load(c, v, p.movingVariance, col), c.get(k.hyper('epsilon')), v.splat(), v.add(), v.sqrt(), v.div())));
  overRows(c, k.batch, [k.inputs[0], k.output], ([x, y]) =>
    columns(c, width, (v, col) => store(c, v, y, col, () => (load(c, v, x, col), load(c, v, p.movingMean, col), v.sub(), load(c, v, inv, col), v.mul(), load(c, v, p.gamma, col), v.mul(), load(c, v, p.beta, col), v.add()))),
  );
}

/** A local holding the address of a Mat's first row. */
function rowAddress(c: Code, m: Mat): Local {
  const l = c.local('i32');
  address(c, m.base, m.offset);
  c.set(l);
  return l;
}

/** For each row b of the batch: the addresses of row b of each Mat. */
function overRows(c: Code, batch: Local, mats: Mat[], body: (rows: Local[]) => void): void {
  const rows = mats.map(() => c.local('i32'));
  forRows(c, batch, (b) => {
    mats.forEach((m, i) => {
      rowOf(c, m, b);
      c.set(rows[i]);
    });
    body(rows);
  });
}

/** Pushes the float(s) at column byte offset `col` of the row at `row`. */
function load(c: Code, v: Lanes, row: Local, col: number): void {
  c.get(row);
  v.load(col);
}

/** Stores what `value` pushes at column byte offset `col` of the row at `row`. */
function store(c: Code, v: Lanes, row: Local, col: number, value: () => void): void {
  c.get(row);
  value();
  v.store(col);
}

/** row[col] += what `value` pushes, for every column. */
function accumulate(c: Code, row: Local, width: number, value: (v: Lanes, col: number) => void): void {
  columns(c, width, (v, col) => store(c, v, row, col, () => (load(c, v, row, col), value(v, col), v.add())));
}

