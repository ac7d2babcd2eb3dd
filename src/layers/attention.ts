// attention(heads, causal): multi-head self-attention over a sequence [T, F] -> [T, F], with its own query,
// key, value and output projections (each a kernel [F, F] and a bias [F]). Each head takes F / heads
// features; its scores q · kᵀ are scaled by 1 / sqrt(F / heads), and a causal one masks every step's future
// steps with a large negative before the softmax over steps.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind, type ParamSpec } from './layer-kind.js';
import { matMul, matMulOfData } from '../kernels/matmul.js';
import type { Tensor, TF } from '../kernels/tf.js';
import type { ForwardContext, Params } from './forward.js';
import { fromMembersFirst, groupedMembers, membersFirst, sharedByFolding } from './widened.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { denseKernel, linearWeight } from '../interop/layout.js';
import { int, ints, onnxLinear, type OnnxGraph } from '../interop/onnx-graph.js';
import { pyFloat } from '../interop/torch-code.js';
import { selfOf } from './export-rule.js';
import { lastAxisRows, type LastAxisRows, type WasmBackwardContext, type WasmContext, type WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import { addInto, columnSums, forEachFloat, forRows, loadAt, address, type Mat, type ParamMat } from '../wasm/blocks.js';
import { softmaxGradRows, softmaxRowsWide } from '../wasm/activations.js';
import { transposeEach } from '../wasm/sequence.js';
import { PER_MEMBER_MACS } from '../kernels/matmul.js';
import { rowsGradInput, rowsGradWeights, rowsProduct, tiledProduct } from '../wasm/tiles.js';

/** The four projections, in the order of the parameters (each its kernel, then its bias). */
const projections = ['query', 'key', 'value', 'output'] as const;
type Projection = (typeof projections)[number];

/** What a causal mask adds to a future step's score: its softmax weight is then exactly 0 in float32. */
export const MASKED = -1e9;

export const attention: LayerKind = {
  name: 'attention',
  summary: 'multi-head self-attention over a sequence [steps, features]',
  args: [
    // the heads split the width: every member must have as many (as a shape-affecting argument)
    { name: 'heads', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true },
    { name: 'causal', type: { kind: 'bool' }, default: false },
  ],
  reads: 'previous',
  shape(ctx) {
    const input = ctx.inputs[0];
    if (input.length !== 2) {
      ctx.error(Messages.InputRank, undefined, 'attention', 'a sequence [steps, features]', fmtShape(input), input.length === 1 ? '; attention mixes the steps of a sequence, and a flat value has none' : '');
      return undefined;
    }
    const heads = ctx.args.values.heads as number;
    if (input[1] % heads !== 0) {
      ctx.error(Messages.HeadsDoNotDivide, 'heads', 'attention', input[1], fmtShape(input), heads);
      return undefined;
    }
    return input;
  },
  params(_, [input]) {
    const f = input[1];
    return projections.flatMap((w): ParamSpec[] => [
      { name: `${w}_kernel`, shape: [f, f], init: 'glorot_uniform', trainable: true },
      { name: `${w}_bias`, shape: [f], init: 'zeros', trainable: true },
    ]);
  },
  widen: { keepsShared: false },
  forward: {
    single: (ctx, [x], p) => single(ctx, [x], p, false),
    // [N, B, T, F] with parameters [N, F, F] and [N, F]; a shared [B, T, F] input broadcast to every member
    grouped: (ctx, [a], p) => ({ t: attendMembers(ctx, groupedMembers(ctx, a), p, !!a.data), shared: false }),
    // the members' parameters lie side by side in columns ([F, N*F]): seen as [N, F, F] they run the grouped
    // rule, member-first, since the per-head products and the softmax over steps have no block-diagonal form
    blockdiag(ctx, [a], p) {
      const { tf, members: n } = ctx;
      const stacked = Object.fromEntries(Object.entries(p).map(([name, t]) => [name, t.rank === 1 ? tf.reshape(t, [n, -1]) : tf.transpose(tf.reshape(t, [t.shape[0], n, -1]), [1, 0, 2])]));
      return fromMembersFirst(ctx, attendMembers(ctx, membersFirst(ctx, a), stacked, !!a.data));
    },
    // one set of projections for every member: the examples do not interact, so the members' fold into the batch
    shared: sharedByFolding(single),
  },
  wasm: attentionWasm(),
  wgsl: { unsupported: "no WGSL kernel multiplies a sequence's steps by each other yet" },
  // tfjs-layers has no public MultiHeadAttention layer: the reference for attention is PyTorch, through the export
  reference: { unsupported: 'it has no multi-head attention layer; extract it with --format pytorch or --format onnx' },
  export: { node: exportNode },
};

/** One member, or every member's rows folded into the batch (a shared layer): [B, T, F] with parameters [F, F] and [F]. */
function single(ctx: ForwardContext, [x]: Tensor[], p: Params, data: boolean): Tensor {
  const { tf } = ctx;
  const one = Object.fromEntries(Object.entries(p).map(([name, t]) => [name, tf.expandDims(t, 0)]));
  return tf.squeeze(attendMembers(ctx, tf.expandDims(x, 0), one, data), [0]);
}

/** x [N, B, T, F] -> [N, B, T, F], each member with its own parameters [N, F, F] and [N, F]; `data`: x needs no gradient. */
function attendMembers(ctx: ForwardContext, x: Tensor, p: Params, data: boolean): Tensor {
  const { tf } = ctx;
  const [n, b, t, f] = x.shape as number[];
  const rows = tf.reshape(x, [n, b * t, f]);
  const project = (w: Projection, y: Tensor, ofData: boolean) => tf.add((ofData ? matMulOfData : matMul)(tf, y, p[`${w}_kernel`]), tf.expandDims(p[`${w}_bias`], 1));
  const sequences = (y: Tensor) => tf.reshape(y, [n * b, t, f]);
  const [q, k, v] = (['query', 'key', 'value'] as const).map((w) => sequences(project(w, rows, data)));
  const mixed = attend(tf, q, k, v, ctx.attrs.heads as number, !!ctx.attrs.causal);
  return tf.reshape(project('output', tf.reshape(mixed, [n, b * t, f]), false), [n, b, t, f]);
}

/**
 * softmax(q · kᵀ / sqrt(d) + mask) · v per head, for S sequences [S, T, F] of the projections: the heads are
 * d = F / heads features each, folded into the sequences ([S*heads, T, d]) for one batched product.
 */
function attend(tf: TF, q: Tensor, k: Tensor, v: Tensor, heads: number, causal: boolean): Tensor {
  const [s, t, f] = q.shape as number[];
  const d = f / heads;
  const split = (y: Tensor, perm: number[], shape: number[]) => tf.reshape(tf.transpose(tf.reshape(y, [s, t, heads, d]), perm), shape);
  const scores = tf.mul(matMul(tf, split(q, [0, 2, 1, 3], [s * heads, t, d]), split(k, [0, 2, 3, 1], [s * heads, d, t])), tf.scalar(1 / Math.sqrt(d)));
  const weights = tf.softmax(causal ? tf.add(scores, tf.tensor(causalMask(t), [t, t])) : scores);
  const mixed = matMul(tf, weights, split(v, [0, 2, 1, 3], [s * heads, t, d]));
  return tf.reshape(tf.transpose(tf.reshape(mixed, [s, heads, t, d]), [0, 2, 1, 3]), [s, t, f]);
}

/** [T, T], row i (a query step) with MASKED at the steps after i and 0 elsewhere. */
export function causalMask(t: number): number[] {
  return Array.from({ length: t * t }, (_, at) => (at % t > Math.floor(at / t) ? MASKED : 0));
}

// --- the generated step ---------------------------------------------------------------------------

interface Dims {
  steps: number;
  features: number;
  heads: number;
  /** each head's features, F / heads */
  depth: number;
  /** 1 / sqrt(depth) in float32, as tf.scalar holds it */
  scale: number;
  causal: boolean;
  /**
   * the per-head products ([T, d] x [d, T] and [T, T] x [T, d], and their gradients') are TF.js's batched
   * kernel, which sums in blocks of 48, below PER_MEMBER_MACS; above it one 2-D product per head (in order)
   */
  blocked: boolean;
}

function dimsOf(k: WasmContext): Dims {
  const [steps, features] = k.inputShapes[0];
  const heads = k.attrs.heads as number;
  const depth = features / heads;
  return { steps, features, heads, depth, scale: Math.fround(1 / Math.sqrt(depth)), causal: !!k.attrs.causal, blocked: steps * steps * depth < PER_MEMBER_MACS };
}

/** The forward pass's buffers, which the backward pass reads: [B, T*F] each, the weights [B, heads*T*T]. */
function forwardBuffers(k: WasmContext, d: Dims) {
  const [tf, tt] = [d.steps * d.features, d.heads * d.steps * d.steps];
  // kT: each example's keys transposed, [F, T]: head h's [d, T] block is rows h*d of it
  return { q: k.saved('q', tf), k: k.saved('k', tf), v: k.saved('v', tf), kT: k.saved('kT', tf), p: k.saved('p', tt), mixed: k.saved('mixed', tf) };
}

/** The backward pass's scratch: the heads' gradients, the transposes the products read, a kernel transposed. */
function backwardBuffers(k: WasmBackwardContext, d: Dims) {
  const [tf, tt] = [d.steps * d.features, d.heads * d.steps * d.steps];
  const saved = (name: string, width: number) => k.saved(name, width);
  return {
    dMixed: saved('dmixed', tf),
    vT: saved('vT', tf),
    dp: saved('dp', tt),
    pT: saved('pT', tt),
    dq: saved('dq', tf),
    dk: saved('dk', tf),
    dv: saved('dv', tf),
    dx: saved('dx', tf),
    kernelT: saved('kernelT', Math.ceil((d.features * d.features) / k.maxBatch)),
  };
}

/**
 * The generated step's attention, per member, as attendMembers computes it operation for operation: the
 * query, key and value projections as dense layers on the B*T rows, then per example and head the scores
 * q · kᵀ (k transposed first, so that each score row is a product's SIMD row), times the scale, plus the
 * mask, the softmax row by row, its product with v, and the output projection of the heads side by side.
 * Backward as autodiff takes it: the output projection's gradients, per head dP = dM · vᵀ and
 * dv = Pᵀ · dM, the softmax's gradient times the scale, dq = dS · k and dk = dSᵀ · q, the projections'
 * gradients, and dx as the tape adds its three shares: (value's + key's) + query's.
 */
function attentionWasm(): WasmRule {
  return {
    // a shared layer's kernels' gradients are summed over every member's rows as one batch, whose blocks of 48
    // run across members: member after member cannot add up in that order
    whyNotShared: "a shared attention layer (the op path sums its projections' gradients over every member's rows at once)",
    text(attrs, [[steps, features]], maxBatch) {
      const heads = attrs.heads as number;
      const depth = features / heads;
      const order = (inner: number, blocked: boolean) => (blocked && inner > 48 ? 'in blocks of 48' : 'in order');
      const perHead = steps * steps * depth < PER_MEMBER_MACS;
      const projections = order(features, maxBatch * steps * features * features < PER_MEMBER_MACS);
      return `; ${heads} heads of ${depth} features: the query, key and value projections on B*${steps} rows (sums over ${features} inputs ${projections}), then per example and head the scores q · kᵀ (over ${depth}, ${order(depth, perHead)}), times 1 / sqrt(${depth})${attrs.causal ? ', plus the causal mask' : ''}, the softmax of each row, times v (over ${steps} steps, ${order(steps, perHead)}), and the output projection of the heads side by side; backward as autodiff takes it, dx's shares added value, key, query`;
    },
    forward(k) {
      const { code: c } = k;
      const d = dimsOf(k);
      const r = lastAxisRows(k);
      const b = forwardBuffers(k, d);
      const x = r.of(k.inputs[0]);
      for (const [w, y] of [['query', b.q], ['key', b.k], ['value', b.v]] as const) c.outlined(() => project(k, r, w, x, y));
      c.outlined(() => transposeEach(c, k.batch, d.steps, d.features, b.k, b.kT));
      c.outlined(() => eachHead(c, k.batch, d, (at) => product(c, d, at.cols(b.q), at.block(b.kT, d.depth), at.block(b.p, d.steps), d.depth, d.steps)));
      c.outlined(() => scoresToWeights(c, k.batch, d, b.p));
      c.outlined(() => eachHead(c, k.batch, d, (at) => product(c, d, at.block(b.p, d.steps), at.cols(b.v), at.cols(b.mixed), d.steps, d.depth)));
      c.outlined(() => project(k, r, 'output', r.of(b.mixed), k.output));
    },
    backward(k) {
      const { code: c } = k;
      const d = dimsOf(k);
      const r = lastAxisRows(k);
      const b = forwardBuffers(k, d);
      const g = backwardBuffers(k, d);
      projectionGrads(k, r, 'output', r.of(b.mixed), r.of(k.dOutput), r.of(g.dMixed), g.kernelT);
      headGrads(k, d, b, g);
      const x = r.of(k.inputs[0]);
      const dx = k.dInputs[0];
      // dx: the value's share, then the key's and the query's added on, as the tape adds them (last reader first)
      projectionGrads(k, r, 'value', x, r.of(g.dv), dx && r.of(dx), g.kernelT);
      projectionGrads(k, r, 'key', x, r.of(g.dk), dx && r.of(g.dx), g.kernelT);
      if (dx) c.outlined(() => addInto(c, k.batch, g.dx, dx));
      projectionGrads(k, r, 'query', x, r.of(g.dq), dx && r.of(g.dx), g.kernelT);
      if (dx) c.outlined(() => addInto(c, k.batch, g.dx, dx));
    },
  };
}

/** y = x · kernel + bias for one of the projections, on the B*T rows (x seen as rows, y a [B, T*F] buffer). */
function project(k: WasmContext, r: LastAxisRows, w: Projection, x: Mat, y: Mat): void {
  rowsProduct(k.code, r.rows, x, r.kernel(k.params[`${w}_kernel`] as ParamMat), k.params[`${w}_bias`] as Local, r.of(y));
}

/** A projection's kernel and bias gradients from its dy, and its input's gradient into dx where one is wanted. */
function projectionGrads(k: WasmBackwardContext, r: LastAxisRows, w: Projection, x: Mat, dy: Mat, dx: Mat | undefined, kernelT: Mat): void {
  const c = k.code;
  const kernel = k.params[`${w}_kernel`] as ParamMat;
  c.outlined(() => rowsGradWeights(c, r.rows, x, dy, k.grads[`${w}_kernel`], r.blockedRows(kernel)));
  c.outlined(() => columnSums(c, r.rows, dy, k.grads[`${w}_bias`]));
  if (dx) c.outlined(() => rowsGradInput(c, r.rows, dy, r.kernel(kernel), dx, kernelT));
}

/** Backward through the heads: from dMixed, the gradients of the query, key and value projections' outputs. */
function headGrads(k: WasmBackwardContext, d: Dims, b: ReturnType<typeof forwardBuffers>, g: ReturnType<typeof backwardBuffers>): void {
  const { code: c, batch } = k;
  const { steps: T, depth } = d;
  const blocks = c.local('i32');
  c.get(batch).i32(d.heads).i32Mul().set(blocks);
  // dP = dM · vᵀ and dv = Pᵀ · dM (Pᵀ: each head's weights transposed)
  c.outlined(() => transposeEach(c, batch, T, d.features, b.v, g.vT));
  c.outlined(() => eachHead(c, batch, d, (at) => product(c, d, at.cols(g.dMixed), at.block(g.vT, depth), at.block(g.dp, T), depth, T)));
  c.outlined(() => transposeEach(c, blocks, T, T, b.p, g.pT));
  c.outlined(() => eachHead(c, batch, d, (at) => product(c, d, at.block(g.pT, T), at.cols(g.dMixed), at.cols(g.dv), T, depth)));
  // through the softmax, then the scale (the mask's add passes the gradient as it is)
  c.outlined(() => {
    const [rows, dp] = [c.local('i32'), { ...g.dp, width: T }];
    c.get(blocks).i32(T).i32Mul().set(rows);
    softmaxGradRows(c, rows, { ...b.p, width: T }, dp, dp);
    scaleFloats(c, blocks, T * T, g.dp, d.scale);
  });
  // dq = dS · k, dk = dSᵀ · q
  c.outlined(() => eachHead(c, batch, d, (at) => product(c, d, at.block(g.dp, T), at.cols(b.k), at.cols(g.dq), T, depth)));
  c.outlined(() => transposeEach(c, blocks, T, T, g.dp, g.pT));
  c.outlined(() => eachHead(c, batch, d, (at) => product(c, d, at.block(g.pT, T), at.cols(b.q), at.cols(g.dk), T, depth)));
}

/** Where one head of one example lies in a buffer, each view a Mat of T rows at its own base. */
interface HeadAt {
  /** the head's d columns of each of the example's T rows, in a [B, T*F] buffer */
  cols(m: Mat): Mat;
  /** the head's [rows, T] block (rows: T, or d in a transposed [F, T]) of a [B, heads*rows*T] buffer */
  block(m: Mat, rows: number): Mat;
}

/** body(at) for every example b of the batch and head h, at its views of (b, h). */
function eachHead(c: Code, batch: Local, d: Dims, body: (at: HeadAt) => void): void {
  const [b, h] = [c.local('i32'), c.local('i32')];
  const { steps: T, features: F, heads, depth } = d;
  const view = (m: Mat, offset: () => void, width: number): Mat => {
    const base = c.local('i32');
    address(c, m.base, m.offset);
    offset();
    c.i32Add().set(base);
    return { base, offset: 0, width };
  };
  c.for(b, () => c.i32(0), () => c.get(batch), () => {
    c.for(h, () => c.i32(0), () => c.i32(heads), () => {
      body({
        cols: (m) => view(m, () => c.get(b).i32(T * F * 4).i32Mul().get(h).i32(depth * 4).i32Mul().i32Add(), F),
        block: (m, rows) => view(m, () => c.get(b).i32(heads).i32Mul().get(h).i32Add().i32(rows * T * 4).i32Mul(), T),
      });
    });
  });
}

/**
 * y = x · w for one head, T rows: x's `inner` columns, w [inner, width] (a view read row by row, at its
 * stride), summed as the op path's per-head product sums them (denseForward: in order, or in blocks of 48),
 * in tiles.ts's register tiles (the same sums in the same order; 16-column slices of denseForward were half
 * as fast on the transformer bench's heads).
 */
function product(c: Code, d: Dims, x: Mat, w: Mat, y: Mat, inner: number, width: number): void {
  const [rows, stride] = [c.local('i32'), c.local('i32')];
  c.i32(d.steps).set(rows);
  c.i32(w.width * 4).set(stride);
  c.outlined(() => tiledProduct(c, rows, x, { base: w.base, rowStride: stride, rows: inner, width, blocked: d.blocked, stride: w.width * 4 }, y));
}

/**
 * The scores [B, heads, T, T] into the attention weights, in place: times the scale (tf.mul), plus the mask
 * (tf.add: MASKED after a row's own step, 0 up to it), then the softmax of each row.
 */
function scoresToWeights(c: Code, batch: Local, d: Dims, p: Mat): void {
  const T = d.steps;
  const blocks = c.local('i32');
  c.get(batch).i32(d.heads).i32Mul().set(blocks);
  if (!d.causal) scaleFloats(c, blocks, T * T, p, d.scale);
  else {
    const [t1, t2, at] = [c.local('i32'), c.local('i32'), c.local('i32')];
    forRows(c, blocks, (m) => {
      address(c, p.base, p.offset, m, T * T * 4);
      c.set(at);
      c.for(t1, () => c.i32(0), () => c.i32(T), () => {
        c.for(t2, () => c.i32(0), () => c.i32(T), () => {
          c.get(at).get(at).loadF32().f32(d.scale).f32Mul();
          c.f32(MASKED).f32(0).get(t2).get(t1).i32GtS().select().f32Add().storeF32();
          c.get(at).i32(4).i32Add().set(at);
        });
      });
    });
  }
  const rows = c.local('i32');
  c.get(blocks).i32(T).i32Mul().set(rows);
  softmaxRowsWide(c, rows, { ...p, width: T }, { ...p, width: T });
}

/** m *= scale over `blocks` * `size` floats (`blocks` an i32 local). */
function scaleFloats(c: Code, blocks: Local, size: number, m: Mat, scale: number): void {
  forEachFloat(c, () => c.get(blocks).i32(size).i32Mul(), (v, off) => {
    address(c, m.base, m.offset, off);
    loadAt(v, m, off);
    v.const(scale);
    v.mul();
    v.store();
  });
}

// --- the export ---------------------------------------------------------------------------------------

const SELF_ATTENTION = `

def self_attention(x, m, heads, scale, causal):
    """Multi-head self-attention over x [B, T, F] as netc computes it: heads of F / heads features, the
    scores scaled by \`scale\` (1 / sqrt(F / heads)), a causal one's future steps masked before the softmax."""
    b, t, f = x.shape

    def split(y):
        return y.reshape(b, t, heads, f // heads).transpose(1, 2)

    scores = torch.matmul(split(m["query"](x)), split(m["key"](x)).transpose(2, 3)) * scale
    if causal:
        scores = scores + torch.full((t, t), ${pyFloat(MASKED)}, dtype=x.dtype, device=x.device).triu(1)
    y = torch.matmul(torch.softmax(scores, dim=-1), split(m["value"](x)))
    return m["output"](y.transpose(1, 2).reshape(b, t, f))
`;

/**
 * Decomposed ops, in PyTorch and ONNX alike: four Linear projections (a ModuleDict of them, state_dict
 * `NAME.query.weight` ...), the heads split off by reshapes, the scaled scores, the mask, the softmax.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [t, f] = ctx.base.shape;
  const heads = ctx.args.heads as number;
  const causal = !!ctx.args.causal;
  const scale = 1 / Math.sqrt(f / heads);
  const self = selfOf(ctx);
  const linear = `nn.Linear(${f}, ${f})`;
  return {
    ...ctx.base,
    tensors: projections.flatMap((w, i) => [
      { name: `${w}.weight`, shape: [f, f], data: linearWeight(ctx.param(2 * i), f, f, undefined) },
      { name: `${w}.bias`, shape: [f], data: ctx.param(2 * i + 1) },
    ]),
    torch: {
      init: [`${self} = nn.ModuleDict({${projections.map((w) => `"${w}": ${linear}`).join(', ')}})`],
      forward: ([x]) => `self_attention(${x}, ${self}, ${heads}, ${pyFloat(Math.fround(scale))}, ${causal ? 'True' : 'False'})`,
      helper: SELF_ATTENTION,
    },
    onnx: ({ g, xs: [x], out, tensors }) => onnxAttention(g, x, tensors(), { t, f, heads, scale, causal }, out),
    params: (tensor) => projections.flatMap((w) => [denseKernel(tensor(`${w}.weight`), f, f, undefined), tensor(`${w}.bias`)]),
  };
}

/** The ONNX nodes of attention on x [B, T, F]: MatMul and Add, Reshape and Transpose, Softmax, the mask added. */
function onnxAttention(g: OnnxGraph, x: string, weights: string[], a: { t: number; f: number; heads: number; scale: number; causal: boolean }, out: string): string {
  const { t, f, heads } = a;
  const linear = (i: number, v: string, name?: string) => onnxLinear(g, v, weights.slice(2 * i, 2 * i + 2), name);
  // [B, T, F] -> [B, T, heads, d] -> the perm's order (0 in Reshape's shape keeps the batch)
  const split = (v: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [v, g.constant([0, t, heads, f / heads], 'int64')])], [ints('perm', perm)]);
  let scores = g.op('Mul', [g.op('MatMul', [split(linear(0, x), [0, 2, 1, 3]), split(linear(1, x), [0, 2, 3, 1])]), g.constant([a.scale])]);
  if (a.causal) scores = g.op('Add', [scores, g.constant(causalMask(t), 'float', [t, t])]);
  const mixed = g.op('MatMul', [g.op('Softmax', [scores], [int('axis', -1)]), split(linear(2, x), [0, 2, 1, 3])]);
  const joined = g.op('Reshape', [g.op('Transpose', [mixed], [ints('perm', [0, 2, 1, 3])]), g.constant([0, t, f], 'int64')]);
  return linear(3, joined, out);
}
