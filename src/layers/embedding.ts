// embedding(vocab, dim, positions: T): a sequence of T token ids, [T] (float32 values that are integers in
// [0, vocab)), to its rows of a learned table, [T, dim] (tfjs-layers' Embedding, whose table is
// `embeddings`); with `positions`, a learned [T, dim] table added to every example (the position of each
// step, as a transformer's learned position embedding).
//
// The gradient of a gather is a scatter-add of dy onto the rows read. TF.js's own gradient of gather is an
// UnsortedSegmentSum, which TF.js's wasm backend lacks (netc registers one there, src/kernels/wasm-kernels.ts,
// for tfjs-layers models); ScatterNd, which sums the rows of equal ids, is on every backend, so the op path
// takes the gather's gradient by it (the gatherRows kernel, src/kernels/gather.ts).
//
// The member axis: the table is read at the member's own rows. Grouped, [N, vocab, dim] as one
// [N*vocab, dim] table, each member's ids offset by member * vocab, so one gather serves all members;
// blockdiag keeps the table's members side by side, [vocab, N*dim] (its input is shared: no kernel to fold),
// so that one gather of the shared ids gives [B, T, N*dim], blockdiag's own layout.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind, type ParamSpec } from './layer-kind.js';
import type { Tensor } from '../kernels/tf.js';
import { gatherRows } from '../kernels/gather.js';
import type { ForwardContext, Params } from './forward.js';
import { joinMembers, sharedByFolding, splitMembers } from './widened.js';
import { UnsupportedLayerError } from './reference-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { INT64, int } from '../interop/onnx-graph.js';
import { selfOf } from './export-rule.js';
import type { WasmBackwardContext, WasmContext, WasmRule } from './wasm-rule.js';
import type { Code, Local } from '../wasm/module.js';
import { columnSums, forRows, rowOf, type Mat, type ParamMat } from '../wasm/blocks.js';
import { rowColumns, zeroMat } from '../wasm/sequence.js';
import { gatherForward, gatherUpdates, type GatherLayer } from '../wgsl/gather.js';
import type { WgslLayerRule } from '../wgsl/rule.js';
import { scalarLanes, simdLanes, type Lanes } from '../wasm/lanes.js';

/** One member: [B, T] ids -> [B, T, dim], plus the positions [T, dim]. */
function single({ tf }: ForwardContext, [x]: Tensor[], p: Params): Tensor {
  const y = gatherRows(tf, p.embeddings, x, 0, 0, 0);
  return p.positions ? tf.add(y, p.positions) : y;
}

export const embedding: LayerKind = {
  name: 'embedding',
  summary: 'a learned vector for each token id: [t] to [t, dim]',
  args: [
    { name: 'vocab', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true },
    { name: 'dim', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true },
    { name: 'positions', type: { kind: 'int', min: 1 }, shapeAffecting: true },
  ],
  reads: 'previous',
  tokenIds: (args) => args.vocab as number,
  shape(ctx) {
    const input = ctx.inputs[0];
    if (input.length !== 1) {
      const hint = input.length === 3 ? '; it reads token ids, not images' : '; it reads one sequence of token ids per example';
      ctx.error(Messages.InputRank, undefined, 'embedding', 'a [steps] token-id', fmtShape(input), hint);
      return undefined;
    }
    const positions = ctx.args.values.positions as number | undefined;
    if (positions !== undefined && positions !== input[0]) {
      ctx.error(Messages.OutOfRange, 'positions', 'positions', `the input's length, ${input[0]}`, String(positions));
      return undefined;
    }
    return [input[0], ctx.args.values.dim as number];
  },
  params(args, [input]) {
    const dim = args.dim as number;
    const table: ParamSpec = { name: 'embeddings', shape: [args.vocab as number, dim], init: 'random_uniform', trainable: true };
    return args.positions === undefined ? [table] : [table, { name: 'positions', shape: [input[0], dim], init: 'random_uniform', trainable: true }];
  },
  widen: { keepsShared: false },
  forward: {
    single,
    // the members' tables as one [N*vocab, dim]: ids [N, B, T] offset by member, one gather, [N, B, T, dim]
    grouped(ctx, [x], p) {
      const { tf, members: n } = ctx;
      const [, vocab, dim] = p.embeddings.shape;
      const table = tf.reshape(p.embeddings, [n * vocab, dim]);
      const xs = x.shared ? tf.broadcastTo(x.t, [n, ...x.t.shape]) : x.t;
      const y = gatherRows(tf, table, xs, n, vocab, 0);
      return { t: p.positions ? tf.add(y, tf.expandDims(p.positions, 1)) : y, shared: false };
    },
    // the table's members side by side, [vocab, N*dim]: a shared input's ids gather [B, T, N*dim] at once
    blockdiag(ctx, [x], p) {
      const { tf } = ctx;
      const y = x.shared ? gatherRows(tf, p.embeddings, x.t, 0, 0, 0) : ownIdsBlocks(ctx, x.t, p.embeddings);
      return { t: p.positions ? tf.add(y, p.positions) : y, shared: false };
    },
    // one table: on the shared ids once, the output still shared; on members' own ids all rows at once
    shared: sharedByFolding((ctx, x, p) => single(ctx, x, p)),
  },
  wasm: embeddingWasm(),
  wgsl: embeddingWgsl(),
  reference: {
    layers({ tf, args, name, initializers }) {
      // tfjs-layers has no layer that adds a learned [steps, dim] table; netc extract then writes no TF.js model
      if (args.positions !== undefined) throw new UnsupportedLayerError(`${name}: tfjs-layers has no learned position embedding (embedding's positions:)`);
      return [tf.layers.embedding({ inputDim: args.vocab as number, outputDim: args.dim as number, embeddingsInitializer: initializers[0] as never, name })];
    },
  },
  export: { node: exportNode },
};

/**
 * blockdiag, members' own ids [B, N*T]: the [vocab, N*dim] table as [N*vocab, dim], each member's ids offset,
 * gathered to [B, N, T, dim] and put back member-major on the last axis, [B, T, N*dim].
 */
function ownIdsBlocks({ tf, members: n }: ForwardContext, x: Tensor, columns: Tensor): Tensor {
  const [vocab, width] = columns.shape;
  const dim = width / n;
  const table = tf.reshape(tf.transpose(tf.reshape(columns, [vocab, n, dim]), [1, 0, 2]), [n * vocab, dim]);
  const byMember = splitMembers(tf, x, n);
  const y = gatherRows(tf, table, byMember, n, vocab, 1);
  return joinMembers(tf, tf.transpose(y, [0, 2, 1, 3]));
}

/**
 * PyTorch's nn.Embedding on the ids as integers (ONNX: a Cast to int64 and a Gather of the table's rows);
 * the positions an nn.Parameter of the same module, `NAME.positions` in the state_dict, added (ONNX: Add).
 */
function exportNode(ctx: ExportContext): ExportNode {
  const a = ctx.args;
  const [vocab, dim] = [a.vocab as number, a.dim as number];
  const steps = ctx.base.shape[0];
  const positions = a.positions !== undefined;
  const self = selfOf(ctx);
  return {
    ...ctx.base,
    tensors: [{ name: 'weight', shape: [vocab, dim], data: ctx.param(0) }, ...(positions ? [{ name: 'positions', shape: [steps, dim], data: ctx.param(1) }] : [])],
    torch: {
      init: [`${self} = nn.Embedding(${vocab}, ${dim})`, ...(positions ? [`${self}.positions = nn.Parameter(torch.zeros(${steps}, ${dim}))`] : [])],
      forward: ([x]) => (positions ? `(${self}(${x}.long()) + ${self}.positions)` : `${self}(${x}.long())`),
    },
    onnx({ g, xs: [x], out, tensors }) {
      const [table, pos] = tensors();
      const cast = g.op('Cast', [x], [int('to', INT64)]);
      if (!positions) return g.op('Gather', [table, cast], [int('axis', 0)], out);
      return g.op('Add', [g.op('Gather', [table, cast], [int('axis', 0)]), pos], [], out);
    },
    params: (t) => [t('weight'), ...(positions ? [t('positions')] : [])],
  };
}

/**
 * The generated step's embedding, per member: each example's step t reads the table's row at its id (the
 * float truncated, as the op path's cast does, and clamped into the table, so that no id reads or writes
 * outside it), plus the positions' row t. Backward, the table's gradient is the output's gradient
 * scattered onto the rows read and added where ids repeat, example after example and step after step, as
 * the op path's ScatterNd adds its updates in order; the positions' is the output's column sums.
 */
function embeddingWasm(): WasmRule {
  return {
    forward(k) {
      const c = k.code;
      const { steps, dim } = embeddingDims(k);
      const positions = k.params.positions as ParamMat | undefined;
      eachToken(k, steps, (t, id, row) => {
        const [from, pos] = [c.local('i32'), c.local('i32')];
        tableRow(c, k.params.embeddings as ParamMat, id, from);
        if (positions) tableRow(c, positions, t, pos);
        tokenColumns(c, dim, (v, off, col) => {
          const at = (p: Local) => (c.get(p), off && c.get(off).i32Add());
          at(row.y);
          at(from);
          v.load(col);
          if (positions) (at(pos), v.load(col), v.add());
          v.store(col);
        });
      });
    },
    backward(k) {
      const c = k.code;
      const { steps, dim, vocab } = embeddingDims(k);
      const grad = k.grads.embeddings;
      // a shared table's gradient adds on to the members' before: member after member, as the op path's one scatter of every member's rows
      if (grad && !k.accumulate) zeroMat(c, () => c.i32(vocab * dim), grad);
      if (grad) scatterAdd(k, steps, dim, grad);
      if (k.grads.positions) columnSums(c, k.batch, k.dOutput, { ...k.grads.positions, width: steps * dim }, k.accumulate);
      // the ids get no gradient (the op path's are made inside the gather's gradient function)
      if (k.dInputs[0]) zeroMat(c, () => c.get(k.batch).i32(steps), k.dInputs[0]);
    },
  };
}

function embeddingDims(k: WasmContext): { steps: number; dim: number; vocab: number } {
  return { steps: k.inputShapes[0][0], dim: k.attrs.dim as number, vocab: k.attrs.vocab as number };
}

/** Rows up to this many floats wide are copied (and added) vector by vector at constant offsets. */
const UNROLLED = 64;

/**
 * rowColumns for a token's row of `dim` floats: a row of up to UNROLLED floats written out, its vectors' v128
 * loads and stores at constant offsets with no loop around them (a step's tokens each run the loop once:
 * its counter and branch cost as much as the copy); wider rows in rowColumns' loop. The same operations.
 */
function tokenColumns(c: Code, dim: number, body: (v: Lanes, off: Local | undefined, col: number) => void): void {
  if (dim > UNROLLED) return rowColumns(c, dim, body);
  const vec = dim - (dim % 4);
  if (vec) {
    const simd = simdLanes(c);
    for (let o = 0; o < vec; o += 4) body(simd, undefined, o * 4);
  }
  const scalar = scalarLanes(c);
  for (let o = vec; o < dim; o++) body(scalar, undefined, o * 4);
}

/** Sets `into` to the address of row `r` (an i32 local) of a member's parameter. */
function tableRow(c: Code, w: ParamMat, r: Local, into: Local): void {
  c.get(w.base).get(r).get(w.rowStride).i32Mul().i32Add().set(into);
}

/**
 * For each example b and step t: body(t, id, rows), with the token's id (truncated and clamped to
 * [0, vocab)) and rows.y (rows.dy in the backward pass) the address of the output's (its gradient's) step t.
 */
function eachToken(k: WasmContext, steps: number, body: (t: Local, id: Local, rows: { y: Local }) => void, y: Mat = k.output): void {
  const c = k.code;
  const { dim, vocab } = embeddingDims(k);
  const [x, out, id, t] = [c.local('i32'), c.local('i32'), c.local('i32'), c.local('i32')];
  forRows(c, k.batch, (b) => {
    rowOf(c, k.inputs[0], b);
    c.set(x);
    rowOf(c, y, b);
    c.set(out);
    c.for(t, () => c.i32(0), () => c.i32(steps), () => {
      c.get(x).loadF32().i32TruncSatF32S().set(id);
      // id < 0 ? 0 : id, then vocab - 1 < id ? vocab - 1 : id
      c.i32(0).get(id).get(id).i32(0).i32LtS().select().set(id);
      c.i32(vocab - 1).get(id).i32(vocab - 1).get(id).i32LtS().select().set(id);
      body(t, id, { y: out });
      c.get(x).i32(4).i32Add().set(x);
      c.get(out).i32(dim * 4).i32Add().set(out);
    });
  });
}

/** The table's gradient += each token's row of dy, at its id's row, in order. */
function scatterAdd(k: WasmBackwardContext, steps: number, dim: number, grad: Mat): void {
  const c = k.code;
  const row = c.local('i32');
  eachToken(k, steps, (_t, id, rows) => {
    c.get(grad.base).i32(grad.offset).i32Add().get(id).i32(dim * 4).i32Mul().i32Add().set(row);
    tokenColumns(c, dim, (v, off, col) => {
      const at = (p: Local) => (c.get(p), off && c.get(off).i32Add());
      at(row);
      at(row);
      v.load(col);
      at(rows.y);
      v.load(col);
      v.add();
      v.store(col);
    });
  }, k.dOutput);
}

/**
 * The WGSL step's embedding (src/wgsl/gather.ts): the gather forward, and its table's and positions' updates
 * by the scatter-add of the gradient; it reads the shared input's ids, so there is no input gradient.
 */
function embeddingWgsl(): WgslLayerRule<GatherLayer> {
  return {
    whyNot: (op, c) => (c.onInput && c.inputs[0].op === 'input' ? undefined : `${op.name} on values other than the input's ids`),
    onShared: 'never',
    layer(b) {
      const [steps, dim] = b.base.op.shape;
      const table = b.param('embeddings')!;
      const positions = b.param('positions');
      const clipFloats = Math.max(table ? (b.base.op.attrs.vocab as number) * dim : 0, positions ? steps * dim : 0);
      return { ...b.base, family: 'dense', activation: 'linear', keys: [], clipFloats, order: [0], table, positions, vocab: b.base.op.attrs.vocab as number, dim, steps };
    },
    forward: (w, l) => [gatherForward(w.all(), l)],
    backward: (w, l) => gatherUpdates(w.all(), l),
  };
}
