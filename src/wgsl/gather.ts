// The WGSL step's embedding (src/layers/embedding.ts builds the layer): a gather forward and a scatter-add
// of the gradient onto the rows read, as the op path's gather and its ScatterNd gradient compute them.
//
//   forward    one invocation per (member, row, step, unit): the table's row at the step's id (the float
//              truncated and clamped into the table, as the generated wasm step reads it), plus the step's
//              row of `positions`
//   update     one invocation per element of a member's table: the gradients of the steps whose id is its
//              row, rows and steps in order, then the optimizer step; the positions' element: its step's
//              gradient summed over the rows in order (where any member clips: into scratch, then the
//              step's norm and clipped-update kernels)
//
// The ids are the batch itself (`x`): an embedding reads the shared input, so no gradient flows past it.
import { u, type WgslParam } from './chain.js';
import { paramBuffer, type KernelWriter } from './kernel-text.js';
import type { DenseWriter, Element } from './dense.js';
import type { DenseLayer } from './rule.js';

/** An embedding of the chain: its table [vocab, dim] and positions [T, dim] per member, over T steps. */
export interface GatherLayer extends DenseLayer {
  table: WgslParam;
  positions?: WgslParam;
  vocab: number;
  dim: number;
  steps: number;
}

/** Index of member m's element (row `r`, unit `d`) of a table of `rows` rows: stacked [N, rows, dim] or columns [rows, N*dim]. */
function rowIndex(p: WgslParam, n: number, rows: number, dim: number, r: string, d: string): string {
  if (p.layout === 'columns') return `${r} * ${u(n * dim)} + m * ${u(dim)} + ${d}`;
  if (p.layout === 'stacked') return `(m * ${u(rows)} + ${r}) * ${u(dim)} + ${d}`;
  throw new Error(`internal error: the WGSL embedding has no ${p.layout} table`);
}

/** The id of row b's step t: the batch's float truncated and clamped into [0, vocab). */
const idOf = <K>(k: KernelWriter<K>, l: GatherLayer, t: string): string => `min(u32(max(${k.buf('x')}[b * ${u(l.steps)} + ${t}], 0.0)), ${u(l.vocab - 1)})`;

/** The forward kernel: each step's row of the member's table, plus its position's row. */
export function gatherForward<K>(w: DenseWriter<K>, l: GatherLayer): K {
  const k = w.kernel(`forward ${l.op.name}: embedding(${l.vocab}, ${l.dim}), the table's row at each step's id, one invocation per member, row, step and unit`, w.n * w.batch * l.width);
  const table = k.buf(paramBuffer(l.table.name));
  const lines = [
    `  let m = idx / ${u(w.batch * l.width)};`,
    `  let b = (idx / ${u(l.width)}) % ${u(w.batch)};`,
    `  let t = (idx / ${u(l.dim)}) % ${u(l.steps)};`,
    `  let d = idx % ${u(l.dim)};`,
    `  let id = ${idOf(k, l, 't')};`,
    `  var y = ${table}[${rowIndex(l.table, w.n, l.vocab, l.dim, 'id', 'd')}];`,
  ];
  if (l.positions) lines.push(`  y = y + ${k.buf(paramBuffer(l.positions.name))}[${rowIndex(l.positions, w.n, l.steps, l.dim, 't', 'd')}];`);
  lines.push(`  ${k.buf('acts')}[${u(l.valuesAt)} + idx] = y;`);
  return k.finish(lines.join('\n'));
}

/** dL/d(member m's value) at row b, step t, unit d. */
const dy = <K>(k: KernelWriter<K>, w: DenseWriter<K>, l: GatherLayer, t: string): string => `${k.buf('acts')}[${u(l.gradAt)} + ((m * ${u(w.batch)} + b) * ${u(l.steps)} + ${t}) * ${u(l.dim)} + d]`;

/** The table's and the positions' update kernels (three each where any member clips). */
export function gatherUpdates<K>(w: DenseWriter<K>, l: GatherLayer): K[] {
  const table = (k: KernelWriter<K>) => [
    '  var g = 0.0;',
    `  for (var b = 0u; b < ${u(w.batch)}; b++) {`,
    `    for (var t = 0u; t < ${u(l.steps)}; t++) {`,
    `      if (${idOf(k, l, 't')} == r) { g = g + ${dy(k, w, l, 't')}; }`,
    '    }',
    '  }',
  ];
  const out = paramKernels(w, l.table, l.vocab, l.dim, table);
  if (l.positions) out.push(...paramKernels(w, l.positions, l.steps, l.dim, (k) => ['  var g = 0.0;', `  for (var b = 0u; b < ${u(w.batch)}; b++) {`, `    g = g + ${dy(k, w, l, 'r')};`, '  }']));
  return out;
}

/** A [rows, dim] parameter's kernels: its gradient `g` (summed by `sum`, with m, r and d named) and the optimizer step, or clipping's three. */
function paramKernels<K>(w: DenseWriter<K>, p: WgslParam, rows: number, dim: number, sum: (k: KernelWriter<K>) => string[]): K[] {
  const size = rows * dim;
  const lines = [`  let m = idx / ${u(size)};`, `  let r = (idx / ${u(dim)}) % ${u(rows)};`, `  let d = idx % ${u(dim)};`];
  const index = rowIndex(p, w.n, rows, dim, 'r', 'd');
  if (w.clipped) {
    const k = w.kernel(`gradient ${p.name}: scattered from the member's rows and steps, into scratch for clipnorm, one invocation per member and element`, w.n * size);
    const element: Element = { p, size, lines, index };
    return [k.finish([...lines, ...sum(k), ...w.clipped.store(k)].join('\n')), ...w.clipped.kernels(element)];
  }
  const k = w.kernel(`update ${p.name}: its gradient scattered from the member's rows and steps, and one ${w.optimizer} step, one invocation per member and element`, w.n * size);
  return [k.finish([...lines, ...sum(k), `  let at = ${index};`, ...w.update(k, p)].join('\n'))];
}
