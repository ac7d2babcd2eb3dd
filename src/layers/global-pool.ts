// global_avg_pool() and global_max_pool(): the mean or the maximum of each channel over an image's
// height and width, [H, W, C] -> [C] (tfjs-layers' GlobalAveragePooling2D and GlobalMaxPooling2D, which
// are tf.mean and tf.max over axes 1 and 2, as the op path here).
//
// The generated step sums as TF.js's wasm Mean kernel does: the reduced axes moved innermost, each
// output's cells added in row-major order from 0, then divided by the count (not multiplied by its
// inverse); Max keeps the first value and takes a later one only where it is greater. Backward, as
// TF.js's gradients: the mean's dx = dy / count in every cell; the maximum's dx = dy * (x == y ? 1 : 0),
// so tied cells each get dy, and the other cells dy * 0 (-0 under a negative dy).
//
// The member axis: the pooled axes are the example's own, so grouped [N, B, H, W, C] reduces its axes
// 2 and 3 and blockdiag's folded [B, H, W, N*C] pools as it is, to [B, N*C] (member-major, as flatten's).
//
// Over the steps of a sequence, [T, F] -> [F] (GlobalAveragePooling1D and GlobalMaxPooling1D): the op path
// and the generated step reduce every axis of an example but the last, so a sequence's steps are an image's
// cells in one row; the export reduces its dim 1 (a sequence is channels last there).
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind } from './layer-kind.js';
import { product } from './spatial.js';
import type { WasmBackwardContext, WasmContext, WasmRule } from './wasm-rule.js';
import type { TF, Tensor } from '../kernels/tf.js';
import { columns, forRows, rowOf, type Mat } from '../wasm/blocks.js';
import type { Lanes } from '../wasm/lanes.js';
import type { Code, Local } from '../wasm/module.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { int, ints } from '../interop/onnx-graph.js';
import { avgpool2d, maxpool2d } from './pool2d.js';
import { hasRule, type Rule } from './layer-kind.js';
import type { WgslOp } from '../wgsl/chain.js';
import type { SpatialLayer } from '../wgsl/conv.js';
import type { WgslLayerRule, WgslRule } from '../wgsl/rule.js';

function globalPool(max: boolean): LayerKind {
  const name = max ? 'global_max_pool' : 'global_avg_pool';
  /** x's axes from `first` up to its channels reduced: its example's spatial axes, after the batch (and member) axes */
  const reduce = (tf: TF, x: Tensor, first: number): Tensor => {
    const axes = Array.from({ length: x.rank - 1 - first }, (_, i) => first + i);
    return max ? tf.max(x, axes) : tf.mean(x, axes);
  };
  return {
    name,
    summary: `the ${max ? 'maximum' : 'mean'} of each channel over [height, width] or over steps: [h, w, c] or [t, c] to [c]`,
    args: [],
    reads: 'previous',
    shape(ctx) {
      const input = ctx.inputs[0];
      if (input.length !== 3 && input.length !== 2) {
        const why = input.length === 1 ? '; it only applies to images, not flat features' : '';
        ctx.error(Messages.InputRank, undefined, name, 'a spatial [height, width, channels]', fmtShape(input), why);
        return undefined;
      }
      return [input[input.length - 1]];
    },
    params: () => [],
    widen: { keepsShared: true },
    forward: {
      single: ({ tf }, [x]) => reduce(tf, x, 1),
      grouped: ({ tf }, [x]) => ({ t: reduce(tf, x.t, x.shared ? 1 : 2), shared: x.shared }),
      blockdiag: ({ tf }, [x]) => ({ t: reduce(tf, x.t, 1), shared: x.shared }),
    },
    wasm: globalPoolKernel(max),
    reference: {
      layers({ tf, name: layer, inputShapes: [input] }) {
        if (input.length === 2) return [max ? tf.layers.globalMaxPooling1d({ name: layer }) : tf.layers.globalAveragePooling1d({ name: layer })];
        return [max ? tf.layers.globalMaxPooling2d({ name: layer }) : tf.layers.globalAveragePooling2d({ name: layer })];
      },
    },
    export: { node: (ctx) => globalPoolNode(ctx, max) },
    wgsl: globalWgsl(max),
  };
}

/**
 * The NCHW image's mean or maximum over its height and width (dims 2 and 3): [B, C], the channels in netc's
 * order. ONNX's GlobalAveragePool and GlobalMaxPool keep [B, C, 1, 1], flattened after them. A sequence,
 * [B, T, F] there as here, over its dim 1 (ONNX: ReduceMean or ReduceMax over axis 1).
 */
function globalPoolNode(ctx: ExportContext, max: boolean): ExportNode {
  if (ctx.inputs[0].shape.length === 2) {
    return {
      ...ctx.base,
      torch: { init: [], forward: ([x]) => `${x}.${max ? 'amax' : 'mean'}(dim=1)` },
      onnx: ({ g, xs: [x], out }) => g.op(max ? 'ReduceMax' : 'ReduceMean', [x], [ints('axes', [1]), int('keepdims', 0)], out),
    };
  }
  return {
    ...ctx.base,
    torch: { init: [], forward: ([x]) => `${x}.${max ? 'amax' : 'mean'}(dim=(2, 3))` },
    onnx: ({ g, xs: [x], out }) => g.op('Flatten', [g.op(max ? 'GlobalMaxPool' : 'GlobalAveragePool', [x])], [int('axis', 1)], out),
  };
}

/** Each row of the batch, channel group by channel group: body(v, col, rows), rows[i] the address of mats[i]'s row. */
function byChannels(k: WasmContext, mats: Mat[], body: (v: Lanes, col: number, rows: Local[]) => void): void {
  const c = k.code;
  const rows = mats.map(() => c.local('i32'));
  forRows(c, k.batch, (b) => {
    mats.forEach((m, i) => {
      rowOf(c, m, b);
      c.set(rows[i]);
    });
    columns(c, k.shape[0], (v, col) => body(v, col, rows));
  });
}

/** for each cell from `from` on, in row-major order: body(off), `off` the cell's byte offset in an image's row */
function eachCell(c: Code, channels: number, cells: number, from: number, body: (off: Local) => void): void {
  const off = c.local('i32');
  c.for(off, () => c.i32(from * channels * 4), () => c.i32(cells * channels * 4), () => body(off), channels * 4);
}

/** Pushes the channel group's value at the cell: [row + off + col]. */
function loadCell(v: Lanes, row: Local, off: Local, col: number): void {
  v.code.get(row).get(off).i32Add();
  v.load(col);
}

function globalPoolKernel(max: boolean): WasmRule {
  const cellsOf = (k: WasmContext) => product(k.inputShapes[0].slice(0, -1));
  return {
    forward(k) {
      const c = k.code;
      const [cells, channels] = [cellsOf(k), k.shape[0]];
      byChannels(k, [k.inputs[0], k.output], (v, col, [x, y]) => {
        const [acc, value] = [v.floatLocal(), v.floatLocal()];
        // the maximum starts from the first cell, the sum from 0
        if (max) {
          c.get(x);
          v.load(col);
        } else v.const(0);
        c.set(acc);
        eachCell(c, channels, cells, max ? 1 : 0, (off) => {
          loadCell(v, x, off, col);
          if (max) {
            // acc = value > acc ? value : acc
            c.tee(value).get(acc).get(value).get(acc);
            v.gt();
            v.select();
          } else {
            c.get(acc);
            v.add();
          }
          c.set(acc);
        });
        c.get(y).get(acc);
        if (!max) {
          v.const(cells);
          v.div();
        }
        v.store(col);
      });
    },
    backward(k: WasmBackwardContext) {
      const dx = k.dInputs[0];
      if (!dx) return;
      const c = k.code;
      const [cells, channels] = [cellsOf(k), k.shape[0]];
      const mats = max ? [k.dOutput, dx, k.inputs[0], k.output] : [k.dOutput, dx];
      byChannels(k, mats, (v, col, [dyRow, dxRow, x, y]) => {
        // the mean's dy / count, the same in every cell; the maximum's dy and y
        const [d, m] = [v.floatLocal(), v.floatLocal()];
        c.get(dyRow);
        v.load(col);
        if (!max) {
          v.const(cells);
          v.div();
        }
        c.set(d);
        if (max) {
          c.get(y);
          v.load(col);
          c.set(m);
        }
        eachCell(c, channels, cells, 0, (off) => {
          c.get(dxRow).get(off).i32Add().get(d);
          if (max) {
            // dy * (x == y ? 1 : 0)
            v.const(1);
            v.const(0);
            loadCell(v, x, off, col);
            c.get(m);
            v.eq();
            v.select();
            v.mul();
          }
          v.store(col);
        });
      });
    },
  };
}

export const globalAvgPool = globalPool(false);
export const globalMaxPool = globalPool(true);

/** An image [H, W, C], or a sequence [T, C] as the image of one row [1, T, C]. */
const asImage = (s: number[]): number[] => (s.length === 2 ? [1, ...s] : s);

/** A global pool's op as a pool's whose one window is its input's image: [H, W] (or [1, T]), valid, to [1, 1, C]. */
function asPool(op: WgslOp, input: number[]): WgslOp {
  const [h, w, c] = asImage(input);
  return { ...op, attrs: { ...op.attrs, size: [h, w], stride: [h, w], padding: 'valid' }, shape: [1, 1, c] };
}

/**
 * The WGSL step's global pool: the pool kernels (src/wgsl/conv.ts) with one window over the whole image
 * (a sequence's steps being an image of one row); its value [C] is the pool's [1, 1, C] in the same
 * memory. The mean's gradient is dy times 1 / count (the op path's divides by it: an ulp apart at most);
 * the maximum's goes to every input equal to it, as TF.js's gradient of tf.max, not to the last largest.
 */
function globalWgsl(max: boolean): Rule<WgslRule> {
  const pool = (max ? maxpool2d : avgpool2d).wgsl;
  if (!hasRule(pool) || pool.alias) return pool;
  const inner = pool as WgslLayerRule<SpatialLayer>;
  const rule: WgslLayerRule<SpatialLayer> = {
    ...inner,
    ...(inner.whyNot ? { whyNot: (op, c) => inner.whyNot!(asPool(op, c.inputs[0].shape), c) } : {}),
    layer(b) {
      const inputs = b.inputs.map((i) => ({ ...i, shape: asImage(i.shape) }));
      const l = inner.layer({ ...b, base: { ...b.base, op: asPool(b.base.op, b.inputs[0].shape) }, inputs });
      return { ...l, op: b.base.op, ...(max ? { ties: true as const } : {}) };
    },
  };
  return rule as WgslRule;
}
