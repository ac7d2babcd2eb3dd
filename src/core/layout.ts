// Where each member's copy of a parameter sits in a fused tensor: the one rule that widening lays members
// out by and that every way of cutting a member back out reads (the slicing map, fuse/unfuse on the host,
// a checkpoint's member, `netc extract`). Pure arithmetic on shapes: no TF.js.
import type { Shape } from './arg-spec.js';

/**
 * How N members' copies of one parameter form the fused tensor(s):
 *  - stacked:   [N, ...shape]                      (grouped)
 *  - columns:   [..., N*last]   members side by side on the last axis (blockdiag vectors, and the
 *               parameters of a layer whose input is shared, in every widened lowering)
 *  - blockdiag: [..., N*in, N*out], member i in block (i, i), zero elsewhere, kept so by a mask
 *  - separate:  one tensor per member, of the member's own shape  (loop)
 *  - shared:    one tensor of the member's own shape that every member reads: a `shared` layer's
 *               parameter, under every lowering (no member axis; member i's slice is all of it)
 */
export type ParamLayout = 'stacked' | 'columns' | 'blockdiag' | 'separate' | 'shared';

/** The fused tensor's shape for N members (per member for `separate`). */
export function fusedShape(layout: ParamLayout, shape: Shape, n: number): Shape {
  const r = shape.length;
  switch (layout) {
    case 'stacked':
      return [n, ...shape];
    case 'columns':
      return [...shape.slice(0, -1), n * shape[r - 1]];
    case 'blockdiag':
      return [...shape.slice(0, -2), n * shape[r - 2], n * shape[r - 1]];
    case 'separate':
    case 'shared':
      return shape;
  }
}

/** Where member i sits in the fused tensor: tf.slice(fused, begin, size) gives its own-shaped copy. */
export function memberSlice(layout: ParamLayout, shape: Shape, i: number): { begin: number[]; size: number[] } {
  const r = shape.length;
  switch (layout) {
    case 'stacked':
      return { begin: [i, ...shape.map(() => 0)], size: [1, ...shape] };
    case 'columns':
      return { begin: shape.map((d, a) => (a === r - 1 ? i * d : 0)), size: shape };
    case 'blockdiag':
      return { begin: shape.map((d, a) => (a >= r - 2 ? i * d : 0)), size: shape };
    case 'separate':
    case 'shared':
      return { begin: shape.map(() => 0), size: shape };
  }
}

/** Which axes of the fused tensor carry the members (for gathers along members); none for `separate` and `shared`. */
export function memberAxes(layout: ParamLayout, shape: Shape): number[] {
  const r = shape.length;
  return layout === 'stacked' ? [0] : layout === 'columns' ? [r - 1] : layout === 'blockdiag' ? [r - 2, r - 1] : [];
}
