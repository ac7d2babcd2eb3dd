// Register-tiled dense products for the recurrent layers' steps (src/layers/lstm.ts): y = x · W over a
// run-time number of rows, the weight gradient xᵀ dy, and a gradient's column sums. A tile keeps its f32x4
// sums in locals, a few rows times a few vectors of columns, so that each vector of W (or of dy) loaded
// serves several rows and the independent sums' additions overlap. Each output is still the sum of
// blocks.ts's denseForward or denseGradWeights, term by term in the same order from the same zero, with a
// multiply and an add per term (no fused multiply-add): the same bits, only more outputs at once. Columns
// past the last whole vector are a partial vector (vectors.ts): its spare lanes compute nothing anyone reads.
// Tiles and column groups are run-time loops with small bodies (V8 compiles those best); the remainders,
// a row at a time and a last group of whatever vectors are left, are loops and code of their own.
import type { Code, Local } from './module.js';
import { blocksOf, denseForward, denseGradInput, denseGradWeights, rowOf, transposedParam, type Mat, type ParamMat } from './blocks.js';
import { loadVec, storeVec, vectorsOf, type Vec } from './vectors.js';

/**
 * A tile: ROWS rows times VECS vectors of columns, 8 sums, the VECS vectors of W and a splat: 14 of x64's 16
 * vector registers. Measured on the lstm bench's products (CPU time, loaded 2-core EPYC): 2x4 ~24 GMAC/s;
 * 4x2 and 2x3 ~23; 3x3, 3x4, 4x3, 2x5, 2x6 and 1x8 13-16 (V8 spills their sums); 16-column slices of
 * denseForward 8-10 (16 for a 128-term sum).
 */
const ROWS = 2;
const VECS = 4;

/** acc += splat * operand: a multiply and an add, as denseForward's terms are. */
function madd(c: Code, acc: Local, splat: Local, operand: Local): void {
  c.get(acc).get(splat).get(operand).f32x4Mul().f32x4Add().set(acc);
}

/** The hoisted f32x4 zero. */
const zero = (c: Code): Local => c.hoisted('f32x4:0', 'v128', () => c.v128Const([0, 0, 0, 0]));

/**
 * A row of `width` columns as groups of VECS vectors: `whole` groups of whole vectors, a run-time loop over
 * the group's first byte (`at`, a local), then the rest as one group (at set to its first byte). `group`
 * gets the group's vectors, their columns counted from the group's first.
 */
function columnGroups(c: Code, width: number, at: Local, group: (vecs: Vec[]) => void): void {
  const vecs = vectorsOf(width);
  const whole = Math.floor(Math.floor(width / 4) / VECS);
  const relative = (from: number, count: number) => vecs.slice(from, from + count).map((v) => ({ ...v, col: v.col - vecs[from].col }));
  if (whole > 0) c.for(at, () => c.i32(0), () => c.i32(whole * VECS * 16), () => group(relative(0, VECS)), VECS * 16);
  if (whole * VECS < vecs.length) {
    c.i32(whole * VECS * 16).set(at);
    group(relative(whole * VECS, vecs.length - whole * VECS));
  }
}

/** The v128 locals of a tile's sums, made once per shape and reused by every tile of that shape. */
function sumsFor(c: Code, cache: Map<string, Local[]>, rows: number, vecs: number): Local[] {
  const key = `${rows}x${vecs}`;
  if (!cache.has(key)) cache.set(key, Array.from({ length: rows * vecs }, () => c.local('v128')));
  return cache.get(key)!;
}

/**
 * y [rows, W] = x [rows, k] · w [k, W], w a member's parameter (rows rowStride bytes apart): each output the
 * sum over i in order from 0 of x[r, i] w[i, o], in blocks of 48 where w.blocked (each block summed from 0,
 * then added to the total: y holds the total between blocks), as denseForward sums it; plus the bias (a
 * row of W floats at the local's address, where given) after the last block, as denseForward adds it. Tiles
 * of ROWS rows, then the rest a row at a time.
 */
export function tiledProduct(c: Code, rows: Local, x: Mat, w: ParamMat, y: Mat, bias?: Local): void {
  const blocks = blocksOf(w.rows, !!w.blocked);
  const r0 = c.local('i32');
  const xRow = c.local('i32');
  const yRow = c.local('i32');
  const at = c.local('i32');
  const xq = c.local('i32');
  const wq = c.local('i32');
  const yq = c.local('i32');
  const i = c.local('i32');
  const bq = bias && c.local('i32');
  const tmp = c.local('v128');
  const xs = c.local('v128');
  const wv = Array.from({ length: VECS }, () => c.local('v128'));
  const cache = new Map<string, Local[]>();
  /** the tile of n rows from r0, one group of columns from `at` */
  const tile = (n: number, vecs: Vec[]) => {
    const sums = sumsFor(c, cache, n, vecs.length);
    const sum = (r: number, j: number) => sums[r * vecs.length + j];
    blocks.forEach(([k0, k1], block) => {
      for (const s of sums) c.get(zero(c)).set(s);
      c.get(xRow).i32(k0 * 4).i32Add().set(xq);
      c.get(w.base).get(at).i32Add();
      if (k0) c.get(w.rowStride).i32(k0).i32Mul().i32Add();
      c.set(wq);
      c.for(i, () => c.i32(k0), () => c.i32(k1), () => {
        vecs.forEach((v, j) => (loadVec(c, wq, v.col * 4, v, tmp), c.set(wv[j])));
        for (let r = 0; r < n; r++) {
          c.get(xq).load32Splat(r * x.width * 4).set(xs);
          vecs.forEach((_, j) => madd(c, sum(r, j), xs, wv[j]));
        }
        c.get(xq).i32(4).i32Add().set(xq);
        c.get(wq).get(w.rowStride).i32Add().set(wq);
      });
      // the block's sums are the total, or added to it (0 + the first block's, as blockedSums adds them)
      c.get(yRow).get(at).i32Add().set(yq);
      const last = block === blocks.length - 1;
      if (bq && last) c.get(bias!).get(at).i32Add().set(bq);
      for (let r = 0; r < n; r++) {
        vecs.forEach((v, j) => {
          const off = (r * y.width + v.col) * 4;
          if (blocks.length > 1) {
            if (block === 0) c.get(zero(c));
            else loadVec(c, yq, off, v, tmp);
            c.get(sum(r, j)).f32x4Add().set(sum(r, j));
          }
          if (bq && last) (c.get(sum(r, j)), loadVec(c, bq, v.col * 4, v, tmp), c.f32x4Add(), c.set(sum(r, j)));
          storeVec(c, yq, off, v, sum(r, j));
        });
      }
    });
  };
  const rowTiles = (n: number) => () => {
    rowOf(c, x, r0);
    c.set(xRow);
    rowOf(c, y, r0);
    c.set(yRow);
    columnGroups(c, w.width, at, (vecs) => tile(n, vecs));
  };
  // whole tiles while r0 + ROWS <= rows; the loop leaves r0 at the first row left, where the rest start
  c.for(r0, () => c.i32(0), () => c.get(rows).i32(ROWS - 1).i32Sub(), rowTiles(ROWS), ROWS);
  c.for(r0, () => c.get(r0), () => c.get(rows), rowTiles(1));
}

/**
 * dw [k, W] = xᵀ dy (x [batch, k], dy [batch, W]; dw contiguous), or with `add` dw + xᵀ dy (a step's share
 * added to the later steps' total, as autodiff adds them): each dw[i, o] the sum over b in order from 0 of
 * x[b, i] dy[b, o], as denseGradWeights (not blocked) sums it. Tiles of ROWS of dw's rows.
 */
export function tiledGradWeights(c: Code, batch: Local, x: Mat, dy: Mat, dw: Mat, add: boolean): void {
  const k = x.width;
  const i0 = c.local('i32');
  const at = c.local('i32');
  const xq = c.local('i32');
  const dyq = c.local('i32');
  const dwq = c.local('i32');
  const b = c.local('i32');
  const tmp = c.local('v128');
  const xs = c.local('v128');
  const dv = Array.from({ length: VECS }, () => c.local('v128'));
  const cache = new Map<string, Local[]>();
  /** dw's rows i0..i0+n-1 (i0 a local), one group of columns from `at` */
  const tile = (n: number, vecs: Vec[]) => {
    const sums = sumsFor(c, cache, n, vecs.length);
    const sum = (r: number, j: number) => sums[r * vecs.length + j];
    for (const s of sums) c.get(zero(c)).set(s);
    c.get(x.base).get(i0).i32(4).i32Mul().i32Add().set(xq);
    c.get(dy.base).get(at).i32Add().set(dyq);
    c.for(b, () => c.i32(0), () => c.get(batch), () => {
      vecs.forEach((v, j) => (loadVec(c, dyq, dy.offset + v.col * 4, v, tmp), c.set(dv[j])));
      for (let r = 0; r < n; r++) {
        c.get(xq).load32Splat(x.offset + r * 4).set(xs);
        vecs.forEach((_, j) => madd(c, sum(r, j), xs, dv[j]));
      }
      c.get(xq).i32(x.width * 4).i32Add().set(xq);
      c.get(dyq).i32(dy.width * 4).i32Add().set(dyq);
    });
    c.get(dw.base).get(i0).i32(dw.width * 4).i32Mul().i32Add().get(at).i32Add().set(dwq);
    for (let r = 0; r < n; r++) {
      vecs.forEach((v, j) => {
        const off = dw.offset + (r * dw.width + v.col) * 4;
        if (add) {
          loadVec(c, dwq, off, v, tmp);
          c.get(sum(r, j)).f32x4Add().set(sum(r, j));
        }
        storeVec(c, dwq, off, v, sum(r, j));
      });
    }
  };
  const whole = Math.floor(k / ROWS) * ROWS;
  if (whole > 0) c.for(i0, () => c.i32(0), () => c.i32(whole), () => columnGroups(c, dw.width, at, (vecs) => tile(ROWS, vecs)), ROWS);
  if (whole < k) {
    c.i32(whole).set(i0);
    columnGroups(c, dw.width, at, (vecs) => tile(k - whole, vecs));
  }
}

/**
 * total [W] += the column sums of dy [batch, W], each summed over b in order from 0 and then added to the
 * total: columnSums into a zeroed row and then that row added, as the lstm's bias gradient was, in one pass.
 */
export function addColumnSums(c: Code, batch: Local, dy: Mat, total: Mat): void {
  const at = c.local('i32');
  const dyq = c.local('i32');
  const b = c.local('i32');
  const tmp = c.local('v128');
  const cache = new Map<string, Local[]>();
  columnGroups(c, dy.width, at, (vecs) => {
    const sums = sumsFor(c, cache, 1, vecs.length);
    for (const s of sums) c.get(zero(c)).set(s);
    c.get(dy.base).get(at).i32Add().set(dyq);
    c.for(b, () => c.i32(0), () => c.get(batch), () => {
      vecs.forEach((v, j) => (c.get(sums[j]), loadVec(c, dyq, dy.offset + v.col * 4, v, tmp), c.f32x4Add(), c.set(sums[j])));
      c.get(dyq).i32(dy.width * 4).i32Add().set(dyq);
    });
    c.get(total.base).get(at).i32Add().set(dyq);
    vecs.forEach((v, j) => {
      loadVec(c, dyq, total.offset + v.col * 4, v, tmp);
      c.get(sums[j]).f32x4Add().set(sums[j]);
      storeVec(c, dyq, total.offset + v.col * 4, v, sums[j]);
    });
  });
}

/**
 * y = x · w (+ bias) in register tiles, a function of its own (Code.outlined: V8 compiles small functions
 * better): every output the same sum in the same order as denseForward's, its bias added after.
 */
export function product(c: Code, rows: Local, x: Mat, w: ParamMat, y: Mat, bias?: Local): void {
  c.outlined(() => tiledProduct(c, rows, x, w, y, bias));
}

/**
 * A dense layer's y = x · W (+ bias) on many rows (a sequence's B*T): in register tiles, or denseForward's
 * code where W is narrower than a vector (its rows in a vector's lanes). The same sums either way.
 */
export function rowsProduct(c: Code, rows: Local, x: Mat, w: ParamMat, bias: Local | undefined, y: Mat): void {
  if (w.width < 4) return denseForward(c, rows, x, w, bias, y);
  tiledProduct(c, rows, x, w, y, bias);
}

/** denseGradInput's dx = dy · Wᵀ (W transposed into `wt` first) on many rows, its product in register tiles. */
export function rowsGradInput(c: Code, rows: Local, dy: Mat, w: ParamMat, dx: Mat, wt: Mat): void {
  if (w.rows < 4) return denseGradInput(c, rows, dy, w, dx, wt);
  tiledProduct(c, rows, dy, transposedParam(c, w, wt), dx);
}

/**
 * denseGradWeights's dW = xᵀ dy on many rows, in register tiles where it sums as they do: over the rows in
 * one run from zero. Summed in blocks of 48, or on from what dW holds (a shared layer's accumulation), or
 * for a dy one column wide, it stays denseGradWeights's.
 */
export function rowsGradWeights(c: Code, rows: Local, x: Mat, dy: Mat, dw: Mat, blocked = false, accumulate = false): void {
  if (blocked || accumulate || dy.width === 1) return denseGradWeights(c, rows, x, dy, dw, blocked, accumulate);
  tiledGradWeights(c, rows, x, dy, dw, false);
}
