// Pieces of model.py's Python text, for the export rules of the layer kinds and export/pytorch.ts.
import { isPadded, type Pads } from './layout.js';

/** A number as a Python float literal. */
export function pyFloat(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`internal error: ${v} has no Python literal`);
  const s = String(v);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** A pair as a Python tuple: `(2, 3)`. */
export const pair = (v: readonly number[]): string => `(${v[0]}, ${v[1]})`;

/** A symmetric window padding as a PyTorch layer's keyword argument (`, padding=(1, 1)`), or nothing where there is none. */
export const torchPadding = (pads: Pads): string => (isPadded(pads) ? `, padding=${pair([pads[0], pads[2]])}` : '');

/** F.pad's order for [top, bottom, left, right]: (left, right, top, bottom). */
export const padTuple = ([t, b, l, r]: Pads): string => `(${l}, ${r}, ${t}, ${b})`;

/** The constructor's keyword argument of a layer argument: `dropout_1_rate`. */
export const kwargName = (node: { name: string }, arg: string): string => `${node.name}_${arg}`;
