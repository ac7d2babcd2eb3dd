// Moves parameter values between the members' own arrays and the fused tensors of a layout. Going in,
// members are placed by the layout; coming out, they are sliced back: the inverse (slicing) map.
import type { Shape } from '../core/arg-spec.js';
import { fusedShape, memberSlice, type ParamLayout } from '../core/layout.js';

const size = (s: Shape) => s.reduce((a, b) => a * b, 1);

/** Row-major strides of a shape. */
function strides(shape: Shape): number[] {
  const out = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) out[i] = out[i + 1] * shape[i + 1];
  return out;
}

/** Calls f(fusedIndex, memberIndex) for every element of member i's block inside the fused tensor. */
function forEachElement(layout: ParamLayout, shape: Shape, n: number, i: number, f: (fused: number, own: number) => void): void {
  const fused = fusedShape(layout, shape, n);
  const { begin } = memberSlice(layout, shape, i);
  const fs = layout === 'stacked' ? strides(fused).slice(1) : strides(fused);
  const offset = layout === 'stacked' ? i * size(shape) : 0;
  const b = layout === 'stacked' ? begin.slice(1) : begin;
  const idx = new Array(shape.length).fill(0);
  for (let own = 0; own < size(shape); own++) {
    let at = offset;
    for (let a = 0; a < shape.length; a++) at += (idx[a] + b[a]) * fs[a];
    f(at, own);
    for (let a = shape.length - 1; a >= 0; a--) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
}

/** The fused tensor's data from each member's own array (zeros outside the members' blocks). */
export function fuse(layout: ParamLayout, shape: Shape, members: Float32Array[]): Float32Array {
  if (layout === 'separate') throw new Error('separate parameters are not fused');
  const out = new Float32Array(size(fusedShape(layout, shape, members.length)));
  members.forEach((m, i) => forEachElement(layout, shape, members.length, i, (at, own) => (out[at] = m[own])));
  return out;
}

/** Member i's own array, sliced out of the fused tensor's data. */
export function unfuse(layout: ParamLayout, shape: Shape, n: number, data: Float32Array | Int32Array | Uint8Array, i: number): Float32Array {
  const out = new Float32Array(size(shape));
  forEachElement(layout, shape, n, i, (at, own) => (out[own] = data[at]));
  return out;
}

/** The 0/1 mask that keeps a block-diagonal kernel block-diagonal. */
export function blockMask(shape: Shape, n: number): Float32Array {
  return fuse('blockdiag', shape, Array.from({ length: n }, () => new Float32Array(size(shape)).fill(1)));
}
