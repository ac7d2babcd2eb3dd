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
  wasm: { unsupported: "the attention layer's per-head products and softmax over a sequence's steps" },
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
