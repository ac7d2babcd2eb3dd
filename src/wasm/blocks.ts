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
  /** the op path sums this layer's products in blocks of 48 (TF.js's batched product), not in one run */
  blocked?: boolean;
  /** rowStride as a constant, where it is one (a stacked parameter): rows are read at constant offsets */
  stride?: number;
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
  // two vectors an iteration, their chains independent (exp's polynomial is a long one), then one
  const pairEnd = c.local('i32');
  const second = c.local('i32');
  c.get(end).i32(-32).i32And().set(pairEnd);
  c.for(off, () => c.i32(0), () => c.get(pairEnd), () => {
    c.get(off).i32(16).i32Add().set(second);
    body(simd, off);
    body(simd, second);
  }, 32);
  c.for(off, () => c.get(pairEnd), () => c.get(vecEnd), () => body(simd, off), 16);
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

/** for (r = from; r < rows; r++) body(), rows (and from, 0 by default) an i32 local */
export function forRows(c: Code, rows: Local, body: (r: Local) => void, from?: Local): void {
  const r = c.local('i32');
  c.for(r, () => (from ? c.get(from) : c.i32(0)), () => c.get(rows), () => body(r));
}

/** Pushes the address of row `r` (a local) of a Mat. */
export function rowOf(c: Code, m: Mat, r: Local): void {
  address(c, m.base, m.offset, r, m.width * 4);
}

/** Zero in the first `count` floats of a Mat, one at a time. */
export function zeroFloats(c: Code, m: Mat, count: number): void {
  const i = c.local('i32');
  c.for(i, () => c.i32(0), () => c.i32(count * 4), () => {
    address(c, m.base, m.offset, i);
    c.f32(0).storeF32();
  }, 4);
}

/** Stores 0 in every float of `width` at the address local `row`. */
export function zeroRow(c: Code, row: Local, width: number): void {
  columns(c, width, (v, col) => {
    c.get(row);
    v.const(0);
    v.store(col);
  });
}

/** TF.js's batched product (wasm slow_batch_matmul) sums its inner dimension in blocks of this many. */
export const SUM_BLOCK = 48;

/** Columns handled together, their sums in locals: a row wider than this is done a group at a time. */
const GROUP = 64;

/** Inner sums of up to this many terms are unrolled. */
const UNROLL = 64;

/** [first, end) of each block of the inner dimension k: blocks of SUM_BLOCK where the op path sums so, else one. */
export function blocksOf(k: number, blocked: boolean): [number, number][] {
  if (!blocked) return [[0, k]];
  const out: [number, number][] = [];
  for (let k0 = 0; k0 < k; k0 += SUM_BLOCK) out.push([k0, Math.min(k, k0 + SUM_BLOCK)]);
  return out;
}

/** The column groups of a row of `width`: [first column, width of the group]. */
export function groupsOf(width: number): [number, number][] {
  const out: [number, number][] = [];
  for (let g = 0; g < width; g += GROUP) out.push([g, Math.min(GROUP, width - g)]);
  return out;
}

/** Per-column sums of a group of columns: a v128 local per SIMD chunk, an f32 per tail column (col: byte offset in the row). */
export interface Acc {
  lanes: Lanes;
  col: number;
  acc: Local;
}

/** An accumulator per SIMD chunk and tail column of columns [first, first + width). */
export function accumulators(c: Code, first: number, width: number): Acc[] {
  const out: Acc[] = [];
  columns(c, width, (v, col) => out.push({ lanes: v, col: col + first * 4, acc: v.floatLocal() }));
  return out;
}

const zero = (c: Code, accs: Acc[]) => accs.forEach((a) => (a.lanes.const(0), c.set(a.acc)));
/** Each accumulator set to what the row at `row` holds in its columns. */
const loadAll = (c: Code, accs: Acc[], row: Local) => accs.forEach((a) => (c.get(row), a.lanes.load(a.col), c.set(a.acc)));
/** total += partial, lane by lane */
const addAll = (c: Code, total: Acc[], partial: Acc[]) =>
  total.forEach((t, i) => {
    c.get(t.acc).get(partial[i].acc);
    t.lanes.add();
    c.set(t.acc);
  });

/**
 * Sums over an inner dimension as the op path does: `sum(k0, k1, into)` adds the terms k0..k1-1, in order,
 * to the accumulators `into`; each block's terms are summed from 0 and then added to the total.
 */
function blockedSums(c: Code, k: number, blocked: boolean, total: Acc[], partial: Acc[], sum: (k0: number, k1: number, into: Acc[]) => void): void {
  zero(c, total);
  const blocks = blocksOf(k, blocked);
  if (blocks.length === 1) return sum(0, k, total);
  for (const [k0, k1] of blocks) {
    zero(c, partial);
    sum(k0, k1, partial);
    addAll(c, total, partial);
  }
}

/**
 * y[b, :] = x[b, :] · W (+ bias), each output column the sum over i of x[b, i] W[i, o], in the op path's
 * order (in blocks of 48 where it sums so), then plus the bias, as TF.js's matMul and add do.
 */
export function denseForward(c: Code, batch: Local, x: Mat, w: ParamMat, bias: Local | undefined, y: Mat): void {
  // an output narrower than a vector: four rows at a time in a vector's lanes, the rest row by row below
  const from = rowsInLanes(w.rows, w.width) ? denseRowsInLanes(c, batch, x, w, bias, y) : undefined;
  const xRow = c.local('i32');
  const yRow = c.local('i32');
  const wRow = c.local('i32');
  const i = c.local('i32');
  const xs = c.local('v128');
  const x1 = c.local('f32');
  const groups = groupsOf(w.width).map(([first, width]) => ({ total: accumulators(c, first, width), partial: accumulators(c, first, width) }));
  forRows(c, batch, (b) => {
    rowOf(c, x, b);
    c.set(xRow);
    rowOf(c, y, b);
    c.set(yRow);
    for (const { total, partial } of groups) {
      const vectors = total.some((a) => a.lanes.width === 4);
      /** adds x[b, i] W[i, :] to the accumulators, W's row i at wRow + extra bytes */
      const term = (into: Acc[], xAt: () => void, extra: number) => {
        xAt();
        if (vectors) c.tee(x1).f32x4Splat().set(xs);
        else c.set(x1);
        for (const a of into) {
          c.get(a.acc).get(a.lanes.width === 4 ? xs : x1).get(wRow);
          a.lanes.load(a.col + extra);
          a.lanes.mul();
          a.lanes.add();
          c.set(a.acc);
        }
      };
      blockedSums(c, w.rows, !!w.blocked, total, partial, (k0, k1, into) => {
        c.get(w.base);
        if (k0) (w.stride !== undefined ? c.i32(k0 * w.stride) : c.get(w.rowStride).i32(k0).i32Mul()).i32Add();
        c.set(wRow);
        if (k1 - k0 <= UNROLL) {
          // unrolled: x[b, i] at a constant offset; W's rows at constant offsets too where the stride is one
          for (let r = k0; r < k1; r++) {
            term(into, () => c.get(xRow).loadF32(r * 4), w.stride !== undefined ? (r - k0) * w.stride : 0);
            if (w.stride === undefined) c.get(wRow).get(w.rowStride).i32Add().set(wRow);
          }
          return;
        }
        c.for(i, () => c.i32(k0), () => c.i32(k1), () => {
          term(into, () => c.get(xRow).get(i).i32(4).i32Mul().i32Add().loadF32(), 0);
          c.get(wRow).get(w.rowStride).i32Add().set(wRow);
        });
      });
      for (const a of total) {
        c.get(yRow).get(a.acc);
        if (bias) {
          c.get(bias);
          a.lanes.load(a.col);
          a.lanes.add();
        }
        a.lanes.store(a.col);
      }
    }
  }, from);
}

/** Whether denseForward takes a [rows, width] kernel's product four rows at a time (see denseRowsInLanes). */
export const rowsInLanes = (rows: number, width: number) => width < 4 && rows <= UNROLL;

/**
 * The rows of y = x · W (+ bias) four at a time, one in each lane of a vector, for W narrower than a vector
 * (dense(1), say: by columns, its every row's one sum would be scalar code). Each lane sums its row's terms
 * over i in order from 0 and then adds the bias, as the row-by-row code does: the same bits. Four rows of x
 * are turned into columns (x[b..b+3, i]) by shuffles. Returns a local holding the first row not done.
 */
function denseRowsInLanes(c: Code, batch: Local, x: Mat, w: ParamMat, bias: Local | undefined, y: Mat): Local {
  const quadEnd = c.local('i32');
  c.get(batch).i32(-4).i32And().set(quadEnd);
  const b0 = c.local('i32');
  const xRow = c.local('i32');
  const wRow = c.local('i32');
  const yRow = c.local('i32');
  const cols = [0, 1, 2, 3].map(() => c.local('v128'));
  // a vector of four rows' sums per output column, as blockedSums takes them
  const simd = simdLanes(c);
  const accumulators = () => Array.from({ length: w.width }, (): Acc => ({ lanes: simd, col: 0, acc: c.local('v128') }));
  const [total, partial] = [accumulators(), accumulators()];
  const xAt = (j: number, i: number) => (j * x.width + i) * 4;
  /** adds the terms i in [k0, k1) to `into`, in order */
  const sum = (k0: number, k1: number, into: Acc[]) => {
    for (let i0 = k0; i0 < k1; i0 += 4) {
      const count = Math.min(4, k1 - i0);
      if (count === 4) transpose4(c, [0, 1, 2, 3].map((j) => () => c.get(xRow).loadV128(xAt(j, i0))), cols);
      // the last 1-3 columns of x: each gathered lane by lane
      else for (let k = 0; k < count; k++) {
        c.get(xRow).load32Splat(xAt(0, i0 + k)).set(cols[k]);
        for (let j = 1; j < 4; j++) c.get(xRow).get(cols[k]).load32Lane(xAt(j, i0 + k), j).set(cols[k]);
      }
      for (let k = 0; k < count; k++) {
        const wAt = w.stride !== undefined ? (i0 + k) * w.stride : 0;
        into.forEach(({ acc }, o) => c.get(acc).get(cols[k]).get(wRow).load32Splat(wAt + o * 4).f32x4Mul().f32x4Add().set(acc));
        if (w.stride === undefined) c.get(wRow).get(w.rowStride).i32Add().set(wRow);
      }
    }
  };
  c.for(b0, () => c.i32(0), () => c.get(quadEnd), () => {
    rowOf(c, x, b0);
    c.set(xRow);
    c.get(w.base).set(wRow);
    blockedSums(c, w.rows, !!w.blocked, total, partial, sum);
    rowOf(c, y, b0);
    c.set(yRow);
    total.forEach(({ acc }, o) => {
      const value = () => (c.get(acc), bias && c.get(bias).load32Splat(o * 4).f32x4Add());
      // a one-column y holds the four rows' values side by side; a wider one gets each lane in its row
      if (y.width === 1) return void (c.get(yRow), value(), c.storeV128());
      value();
      c.set(acc);
      for (let j = 0; j < 4; j++) c.get(yRow).get(acc).store32Lane((j * y.width + o) * 4, j);
    });
  }, 4);
  return quadEnd;
}

/** cols[k] = the lanes k of four vectors (rows[j] pushes row j): a 4x4 transpose in eight shuffles. */
function transpose4(c: Code, rows: (() => void)[], cols: Local[]): void {
  const t = [0, 1, 2, 3].map(() => c.local('v128'));
  rows.forEach((row, j) => (row(), c.set(cols[j])));
  // t0 = a0 b0 a1 b1, t1 = a2 b2 a3 b3, t2 = c0 d0 c1 d1, t3 = c2 d2 c3 d3
  for (const pair of [0, 2]) {
    c.get(cols[pair]).get(cols[pair + 1]).f32x4Shuffle([0, 4, 1, 5]).set(t[pair]);
    c.get(cols[pair]).get(cols[pair + 1]).f32x4Shuffle([2, 6, 3, 7]).set(t[pair + 1]);
  }
  // col0 = a0 b0 c0 d0 and col1 = a1 b1 c1 d1 from t0 and t2; col2 and col3 from t1 and t3
  for (const [from, into] of [[0, 0], [1, 2]] as const) {
    c.get(t[from]).get(t[from + 2]).f32x4Shuffle([0, 1, 4, 5]).set(cols[into]);
    c.get(t[from]).get(t[from + 2]).f32x4Shuffle([2, 3, 6, 7]).set(cols[into + 1]);
  }
}

/**
 * dW[i, o] = the sum over b of x[b, i] dy[b, o] (dW contiguous [rows, width]), in the op path's order:
 * over b in blocks of 48 where it sums so (the batch is a run-time number: the blocks are run-time loops).
 */
export function denseGradWeights(c: Code, batch: Local, x: Mat, dy: Mat, dw: Mat, blocked = false, accumulate = false): void {
  if (dy.width === 1 && !blocked) return scaledRowSums(c, batch, x, dy, dw, accumulate);
  const dwRow = c.local('i32');
  const i = c.local('i32');
  const xs = c.local('v128');
  const x1 = c.local('f32');
  const groups = groupsOf(dw.width).map(([first, width]) => ({ total: accumulators(c, first, width), partial: accumulators(c, first, width) }));
  c.for(i, () => c.i32(0), () => c.i32(x.width), () => {
    address(c, dw.base, dw.offset, i, dw.width * 4);
    c.set(dwRow);
    for (const { total, partial } of groups) {
      // accumulating, the sums go on from what dW holds (a shared layer's: the members before this one)
      batchSums(c, batch, blocked, total, partial, accumulate ? () => loadAll(c, total, dwRow) : undefined, (b, into) => {
        rowOf(c, x, b);
        c.get(i).i32(4).i32Mul().i32Add().loadF32().tee(x1).f32x4Splat().set(xs);
        const dyRow = c.local('i32');
        rowOf(c, dy, b);
        c.set(dyRow);
        for (const a of into) {
          c.get(a.acc).get(a.lanes.width === 4 ? xs : x1).get(dyRow);
          a.lanes.load(a.col);
          a.lanes.mul();
          a.lanes.add();
          c.set(a.acc);
        }
      });
      for (const a of total) {
        c.get(dwRow).get(a.acc);
        a.lanes.store(a.col);
      }
    }
  });
}

/**
 * dW[i, 0] = the sum over b, in order, of x[b, i] dy[b] (one output column): SIMD over i, each lane summing
 * its own i over b in order, as the sequential sum does.
 */
function scaledRowSums(c: Code, batch: Local, x: Mat, dy: Mat, dw: Mat, accumulate: boolean): void {
  const dwAt = c.local('i32');
  const xRow = c.local('i32');
  const d4 = c.local('v128');
  const d1 = c.local('f32');
  address(c, dw.base, dw.offset);
  c.set(dwAt);
  if (!accumulate) zeroRow(c, dwAt, x.width);
  forRows(c, batch, (b) => {
    rowOf(c, x, b);
    c.set(xRow);
    rowOf(c, dy, b);
    c.loadF32().tee(d1).f32x4Splat().set(d4);
    columns(c, x.width, (v, col) => {
      c.get(dwAt);
      c.get(dwAt);
      v.load(col);
      c.get(xRow);
      v.load(col);
      c.get(v.width === 4 ? d4 : d1);
      v.mul();
      v.add();
      v.store(col);
    });
  });
}

/**
 * Sums over the batch b = 0..B-1 in the op path's order: `term(b, into)` adds row b's terms; in blocks of
 * 48 rows (run-time loops), each block summed from 0 and added to the total, where `blocked`.
 */
function batchSums(c: Code, batch: Local, blocked: boolean, total: Acc[], partial: Acc[], start: (() => void) | undefined, term: (b: Local, into: Acc[]) => void): void {
  if (start) start();
  else zero(c, total);
  if (!blocked) return forRows(c, batch, (b) => term(b, total));
  const b0 = c.local('i32');
  const end = c.local('i32');
  const b = c.local('i32');
  c.for(b0, () => c.i32(0), () => c.get(batch), () => {
    // end = min(b0 + 48, batch)
    c.get(b0).i32(SUM_BLOCK).i32Add().get(batch).get(b0).i32(SUM_BLOCK).i32Add().get(batch).i32LtS().select().set(end);
    zero(c, partial);
    c.for(b, () => c.get(b0), () => c.get(end), () => term(b, partial));
    addAll(c, total, partial);
  }, SUM_BLOCK);
}

/** db[o] = sum over b of dy[b, o] (accumulating: added on to what db holds, in the same order). */
export function columnSums(c: Code, batch: Local, dy: Mat, db: Mat, accumulate = false): void {
  const dbAt = c.local('i32');
  const dyRow = c.local('i32');
  address(c, db.base, db.offset);
  c.set(dbAt);
  if (!accumulate) zeroRow(c, dbAt, db.width);
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

/** wt [width, rows] = the member's W [rows, width] transposed, contiguous. */
export function transposeParam(c: Code, w: ParamMat, wt: Mat): void {
  const r = c.local('i32');
  const o = c.local('i32');
  const src = c.local('i32');
  const dst = c.local('i32');
  c.get(w.base).set(src);
  address(c, wt.base, wt.offset);
  c.set(dst);
  const unrolled = w.width <= UNROLL;
  c.for(r, () => c.i32(0), () => c.i32(w.rows), () => {
    // W[r, o] -> wt[o, r]: dst walks wt's column r
    if (unrolled) for (let k = 0; k < w.width; k++) c.get(dst).get(src).loadF32(k * 4).storeF32(k * w.rows * 4);
    else {
      c.for(o, () => c.i32(0), () => c.i32(w.width), () => {
        c.get(dst).get(o).i32(w.rows * 4).i32Mul().i32Add().get(src).get(o).i32(4).i32Mul().i32Add().loadF32().storeF32();
      });
    }
    c.get(src).get(w.rowStride).i32Add().set(src);
    c.get(dst).i32(4).i32Add().set(dst);
  });
}

/**
 * dx[b, i] = the sum over o of dy[b, o] W[i, o], in the op path's order (over o, in blocks of 48 where it
 * sums so): the product dy · Wᵀ, W transposed into `wt` [width, rows] first, so that denseForward's SIMD
 * rows sum each dx[b, i] over o in that same order, lane by lane.
 */
export function denseGradInput(c: Code, batch: Local, dy: Mat, w: ParamMat, dx: Mat, wt: Mat): void {
  denseForward(c, batch, dy, transposedParam(c, w, wt), undefined, dx);
}

/** A member's [rows, width] parameter transposed into `into`, as a ParamMat [width, rows] that sums as the parameter does. */
export function transposedParam(c: Code, w: ParamMat, into: Mat): ParamMat {
  transposeParam(c, w, into);
  const base = c.local('i32');
  address(c, into.base, into.offset);
  c.set(base);
  const rowStride = c.local('i32');
  c.i32(w.rows * 4).set(rowStride);
  return { base, rowStride, rows: w.width, width: w.rows, blocked: w.blocked, stride: w.rows * 4 };
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
