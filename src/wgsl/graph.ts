// The WGSL step's branches: `add` of labelled values (flat ones or images), `concat` of flat ones or of images
// (each cell's channels joined: the flat rule on B*H*W rows of channels), and a value read by more than one
// layer (`from:` branches, a merge's operands). A merge is a layer of the chain like any other, with no
// parameters and a linear "activation" (its gradient is its values' gradient as it lies):
//
//   forward    one invocation per (member, row, unit): add sums its operands in order, ((a + b) + c);
//              concat copies unit j from the operand whose columns hold it
//   backward   one kernel per operand that needs a gradient: add hands it the sum's gradient, concat its
//              own columns of the joined gradient
//
// A value read by k layers has k gradients: the first (in the op path's backward order) goes to its own
// gradient region, each other one to a region of its own, and before the value's own backward kernels one
// kernel adds them up, ((g1 + g2) + g3), as TF.js's autodiff accumulates them (add(accumulated, next),
// op after op from the loss; within a merge, add's operands from the last one back to the second-to-last,
// then the first two; concat's in order).
//
// The kinds' rules (src/layers/merge.ts) build the layer and call these; what they share with the step (the
// kernel text) the step hands them.
import { u, type ChainValues, type LayerInput, type WgslOp } from './chain.js';
import type { KernelWriter } from './kernel-text.js';

export type Merge = 'add' | 'concat';

/** One operand of a merge: where its values are, its width, and its first column in the merge's row (concat). */
export interface MergePart {
  input: LayerInput;
  width: number;
  offset: number;
}

/** An add or concat of the chain, as the kernels see it. */
export interface MergeLayer extends ChainValues {
  family: 'merge';
  merge: Merge;
  parts: MergePart[];
  /** cells per example: a concat of images [H, W, C] joins each cell's channels (H*W; its parts' widths are their channels), else 1 */
  cells: number;
}

/** A merge's cells per example: H*W for a concat of images (of shape [H, W, C]), else 1. */
export const mergeCells = (merge: Merge, shape: readonly number[]): number => (merge === 'concat' && shape.length === 3 ? shape[0] * shape[1] : 1);

/**
 * The merge kernels' view of a concat of images: the flat rule on rows of its channels (width the joined
 * channels; the caller's writer counts B*H*W rows). [N, B, H, W, C] lies as [N, B*H*W, C] already.
 */
export const perCellMerge = (l: MergeLayer): MergeLayer => (l.cells === 1 ? l : { ...l, width: l.width / l.cells, inWidth: l.inWidth / l.cells });

/** What the merge kernels borrow from the step. */
export interface GraphWriter<K> {
  n: number;
  batch: number;
  kernel(name: string, invocations: number): KernelWriter<K>;
}

/** Why the WGSL step does not run this merge, or undefined where it does. */
export function whyNotMerge(merge: Merge, op: WgslOp, inputs: WgslOp[]): string | undefined {
  // add is elementwise whatever the shape (an image's row-major cells alike); concat joins rows: flat ones, or an image's cells (its channels joined)
  const odd = merge === 'concat' && inputs.find((o) => o.shape.length !== 1 && o.shape.length !== 3);
  if (odd) return `the concat layer ${op.name} of values of shape [${odd.shape.join(', ')}]`;
  // every operand the shared input: the value is every member's (the op path keeps it shared)
  if (inputs.every((i) => i.shared)) return `the ${op.op} layer ${op.name} of the shared input alone`;
  return undefined;
}

/** The `merge` layer of op, reading `parts` (their widths per cell; their offsets are worked out here). */
export function mergeLayer(l: Omit<ChainValues, 'input' | 'inWidth' | 'family' | 'activation' | 'keys' | 'clipFloats' | 'order'>, merge: Merge, parts: Omit<MergePart, 'offset'>[]): MergeLayer {
  const cells = mergeCells(merge, l.op.shape);
  let offset = 0;
  const placed = parts.map((p) => {
    const part = { ...p, offset: merge === 'concat' ? offset : 0 };
    offset += p.width;
    return part;
  });
  // a merge's "activation" is linear: its gradient is its values' gradient as it lies
  const own = { family: 'merge' as const, activation: 'linear', keys: [], clipFloats: 0, order: gradientOrder(merge, parts.length) };
  return { ...l, ...own, input: placed[0].input, inWidth: placed[0].width * cells, merge, parts: placed, cells };
}

/** Member m's element (row b, unit `unit`) of an operand. */
function partAt<K>(k: KernelWriter<K>, w: GraphWriter<K>, p: MergePart, unit: string): string {
  if (p.input.buffer === 'x') return `${k.buf('x')}[b * ${u(p.width)} + ${unit}]`;
  return `${k.buf('acts')}[${u(p.input.at)} + (m * ${u(w.batch)} + b) * ${u(p.width)} + ${unit}]`;
}

const elementLines = (w: { batch: number }, width: number): string[] => [`  let m = idx / ${u(w.batch * width)};`, `  let b = (idx / ${u(width)}) % ${u(w.batch)};`, `  let j = idx % ${u(width)};`];

/** The merge's forward pass, elementwise: one invocation per member, row and unit. */
export function mergeForward<K>(w: GraphWriter<K>, l: MergeLayer): K {
  const names = l.op.inputs.length;
  const k = w.kernel(`forward ${l.op.name}: ${l.merge} of ${names} values, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const acts = k.buf('acts');
  const lines = elementLines(w, l.width);
  if (l.merge === 'add') {
    lines.push(`  var v = ${partAt(k, w, l.parts[0], 'j')};`, ...l.parts.slice(1).map((p) => `  v = v + ${partAt(k, w, p, 'j')};`));
  } else {
    // the operand whose columns hold unit j
    lines.push('  var v = 0.0;');
    l.parts.forEach((p, i) => {
      const test = i === l.parts.length - 1 ? '' : `if (j < ${u(p.offset + p.width)}) `;
      lines.push(`  ${i ? '} else ' : ''}${test}{`, `    v = ${partAt(k, w, p, `j - ${u(p.offset)}`)};`);
    });
    lines.push('  }');
  }
  lines.push(`  ${acts}[${u(l.valuesAt)} + idx] = v;`);
  return k.finish(lines.join('\n'));
}

/** dL/d(operand i) of a merge into `target` (its gradient region, or one of its extra ones): add's gradient as it is, concat's columns of it. */
export function mergeBackward<K>(w: GraphWriter<K>, l: MergeLayer, i: number, target: { op: { name: string }; gradAt: number }): K {
  const p = l.parts[i];
  const k = w.kernel(`backward ${l.op.name}: dL/d${target.op.name} (operand ${i + 1}) through ${l.merge}, one invocation per member, row and unit`, w.n * w.batch * p.width);
  const acts = k.buf('acts');
  const from = `${acts}[${u(l.gradAt)} + (m * ${u(w.batch)} + b) * ${u(l.width)} + ${p.offset ? `${u(p.offset)} + j` : 'j'}]`;
  const body = [...elementLines(w, p.width), `  ${acts}[${u(target.gradAt)} + idx] = ${from};`];
  return k.finish(body.join('\n'));
}

/** A value's gradient from all its readers: the first one's (in its gradient region) plus each other's, in order. */
export function gradientSum<K>(w: GraphWriter<K>, l: ChainValues, regions: number[]): K {
  const k = w.kernel(`gradient ${l.op.name}: its ${regions.length + 1} readers' gradients added up in the op path's order, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const acts = k.buf('acts');
  const body = [`  var g = ${acts}[${u(l.gradAt)} + idx];`, ...regions.map((r) => `  g = g + ${acts}[${u(r)} + idx];`), `  ${acts}[${u(l.gradAt)} + idx] = g;`];
  return k.finish(body.join('\n'));
}

/**
 * The order in which the op path's autodiff hands a merge's operands their gradients: add is a chain of
 * two-operand adds, ((a + b) + c) + d, whose last add is differentiated first (d, then c, then a and b);
 * concat is one op, its operands in order.
 */
export function gradientOrder(merge: Merge, n: number): number[] {
  if (merge !== 'add' || n <= 2) return Array.from({ length: n }, (_, i) => i);
  return [...Array.from({ length: n - 2 }, (_, i) => n - 1 - i), 0, 1];
}
