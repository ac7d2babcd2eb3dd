// The loops a generated training step is made of, for one member at a time: elementwise maps (a SIMD
// loop, then the scalar tail, from one description), dense products and their gradients, and row
// reductions. Matrices are [rows, width] float32 in memory at an address local plus a constant offset;
// a parameter's rows may lie apart (rowStride bytes), as a member's columns of a fused kernel do.
import type { Code, Local } from './module.js';
import { scalarLanes, simdLanes, type Lanes } from './lanes.js';

/** A matrix [rows, width] of contiguous rows at `base + offset` bytes. */
export interface Mat {
  base: Local;
  offset: number;
  width: number;
}

/** A parameter matrix [rows, width] of one member: row r at `base + r * rowStride` bytes (an i32 local). */
export interface ParamMat {
  base: Local;
  rowStride: Local;
  rows: number;
  width: number;
}

/** Pushes base + offset + index * scale (index an i32 local, or none). */
export function address(c: Code, base: Local, offset: number, index?: Local, scale = 1): void {
  c.get(base);
  if (index) {
    c.get(index);
    if (scale !== 1) c.i32(scale).i32Mul();
    c.i32Add();
  }
  if (offset) c.i32(offset).i32Add();
}

/**
 * for off in [0, count*4) step 16 as SIMD, then the rest one float at a time: `body(v, off)` with off the
 * byte offset of the element(s). `count` pushes the number of floats (an i32).
 */
export function forEachFloat(c: Code, count: () => void, body: (v: Lanes, off: Local) => void): void {
  const off = c.local('i32');
  const end = c.local('i32');
  const vecEnd = c.local('i32');
  count();
  c.i32(2).i32Shl().set(end);
  c.get(end).i32(-16).i32And().set(vecEnd);
  const simd = simdLanes(c);
  c.for(off, () => c.i32(0), () => c.get(vecEnd), () => body(simd, off), 16);
  const scalar = scalarLanes(c);
  c.for(off, () => c.get(vecEnd), () => c.get(end), () => body(scalar, off), 4);
}

/** Loads a float (or 4) of a Mat at byte offset `off` from its start (plus `extra` bytes). */
export function loadAt(v: Lanes, m: { base: Local; offset: number }, off: Local, extra = 0): void {
  address(v.code, m.base, m.offset + extra, off);
  v.load();
}

/**
 * The columns of a row of width `width`, as SIMD chunks then the scalar tail, both from `body(v, col)`
 * with col the byte offset of the column (a constant, loops unrolled: widths are small constants).
 */
export function columns(c: Code, width: number, body: (v: Lanes, col: number) => void): void {
  const simd = simdLanes(c);
  const scalar = scalarLanes(c);
  const vec = width - (width % 4);
  for (let o = 0; o < vec; o += 4) body(simd, o * 4);
  for (let o = vec; o < width; o++) body(scalar, o * 4);
}

/** for (r = 0; r < rows; r++) body(), rows an i32 local */
export function forRows(c: Code, rows: Local, body: (r: Local) => void): void {
  const r = c.local('i32');
  c.for(r, () => c.i32(0), () => c.get(rows), () => body(r));
}

/** Pushes the address of row `r` (a local) of a Mat. */
function rowOf(c: Code, m: Mat, r: Local): void {
  address(c, m.base, m.offset, r, m.width * 4);
}

/** Stores 0 in every float of `width` at the address local `row`. */
function zeroRow(c: Code, row: Local, width: number): void {
  columns(c, width, (v, col) => {
    c.get(row);
    v.const(0);
    v.store(col);
  });
}

/**
 * y[b, :] = x[b, :] · W (+ bias): each output column sums x[b, i] W[i, o] over i in order, from 0, then
 * adds the bias, as TF.js's matMul and add do.
 */
export function denseForward(c: Code, batch: Local, x: Mat, w: ParamMat, bias: Local | undefined, y: Mat): void {
  const xAt = c.local('i32');
  const yRow = c.local('i32');
  const wRow = c.local('i32');
  const i = c.local('i32');
  forRows(c, batch, (b) => {
    rowOf(c, x, b);
    c.set(xAt);
    rowOf(c, y, b);
    c.set(yRow);
    zeroRow(c, yRow, w.width);
    c.get(w.base).set(wRow);
    c.for(i, () => c.i32(0), () => c.i32(w.rows), () => {
      columns(c, w.width, (v, col) => {
        c.get(yRow);
        c.get(yRow);
        v.load(col);
        c.get(xAt).loadF32();
        v.splat();
        c.get(wRow);
        v.load(col);
        v.mul();
        v.add();
        v.store(col);
      });
      c.get(xAt).i32(4).i32Add().set(xAt);
      c.get(wRow).get(w.rowStride).i32Add().set(wRow);
    });
    if (bias) {
      columns(c, w.width, (v, col) => {
        c.get(yRow);
        c.get(yRow);
        v.load(col);
        c.get(bias);
        v.load(col);
        v.add();
        v.store(col);
      });
    }
  });
}

/** dW[i, o] = sum over b, in order, of x[b, i] dy[b, o] (dW contiguous [rows, width]). */
export function denseGradWeights(c: Code, batch: Local, x: Mat, dy: Mat, dw: Mat): void {
  const dwRow = c.local('i32');
  const xAt = c.local('i32');
  const dyRow = c.local('i32');
  const i = c.local('i32');
  c.for(i, () => c.i32(0), () => c.i32(x.width), () => {
    address(c, dw.base, dw.offset, i, dw.width * 4);
    c.set(dwRow);
    zeroRow(c, dwRow, dw.width);
    forRows(c, batch, (b) => {
      rowOf(c, x, b);
      c.get(i).i32(4).i32Mul().i32Add().set(xAt);
      rowOf(c, dy, b);
      c.set(dyRow);
      columns(c, dw.width, (v, col) => {
        c.get(dwRow);
        c.get(dwRow);
        v.load(col);
        c.get(xAt).loadF32();
        v.splat();
        c.get(dyRow);
        v.load(col);
        v.mul();
        v.add();
        v.store(col);
      });
    });
  });
}

/** db[o] = sum over b of dy[b, o]. */
export function columnSums(c: Code, batch: Local, dy: Mat, db: Mat): void {
  const dbAt = c.local('i32');
  const dyRow = c.local('i32');
  address(c, db.base, db.offset);
  c.set(dbAt);
  zeroRow(c, dbAt, db.width);
  forRows(c, batch, (b) => {
    rowOf(c, dy, b);
    c.set(dyRow);
    columns(c, dy.width, (v, col) => {
      c.get(dbAt);
      c.get(dbAt);
      v.load(col);
      c.get(dyRow);
      v.load(col);
      v.add();
      v.store(col);
    });
  });
}

/** dx[b, i] = sum over o of dy[b, o] W[i, o]: four partial sums over SIMD chunks, added in lane order, then the tail. */
export function denseGradInput(c: Code, batch: Local, dy: Mat, w: ParamMat, dx: Mat): void {
  const dyRow = c.local('i32');
  const dxAt = c.local('i32');
  const wRow = c.local('i32');
  const i = c.local('i32');
  const vec = w.width - (w.width % 4);
  const acc = c.local('v128');
  const sum = c.local('f32');
  forRows(c, batch, (b) => {
    rowOf(c, dy, b);
    c.set(dyRow);
    rowOf(c, dx, b);
    c.set(dxAt);
    c.get(w.base).set(wRow);
    c.for(i, () => c.i32(0), () => c.i32(w.rows), () => {
      c.f32(0).set(sum);
      for (let o = 0; o < vec; o += 4) {
        c.get(dyRow).loadV128(o * 4);
        c.get(wRow).loadV128(o * 4).f32x4Mul();
        if (o > 0) c.get(acc).f32x4Add();
        c.set(acc);
      }
      if (vec > 0) for (let lane = 0; lane < 4; lane++) c.get(sum).get(acc).f32x4ExtractLane(lane).f32Add().set(sum);
      for (let o = vec; o < w.width; o++) c.get(sum).get(dyRow).loadF32(o * 4).get(wRow).loadF32(o * 4).f32Mul().f32Add().set(sum);
      c.get(dxAt).get(sum).storeF32();
      c.get(dxAt).i32(4).i32Add().set(dxAt);
      c.get(wRow).get(w.rowStride).i32Add().set(wRow);
    });
  });
}

/** dst += src over [B, width] (a gradient's second share). */
export function addInto(c: Code, batch: Local, src: Mat, dst: Mat): void {
  forEachFloat(
    c,
    () => c.get(batch).i32(src.width).i32Mul(),
    (v, off) => {
      address(c, dst.base, dst.offset, off);
      loadAt(v, dst, off);
      loadAt(v, src, off);
      v.add();
      v.store();
    },
  );
}
