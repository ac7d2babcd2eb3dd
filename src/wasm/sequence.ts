// Loops over a sequence's steps for the generated step's recurrent layers. A layer's value is [B, T*W] (each
// example's [T, W] row-major); a recurrent layer works a step at a time on every example, so it keeps its
// own buffers time-major, [T, B, W], where one step's [B, W] is a contiguous Mat that the dense products of
// src/wasm/blocks.ts take as they are. A step's columns of an example-major value are a Mat too, for the
// products that only read and write rows by their stride (denseForward): its width is the row's full
// T*W floats, its base moved to the step's first column.
import type { Code, Local } from './module.js';
import { address, denseForward, forEachFloat, forRows, loadAt, rowOf, type Mat, type ParamMat } from './blocks.js';
import { scalarLanes, simdLanes, type Lanes } from './lanes.js';

/**
 * Step t's [B, width] block of a time-major [T, B, width] buffer (`t` pushes the step, an i32; `batch` is
 * the run-time B): its own base local, set here.
 */
export function timeStep(c: Code, m: Mat, t: () => void, batch: Local, width: number): Mat {
  const base = c.local('i32');
  c.get(m.base);
  t();
  c.get(batch).i32Mul().i32(width * 4).i32Mul().i32Add().set(base);
  return { base, offset: m.offset, width };
}

/**
 * Step t's columns [t*width, (t+1)*width) of an example-major [B, T*width] value, as a Mat whose width is the
 * row's stride (T*width): only for code that reads `width` columns of each row by rowOf (denseForward's x and y).
 */
export function stepColumns(c: Code, m: Mat, t: () => void, width: number, steps: number): Mat {
  const base = c.local('i32');
  c.get(m.base);
  t();
  c.i32(width * 4).i32Mul().i32Add().set(base);
  return { base, offset: m.offset, width: width * steps };
}

/** dst [T, B, width] (time-major) = src [B, T*width] (example-major), or back with `back`. */
export function transposeSteps(c: Code, batch: Local, steps: number, width: number, src: Mat, dst: Mat, back = false): void {
  const [exampleMajor, timeMajor] = back ? [dst, src] : [src, dst];
  const row = c.local('i32');
  const at = c.local('i32');
  const t = c.local('i32');
  forRows(c, batch, (b) => {
    rowOf(c, exampleMajor, b);
    c.set(row);
    // example b's step t lies at (t * B + b) * width floats of the time-major buffer
    address(c, timeMajor.base, timeMajor.offset, b, width * 4);
    c.set(at);
    c.for(t, () => c.i32(0), () => c.i32(steps), () => {
      const [from, to] = back ? [at, row] : [row, at];
      rowColumns(c, width, (v, off, col) => {
        c.get(to);
        if (off) c.get(off).i32Add();
        c.get(from);
        if (off) c.get(off).i32Add();
        v.load(col);
        v.store(col);
      });
      c.get(row).i32(width * 4).i32Add().set(row);
      c.get(at).get(batch).i32(width * 4).i32Mul().i32Add().set(at);
    });
  });
}

/**
 * The columns of one row of `width` floats: a run-time loop of SIMD chunks (off, the chunk's byte offset, a
 * local), then the scalar tail, unrolled (off undefined, col the column's byte offset). An element's
 * address is a row's address + off + col.
 */
export function rowColumns(c: Code, width: number, body: (v: Lanes, off: Local | undefined, col: number) => void): void {
  const vec = width - (width % 4);
  if (vec) {
    const off = c.local('i32');
    const simd = simdLanes(c);
    c.for(off, () => c.i32(0), () => c.i32(vec * 4), () => body(simd, off, 0), 16);
  }
  const scalar = scalarLanes(c);
  for (let o = vec; o < width; o++) body(scalar, undefined, o * 4);
}

/** dst = src over `count` floats (`count` pushes it, an i32). */
export function copyFloats(c: Code, count: () => void, src: Mat, dst: Mat): void {
  forEachFloat(c, count, (v, off) => {
    address(c, dst.base, dst.offset, off);
    loadAt(v, src, off);
    v.store();
  });
}

/** dst += src over `count` floats, element by element (a gradient's share of one step added to its total). */
export function addFloats(c: Code, count: number, src: Mat, dst: Mat): void {
  forEachFloat(c, () => c.i32(count), (v, off) => {
    address(c, dst.base, dst.offset, off);
    loadAt(v, dst, off);
    loadAt(v, src, off);
    v.add();
    v.store();
  });
}

/** Zero in `count` floats of a Mat (`count` pushes it, an i32). */
export function zeroMat(c: Code, count: () => void, m: Mat): void {
  forEachFloat(c, count, (v, off) => {
    address(c, m.base, m.offset, off);
    v.const(0);
    v.store();
  });
}

/** A new local holding an address local plus a constant number of bytes. */
export function offsetBy(c: Code, at: Local, bytes: number): Local {
  const l = c.local('i32');
  c.get(at);
  if (bytes) c.i32(bytes).i32Add();
  c.set(l);
  return l;
}

/**
 * dst[:, first, first + src.width) += src over `rows` rows (src contiguous [rows, src.width], dst [rows,
 * dst.width]): a share of a gradient computed for a block of a parameter's columns, added to its total.
 */
export function addColumns(c: Code, rows: number, src: Mat, dst: Mat, first: number): void {
  const [r, from, to] = [c.local('i32'), c.local('i32'), c.local('i32')];
  address(c, src.base, src.offset);
  c.set(from);
  address(c, dst.base, dst.offset + first * 4);
  c.set(to);
  c.for(r, () => c.i32(0), () => c.i32(rows), () => {
    rowColumns(c, src.width, (v, off, col) => {
      const at = (row: Local) => (c.get(row), off && c.get(off).i32Add());
      at(to);
      at(to);
      v.load(col);
      at(from);
      v.load(col);
      v.add();
      v.store(col);
    });
    c.get(from).i32(src.width * 4).i32Add().set(from);
    c.get(to).i32(dst.width * 4).i32Add().set(to);
  });
}

/** Sets a local for each Mat to its row b's address (a cell's rows, before its columns are walked). */
export function rowPointers<K extends string>(c: Code, mats: Record<K, Mat>): { set(b: Local): void; at: Record<K, Local> } {
  const at = Object.fromEntries(Object.keys(mats).map((name) => [name, c.local('i32')])) as Record<K, Local>;
  return { at, set: (b) => (Object.keys(mats) as K[]).forEach((name) => (rowOf(c, mats[name], b), c.set(at[name]))) };
}

/**
 * A cell's vocabulary for one chunk of rowColumns' columns: `load` a row's element (plus a constant offset,
 * for a gate's block), `keep` what `push` leaves on the stack in a new local, `store` a local into a row's
 * element.
 */
export function cellLanes(c: Code, v: Lanes, off: Local | undefined, col: number) {
  const element = (row: Local) => (c.get(row), off && c.get(off).i32Add());
  const load = (row: Local, extra = 0) => (element(row), v.load(col + extra));
  const keep = (push: () => void) => {
    const l = v.floatLocal();
    push();
    c.set(l);
    return l;
  };
  const store = (row: Local, value: Local, extra = 0) => (element(row), c.get(value), v.store(col + extra));
  return { load, keep, store };
}

/**
 * dst = each of `count` [rows, cols] matrices of src transposed to [cols, rows], matrix after matrix
 * (`count` an i32 local): a sequence's [T, F] as [F, T], or an attention head's [T, T] scores.
 */
export function transposeEach(c: Code, count: Local, rows: number, cols: number, src: Mat, dst: Mat): void {
  const [m, r, j, from, to] = [c.local('i32'), c.local('i32'), c.local('i32'), c.local('i32'), c.local('i32')];
  c.for(m, () => c.i32(0), () => c.get(count), () => {
    c.for(r, () => c.i32(0), () => c.i32(rows), () => {
      // src[m, r, :] -> dst[m, :, r]
      address(c, src.base, src.offset, m, rows * cols * 4);
      c.get(r).i32(cols * 4).i32Mul().i32Add().set(from);
      address(c, dst.base, dst.offset, m, rows * cols * 4);
      c.get(r).i32(4).i32Mul().i32Add().set(to);
      c.for(j, () => c.i32(0), () => c.i32(cols), () => {
        c.get(to).get(from).loadF32().storeF32();
        c.get(from).i32(4).i32Add().set(from);
        c.get(to).i32(rows * 4).i32Add().set(to);
      });
    });
  });
}
