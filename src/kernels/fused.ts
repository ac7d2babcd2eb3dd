// Moves parameter values between the members' own arrays and the fused tensors of a layout. Going in,
// members are placed by the layout; coming out, they are sliced back: the inverse (slicing) map. Both
// apply core/layout.ts's rule as it stands: member i is tf.slice(fused, begin, size) of memberSlice, the
// rule the slicing map writes down. unfuse is the one way a member's copy is cut out on the host: from a
// population's fused tensors, and from a checkpoint, which holds each parameter lowering-free as the
// `stacked` layout [M, ...shape] (a shared layer's as `shared`, once).
import type { Shape } from '../core/arg-spec.js';
import { fusedShape, memberSlice, type ParamLayout } from '../core/layout.js';

const size = (s: Shape) => s.reduce((a, b) => a * b, 1);

/** Row-major strides of a shape. */
function strides(shape: Shape): number[] {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) out[i] = out[i + 1] * shape[i + 1];
  return out;
}

/** Member i's block in the fused tensor's data: where it starts, and the strides and extent to walk it by. */
interface Block {
  start: number;
  step: number[];
  extent: number[];
  /** the block is one run of the data: the axes before the first one it cuts hold one index, those after are whole */
  run: boolean;
}

function memberBlock(layout: ParamLayout, shape: Shape, n: number, i: number): Block {
  const fused = fusedShape(layout, shape, n);
  const { begin, size: extent } = memberSlice(layout, shape, i);
  const step = strides(fused);
  const start = begin.reduce((at, b, a) => at + b * step[a], 0);
  const cut = extent.findIndex((e, a) => e < fused[a]);
  const run = cut === -1 || (extent.slice(0, cut).every((e) => e === 1) && extent.slice(cut + 1).every((e, a) => e === fused[cut + 1 + a]));
  return { start, step, extent, run };
}

/** Calls f(fusedIndex, memberIndex) for every element of the block, in the member's own (row-major) order. */
function forEachElement({ start, step, extent }: Block, f: (fused: number, own: number) => void): void {
  const idx = new Array(extent.length).fill(0);
  const count = size(extent);
  for (let own = 0; own < count; own++) {
    let at = start;
    for (let a = 0; a < extent.length; a++) at += idx[a] * step[a];
    f(at, own);
    for (let a = extent.length - 1; a >= 0; a--) {
      if (++idx[a] < extent[a]) break;
      idx[a] = 0;
    }
  }
}

/** The fused tensor's data from each member's own array (zeros outside the members' blocks). */
export function fuse(layout: ParamLayout, shape: Shape, members: Float32Array[]): Float32Array {
  if (layout === 'separate') throw new Error('separate parameters are not fused');
  const out = new Float32Array(size(fusedShape(layout, shape, members.length)));
  members.forEach((m, i) => placeMember(layout, shape, members.length, out, i, m));
  return out;
}

/** Writes member i's own array into its block of the fused tensor's data, in place: unfuse's inverse. */
export function placeMember(layout: ParamLayout, shape: Shape, n: number, data: Float32Array, i: number, own: Float32Array): void {
  const block = memberBlock(layout, shape, n, i);
  if (block.run) data.set(own, block.start);
  else forEachElement(block, (at, k) => (data[at] = own[k]));
}

/**
 * Member i's own array, sliced out of the fused tensor's data (under `separate`, out of member i's own
 * tensor; under `shared`, out of the one tensor every member reads).
 */
export function unfuse(layout: ParamLayout, shape: Shape, n: number, data: Float32Array | Int32Array | Uint8Array, i: number): Float32Array {
  const block = memberBlock(layout, shape, n, i);
  if (block.run) return new Float32Array(data.subarray(block.start, block.start + size(shape)));
  const out = new Float32Array(size(shape));
  forEachElement(block, (at, own) => (out[own] = data[at]));
  return out;
}

/**
 * Every member's own array, one after another ([n, ...shape], the `stacked` layout a checkpoint keeps), from
 * the fused tensor's data: that data itself where the layout already lays the members out so (`stacked`, and
 * `columns` of a vector), without a copy; else a new array, or `scratch(length)` where given.
 */
export function stackMembers(layout: ParamLayout, shape: Shape, n: number, data: Float32Array, scratch?: (length: number) => Float32Array): Float32Array {
  const own = size(shape);
  if (stacksInPlace(layout, shape) && data.length === n * own) return data;
  return stackMemberRange(layout, shape, n, data, 0, n, scratch ? scratch(n * own) : new Float32Array(n * own));
}

/** Whether stackMembers gives the data itself, without a copy. */
export function stacksInPlace(layout: ParamLayout, shape: Shape): boolean {
  // `columns` puts member i at i * shape[last] along the last axis: one run each, in member order, when the axes before it are 1
  return layout === 'stacked' || (layout === 'columns' && shape.slice(0, -1).every((d) => d === 1));
}

/** stackMembers of members from..to-1 only, into `out` ((to - from) * size(shape) floats). */
export function stackMemberRange(layout: ParamLayout, shape: Shape, n: number, data: Float32Array, from: number, to: number, out: Float32Array): Float32Array {
  const own = size(shape);
  for (let m = from; m < to; m++) {
    const b = memberBlock(layout, shape, n, m);
    const at = (m - from) * own;
    if (b.run) out.set(data.subarray(b.start, b.start + own), at);
    else forEachElement(b, (i, k) => (out[at + k] = data[i]));
  }
  return out;
}

/** The rows (members) of `values`, `size` floats each, that hold a NaN or an infinity. */
export function nonFiniteRows(values: Float32Array, size: number): number[] {
  const out: number[] = [];
  for (let m = 0; m * size < values.length; m++) {
    let poison = 0;
    for (let i = m * size, end = i + size; i < end; i++) poison += values[i] * 0;
    if (Number.isNaN(poison)) out.push(m);
  }
  return out;
}

/** The 0/1 mask that keeps a block-diagonal kernel block-diagonal. */
export function blockMask(shape: Shape, n: number): Float32Array {
  return fuse('blockdiag', shape, Array.from({ length: n }, () => new Float32Array(size(shape)).fill(1)));
}
