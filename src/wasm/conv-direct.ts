// Register-blocked SIMD loops for conv2d in a generated step, one member at a time: the forward conv, its
// kernel gradient and (stride 1) its input gradient computed straight from the padded image, with no
// patches matrix. Each output is summed in exactly the order of the loops of src/wasm/conv.ts (the op
// path's: see there), so the numbers are the same bit for bit; what changes is which outputs are computed
// together. A tile holds up to ACCS f32x4 sums in locals: several pixels times several vectors of
// channels, each lane one output of its own, its sum a chain of its own. Where a row of channels is not
// a whole number of vectors, the last vector's spare lanes compute nothing anyone reads: loads and stores
// of a partial vector touch only its own floats. The kernel's terms run as loops with small bodies (one
// term of a tile each): V8 compiled the fully unrolled bodies (hundreds of terms) 2-3x slower.
import type { Code, Local } from './module.js';
import { address, type Mat, type ParamMat } from './blocks.js';
import { paddedHeight, paddedWidth, type Spatial } from './conv.js';
import { groupsOfVecs, loadVec, paddedRow, storeVec, vectorsOf } from './vectors.js';

/** The most f32x4 sums a tile keeps in locals (x86 has 16 vector registers; the rest hold operands). */
const ACCS = 12;

/** acc += splat * operand (operand pushed by `push`): a multiply and an add, as the op path's loops do. */
function madd(c: Code, acc: Local, splat: Local, push: () => void): void {
  c.get(acc).get(splat);
  push();
  c.f32x4Mul().f32x4Add().set(acc);
}

/** The hoisted f32x4 zero. */
const zero = (c: Code): Local => c.hoisted('f32x4:0', 'v128', () => c.v128Const([0, 0, 0, 0]));

/** v128 locals, made once per shape and reused by every tile of that shape. */
function locals(c: Code, count: number): Local[] {
  return Array.from({ length: count }, () => c.local('v128'));
}

/**
 * dst [rows, paddedRow(width)] = the member's kernel w [rows, width] (rows rowStride bytes apart), the pad
 * lanes zero: rows a tile loads whole vectors of.
 */
export function padKernelRows(c: Code, w: ParamMat, dst: Mat): void {
  const wp = paddedRow(w.width);
  const t = c.local('i32');
  const src = c.local('i32');
  const out = c.local('i32');
  c.get(w.base).set(src);
  address(c, dst.base, dst.offset);
  c.set(out);
  c.for(t, () => c.i32(0), () => c.i32(w.rows), () => {
    for (let f = 0; f < wp; f++) {
      c.get(out);
      if (f < w.width) c.get(src).loadF32(f * 4);
      else c.f32(0);
      c.storeF32(f * 4);
    }
    c.get(src).get(w.rowStride).i32Add().set(src);
    c.get(out).i32(wp * 4).i32Add().set(out);
  });
}

/**
 * dst [kh*kw, F, paddedRow(C)] = the kernel [kh*kw, C, F] with its last two axes swapped, the pad lanes
 * zero: for each cell and filter, the vector of the input channels it reaches.
 */
export function transposeKernelPadded(c: Code, w: ParamMat, cells: number, channels: number, dst: Mat): void {
  const f = w.width;
  const cp = paddedRow(channels);
  const pq = c.local('i32');
  const src = c.local('i32');
  const out = c.local('i32');
  c.get(w.base).set(src);
  address(c, dst.base, dst.offset);
  c.set(out);
  c.for(pq, () => c.i32(0), () => c.i32(cells), () => {
    for (let ch = 0; ch < cp; ch++) {
      for (let o = 0; o < f; o++) {
        c.get(out);
        if (ch < channels) c.get(src).loadF32(o * 4);
        else c.f32(0);
        c.storeF32((o * cp + ch) * 4);
      }
      if (ch < channels) c.get(src).get(w.rowStride).i32Add().set(src);
    }
    c.get(out).i32(f * cp * 4).i32Add().set(out);
  });
}

/**
 * A row of `width` pixels in tiles of `per`, then one tile of the rest: `tile(n, j)` computes n pixels from
 * pixel j (an i32 local; the rest's tile gets a local holding its first pixel).
 */
function tiles(c: Code, width: number, per: number, tile: (n: number, j: Local) => void): void {
  const whole = Math.floor(width / per) * per;
  const j = c.local('i32');
  if (whole > 0) c.for(j, () => c.i32(0), () => c.i32(whole), () => tile(per, j), per);
  if (whole < width) {
    c.i32(whole).set(j);
    tile(width - whole, j);
  }
}

/**
 * z [B, oh, ow, F] = the conv of xs [B, Hp, Wp, C] (padded) with wp [kh*kw*C, paddedRow(F)] (+ bias): each
 * output summed from 0 over the window's (row, column, channel) in order, then plus the bias, as a
 * product of the input's patches with the kernel would (the op path's order). A tile: up to 4 outputs of
 * a row times a group of up to 4 filter vectors.
 */
export function convForwardDirect(c: Code, batch: Local, xs: Mat, g: Spatial, wp: Mat, bias: Local | undefined, filters: number, z: Mat): void {
  const [hp, wpx] = [paddedHeight(g), paddedWidth(g)];
  const fp = paddedRow(filters);
  const groups = groupsOfVecs(vectorsOf(filters), 4);
  const tmp = c.local('v128');
  const xsplat = c.local('v128');
  const wv = locals(c, 4);
  const b4 = groups.flat().map(() => c.local('v128'));
  if (bias) groups.flat().forEach((v, i) => (loadVec(c, bias, v.col * 4, v, tmp), c.set(b4[i])));
  const xRow = c.local('i32');
  const zRow = c.local('i32');
  const px = c.local('i32');
  const zp = c.local('i32');
  const xq = c.local('i32');
  const wq = c.local('i32');
  const p = c.local('i32');
  const q = c.local('i32');
  const ch = c.local('i32');
  const accsFor = new Map<number, Local[]>();
  const b = c.local('i32');
  const i = c.local('i32');
  c.for(b, () => c.i32(0), () => c.get(batch), () => {
    c.for(i, () => c.i32(0), () => c.i32(g.oh), () => {
      // xRow = xs + ((b*Hp + i*sh) * Wp) * C floats; zRow = z + ((b*oh + i) * ow) * F floats
      c.get(xs.base).get(b).i32(hp).i32Mul().get(i).i32(g.sh).i32Mul().i32Add().i32(wpx * g.c * 4).i32Mul().i32Add().set(xRow);
      if (xs.offset) c.get(xRow).i32(xs.offset).i32Add().set(xRow);
      c.get(z.base).get(b).i32(g.oh).i32Mul().get(i).i32Add().i32(g.ow * filters * 4).i32Mul().i32Add().set(zRow);
      if (z.offset) c.get(zRow).i32(z.offset).i32Add().set(zRow);
      let first = 0;
      for (const group of groups) {
        const gFirst = first;
        first += group.length;
        const per = Math.min(4, Math.max(1, Math.floor(ACCS / group.length)));
        tiles(c, g.ow, per, (n, j) => {
          const key = n * 8 + group.length;
          if (!accsFor.has(key)) accsFor.set(key, locals(c, n * group.length));
          const accs = accsFor.get(key)!;
          c.get(xRow).get(j).i32(g.sw * g.c * 4).i32Mul().i32Add().set(px);
          c.get(zRow).get(j).i32(filters * 4).i32Mul().i32Add().set(zp);
          for (const a of accs) c.get(zero(c)).set(a);
          // the kernel's (row, column, channel) in order: xq walks the window, wq the padded kernel's rows
          c.get(px).set(xq);
          address(c, wp.base, wp.offset);
          c.set(wq);
          c.for(p, () => c.i32(0), () => c.i32(g.kh), () => {
            c.for(q, () => c.i32(0), () => c.i32(g.kw), () => {
              c.for(ch, () => c.i32(0), () => c.i32(g.c), () => {
                group.forEach((v, k) => c.get(wq).loadV128(v.col * 4).set(wv[k]));
                for (let u = 0; u < n; u++) {
                  c.get(xq).load32Splat(u * g.sw * g.c * 4).set(xsplat);
                  group.forEach((_, k) => madd(c, accs[u * group.length + k], xsplat, () => void c.get(wv[k])));
                }
                c.get(xq).i32(4).i32Add().set(xq);
                c.get(wq).i32(fp * 4).i32Add().set(wq);
              });
            });
            c.get(xq).i32((wpx - g.kw) * g.c * 4).i32Add().set(xq);
          });
          for (let u = 0; u < n; u++) {
            group.forEach((v, k) => {
              const a = accs[u * group.length + k];
              if (bias) c.get(a).get(b4[gFirst + k]).f32x4Add().set(a);
              storeVec(c, zp, (u * filters + v.col) * 4, v, a);
            });
          }
        });
      }
    });
  });
}

/**
 * dw [kh*kw*C, F] = the sum over the outputs of xs's window values times dz [B, oh, ow, F], in the order
 * `order` takes the outputs: 'rows' (b, i, j), as denseGradWeights sums the patches' rows, or 'cells'
 * ((i, j), then b), as the op path's dilated conv on a member's own input does. The sums go on in dw between chunks of outputs (an
 * example, or an output row), so a chunk's image and dz stay in cache while every term block passes over it.
 * `accumulate`: the sums go on from what dw holds (a shared kernel's, member after member) instead of from 0.
 */
export function convGradWeightsDirect(c: Code, batch: Local, xs: Mat, dz: Mat, g: Spatial, filters: number, order: 'rows' | 'cells', dw: Mat, accumulate = false): void {
  const [hp, wpx] = [paddedHeight(g), paddedWidth(g)];
  const k = g.kh * g.kw * g.c;
  const groups = groupsOfVecs(vectorsOf(filters), 4);
  const tmp = c.local('v128');
  const xsplat = c.local('v128');
  const dzv = locals(c, 4);
  const termOffset = (t: number) => {
    const ch = t % g.c;
    const q = Math.floor(t / g.c) % g.kw;
    const p = Math.floor(t / (g.c * g.kw));
    return ((p * wpx + q) * g.c + ch) * 4;
  };
  // dw = 0
  const dwAt = c.local('i32');
  address(c, dw.base, dw.offset);
  c.set(dwAt);
  const zi = c.local('i32');
  if (!accumulate) c.for(zi, () => c.i32(0), () => c.i32(k * filters * 4), () => c.get(dwAt).get(zi).i32Add().f32(0).storeF32(), 4);
  const outer = c.local('i32');
  const mid = c.local('i32');
  const inner = c.local('i32');
  const px = c.local('i32');
  const dzp = c.local('i32');
  const pxMid = c.local('i32');
  const dzMid = c.local('i32');
  const accsFor = new Map<number, Local[]>();
  const imageBytes = hp * wpx * g.c * 4;
  const dzImageBytes = g.oh * g.ow * filters * 4;
  /** the chunk's outputs in order: body() with px at the output's window corner and dzp at its dz */
  const chunk = (body: () => void) => {
    if (order === 'rows') {
      // chunk b = outer: (i, j) in order
      c.get(xs.base).get(outer).i32(imageBytes).i32Mul().i32Add().set(pxMid);
      if (xs.offset) c.get(pxMid).i32(xs.offset).i32Add().set(pxMid);
      c.get(dz.base).get(outer).i32(dzImageBytes).i32Mul().i32Add().set(dzp);
      if (dz.offset) c.get(dzp).i32(dz.offset).i32Add().set(dzp);
      c.for(mid, () => c.i32(0), () => c.i32(g.oh), () => {
        c.get(pxMid).set(px);
        c.for(inner, () => c.i32(0), () => c.i32(g.ow), () => {
          body();
          c.get(px).i32(g.sw * g.c * 4).i32Add().set(px);
          c.get(dzp).i32(filters * 4).i32Add().set(dzp);
        });
        c.get(pxMid).i32(g.sh * wpx * g.c * 4).i32Add().set(pxMid);
      });
    } else {
      // chunk i = outer: j, then b
      c.get(xs.base).get(outer).i32(g.sh * wpx * g.c * 4).i32Mul().i32Add().set(pxMid);
      if (xs.offset) c.get(pxMid).i32(xs.offset).i32Add().set(pxMid);
      c.get(dz.base).get(outer).i32(g.ow * filters * 4).i32Mul().i32Add().set(dzMid);
      if (dz.offset) c.get(dzMid).i32(dz.offset).i32Add().set(dzMid);
      c.for(mid, () => c.i32(0), () => c.i32(g.ow), () => {
        c.get(pxMid).set(px);
        c.get(dzMid).set(dzp);
        forBatch(c, batch, inner, () => {
          body();
          c.get(px).i32(imageBytes).i32Add().set(px);
          c.get(dzp).i32(dzImageBytes).i32Add().set(dzp);
        });
        c.get(pxMid).i32(g.sw * g.c * 4).i32Add().set(pxMid);
        c.get(dzMid).i32(filters * 4).i32Add().set(dzMid);
      });
    }
  };
  const chunks = () => (order === 'rows' ? c.get(batch) : c.i32(g.oh));
  c.for(outer, () => c.i32(0), chunks, () => {
    for (const group of groups) {
      const per = Math.max(1, Math.floor(ACCS / group.length) - 1);
      for (let t0 = 0; t0 < k; t0 += per) {
        const n = Math.min(per, k - t0);
        const key = n * 8 + group.length;
        if (!accsFor.has(key)) accsFor.set(key, locals(c, n * group.length));
        const accs = accsFor.get(key)!;
        for (let r = 0; r < n; r++) group.forEach((v, j) => (loadVec(c, dwAt, ((t0 + r) * filters + v.col) * 4, v, tmp), c.set(accs[r * group.length + j])));
        chunk(() => {
          group.forEach((v, j) => (loadVec(c, dzp, v.col * 4, v, tmp), c.set(dzv[j])));
          for (let r = 0; r < n; r++) {
            c.get(px).load32Splat(termOffset(t0 + r)).set(xsplat);
            group.forEach((_, j) => madd(c, accs[r * group.length + j], xsplat, () => void c.get(dzv[j])));
          }
        });
        for (let r = 0; r < n; r++) group.forEach((v, j) => storeVec(c, dwAt, ((t0 + r) * filters + v.col) * 4, v, accs[r * group.length + j]));
      }
    }
  });
}

/** for (i = 0; i < batch; i++) body(), batch an i32 local */
function forBatch(c: Code, batch: Local, i: Local, body: () => void): void {
  c.for(i, () => c.i32(0), () => c.get(batch), body);
}

/** The geometry of dz padded by the kernel's size less one on every side: the input gradient's windows. */
export function paddedGradSpatial(g: Spatial, filters: number): Spatial {
  return { h: g.oh, w: g.ow, c: filters, kh: g.kh, kw: g.kw, sh: 1, sw: 1, oh: g.h, ow: g.w, pt: g.kh - 1, pb: g.kh - 1, pl: g.kw - 1, pr: g.kw - 1 };
}

/**
 * dx [B, H, W, C] (stride 1) = for each input element, the sum over the outputs whose windows hold it, in
 * (out row, out column) order, and over the filters in order, of dz times the kernel: convGradInput's
 * scatter order, gathered. dzp is dz padded with zeros (paddedGradSpatial): the terms outside dz add 0 to
 * a sum that is never -0, which leaves it as it is. wt: transposeKernelPadded's [kh*kw, F, paddedRow(C)].
 */
export function convGradInputDirect(c: Code, batch: Local, dzp: Mat, g: Spatial, wt: Mat, filters: number, dx: Mat): void {
  if (g.sh !== 1 || g.sw !== 1) throw new Error('internal error: the gathered input gradient is for stride 1');
  const pg = paddedGradSpatial(g, filters);
  const [hq, wq_] = [paddedHeight(pg), paddedWidth(pg)];
  const cp = paddedRow(g.c);
  const groups = groupsOfVecs(vectorsOf(g.c), 4);
  const xsplat = c.local('v128');
  const wv = locals(c, 4);
  const accsFor = new Map<number, Local[]>();
  const b = c.local('i32');
  const y = c.local('i32');
  const dRow = c.local('i32');
  const xRow = c.local('i32');
  const pz = c.local('i32');
  const px = c.local('i32');
  const dq = c.local('i32');
  const wq = c.local('i32');
  const u = c.local('i32');
  const v = c.local('i32');
  const o = c.local('i32');
  c.for(b, () => c.i32(0), () => c.get(batch), () => {
    c.for(y, () => c.i32(0), () => c.i32(g.h), () => {
      // the element (y, x) of dx, padded coordinates (y + pt, x + pl): its windows' dz start at dzp row
      // y + pt (kernel row kh-1 first), column x + pl
      c.get(dzp.base).get(b).i32(hq).i32Mul().get(y).i32Add().i32(g.pt).i32Add().i32(wq_).i32Mul().i32(g.pl).i32Add().i32(filters * 4).i32Mul().i32Add().set(dRow);
      if (dzp.offset) c.get(dRow).i32(dzp.offset).i32Add().set(dRow);
      c.get(dx.base).get(b).i32(g.h).i32Mul().get(y).i32Add().i32(g.w * g.c * 4).i32Mul().i32Add().set(xRow);
      if (dx.offset) c.get(xRow).i32(dx.offset).i32Add().set(xRow);
      for (const group of groups) {
        const per = Math.min(4, Math.max(1, Math.floor(ACCS / group.length)));
        tiles(c, g.w, per, (n, j) => {
          const key = n * 8 + group.length;
          if (!accsFor.has(key)) accsFor.set(key, locals(c, n * group.length));
          const accs = accsFor.get(key)!;
          c.get(dRow).get(j).i32(filters * 4).i32Mul().i32Add().set(pz);
          c.get(xRow).get(j).i32(g.c * 4).i32Mul().i32Add().set(px);
          for (const a of accs) c.get(zero(c)).set(a);
          // the windows' cells (u, v) at run time, in order: dz's pointer moves along the padded rows, the
          // kernel's down from its last cell (u, v reaches cell (kh-1-u, kw-1-v)); the filters in order
          c.get(pz).set(dq);
          address(c, wt.base, wt.offset + (g.kh * g.kw - 1) * filters * cp * 4);
          c.set(wq);
          c.for(u, () => c.i32(0), () => c.i32(g.kh), () => {
            c.for(v, () => c.i32(0), () => c.i32(g.kw), () => {
              c.for(o, () => c.i32(0), () => c.i32(filters), () => {
                group.forEach((vec, k) => c.get(wq).loadV128(vec.col * 4).set(wv[k]));
                for (let e = 0; e < n; e++) {
                  c.get(dq).load32Splat(e * filters * 4).set(xsplat);
                  group.forEach((_, k) => madd(c, accs[e * group.length + k], xsplat, () => void c.get(wv[k])));
                }
                c.get(dq).i32(4).i32Add().set(dq);
                c.get(wq).i32(cp * 4).i32Add().set(wq);
              });
              // dq is at the next column's dz; wq back over this cell and on to the one before it
              c.get(wq).i32(-2 * filters * cp * 4).i32Add().set(wq);
            });
            c.get(dq).i32((wq_ - g.kw) * filters * 4).i32Add().set(dq);
          });
          for (let e = 0; e < n; e++) group.forEach((vec, k) => storeVec(c, px, (e * g.c + vec.col) * 4, vec, accs[e * group.length + k]));
        });
      }
    });
  });
}
