// Rows of channels as f32x4 vectors where the row is not a whole number of them: the last vector's real
// lanes are loaded and stored on their own (the other lanes loaded as 0, never stored), so a loop can
// compute whole vectors without reading or writing a float that is not its own.
import type { Code, Local } from './module.js';

/** A vector of a row of channels: its first channel and how many of its lanes are real (1-4). */
export interface Vec {
  col: number;
  lanes: number;
}

/** The vectors of a row of `width` channels. */
export function vectorsOf(width: number): Vec[] {
  const out: Vec[] = [];
  for (let col = 0; col < width; col += 4) out.push({ col, lanes: Math.min(4, width - col) });
  return out;
}

/** A row of `width` floats padded to whole vectors. */
export const paddedRow = (width: number): number => Math.ceil(width / 4) * 4;

/** The vectors in groups of at most `most` (a tile's channels). */
export function groupsOfVecs(vecs: Vec[], most: number): Vec[][] {
  const out: Vec[][] = [];
  for (let i = 0; i < vecs.length; i += most) out.push(vecs.slice(i, i + most));
  return out;
}

/** Pushes the vector of `v.lanes` floats at [ptr + off] (the other lanes 0). */
export function loadVec(c: Code, ptr: Local, off: number, v: Vec, tmp: Local): void {
  if (v.lanes === 4) c.get(ptr).loadV128(off);
  else if (v.lanes === 1) c.get(ptr).load32Zero(off);
  else if (v.lanes === 2) c.get(ptr).load64Zero(off);
  else c.get(ptr).load64Zero(off).set(tmp).get(ptr).get(tmp).load32Lane(off + 8, 2);
}

/** Stores the first `v.lanes` floats of the vector in `val` at [ptr + off]. */
export function storeVec(c: Code, ptr: Local, off: number, v: Vec, val: Local): void {
  if (v.lanes === 4) c.get(ptr).get(val).storeV128(off);
  else if (v.lanes === 1) c.get(ptr).get(val).store32Lane(off, 0);
  else {
    c.get(ptr).get(val).store64Lane(off, 0);
    if (v.lanes === 3) c.get(ptr).get(val).store32Lane(off + 8, 2);
  }
}
