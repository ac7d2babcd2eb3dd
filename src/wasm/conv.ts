// The loops of conv2d and the pooling layers in a generated step, for one member at a time. A member's
// image values are NHWC [B, H, W, C] stored flat, row-major, as a Mat [B, H*W*C]. Each loop sums in the
// order of the op path's own kernels, so that a member's numbers are the op path's:
//   - TF.js's Conv2D (XNNPACK's igemm) sums each output over the kernel's (row, column, channel), in that
//     order, from 0; the op path pads the input itself and convolves 'valid'; the bias is added after.
//     The forward pass here is the same sum, straight from the padded input (src/wasm/conv-direct.ts).
//   - dKernel: on a shared input (data), the op path multiplies the patches' transpose with dy, summing over
//     the rows (example, out row, out column) in order; on a member's own input, a dilated forward conv
//     sums over (out row, out column) and then the example.
//   - dInput: a forward conv of the dilated dy with the flipped kernel: each input element sums over the
//     outputs whose windows hold it in (out row, out column) order, and over the filters, in order. Here
//     each output's terms are scattered onto the elements it reaches, output after output, which adds the
//     same terms to each element in the same order.
//   - avgpool: XNNPACK's 9-input sum tree over the window taken column after column (padding as zeros),
//     times 1 / (the number of inputs in the window); its gradient (TF.js's AvgPoolGrad) adds
//     dy * (1 / (kh*kw)) window after window.
//   - maxpool: the maximum; its gradient (netc's MaxPoolGrad, src/kernels/wasm-kernels.ts) goes to the
//     first maximum of each window in row-major order, added window after window.
import type { Code, Local } from './module.js';
import { accumulators, address, columns, forEachFloat, forRows, groupsOf, type Mat, type ParamMat } from './blocks.js';
import { loadVec, storeVec, vectorsOf } from './vectors.js';

/** A window over an NHWC image: the input [h, w, c], the window, stride and padding, the output [oh, ow]. */
export interface Spatial {
  h: number;
  w: number;
  c: number;
  kh: number;
  kw: number;
  sh: number;
  sw: number;
  oh: number;
  ow: number;
  /** padding before and after (TF's 'same': the smaller half before) */
  pt: number;
  pb: number;
  pl: number;
  pr: number;
}

export const paddedHeight = (g: Spatial): number => g.h + g.pt + g.pb;
export const paddedWidth = (g: Spatial): number => g.w + g.pl + g.pr;
export const isPadded = (g: Spatial): boolean => g.pt + g.pb + g.pl + g.pr > 0;

/** i32 local = value pushed by `push` */
function let32(c: Code, push: () => void): Local {
  const l = c.local('i32');
  push();
  c.set(l);
  return l;
}

/** rows = batch * per (an i32 local) */
export function rowsOf(c: Code, batch: Local, per: number): Local {
  return let32(c, () => c.get(batch).i32(per).i32Mul());
}

/** `count` floats of `m` from its start set to `value`. */
export function fillFloats(c: Code, m: Mat, count: () => void, value: number): void {
  forEachFloat(c, count, (v, off) => {
    address(c, m.base, m.offset, off);
    v.const(value);
    v.store();
  });
}

/** Copies n floats from [src + srcOff] to [dst + dstOff] (address locals, constant byte offsets). */
function copyRun(c: Code, src: Local, srcOff: number, dst: Local, dstOff: number, n: number): void {
  const vec = n - (n % 4);
  if (vec <= 256) {
    for (let o = 0; o < vec; o += 4) c.get(dst).get(src).loadV128(srcOff + o * 4).storeV128(dstOff + o * 4);
  } else {
    const off = c.local('i32');
    c.for(off, () => c.i32(0), () => c.i32(vec * 4), () => {
      c.get(dst).get(off).i32Add().get(src).get(off).i32Add().loadV128(srcOff).storeV128(dstOff);
    }, 16);
  }
  for (let o = vec; o < n; o++) c.get(dst).get(src).loadF32(srcOff + o * 4).storeF32(dstOff + o * 4);
}

/** for b < batch, y < h: body(b, y) */
function forImageRows(c: Code, batch: Local, h: number, body: (b: Local, y: Local) => void): void {
  forRows(c, batch, (b) => {
    const y = c.local('i32');
    c.for(y, () => c.i32(0), () => c.i32(h), () => body(b, y));
  });
}

/** Pushes m's address of pixel (b, y, x) of an image [H, W, C] (b, y, x locals; x0, y0 constants added). */
function pixel(c: Code, m: Mat, [hh, ww, cc]: number[], b: Local, y: Local, x: Local | undefined, y0 = 0, x0 = 0, ys = 1, xs = 1): void {
  c.get(m.base);
  c.get(b).i32(hh).i32Mul().get(y);
  if (ys !== 1) c.i32(ys).i32Mul();
  c.i32Add();
  if (y0) c.i32(y0).i32Add();
  c.i32(ww).i32Mul();
  if (x) {
    c.get(x);
    if (xs !== 1) c.i32(xs).i32Mul();
    c.i32Add();
  }
  c.i32(cc * 4).i32Mul().i32Add();
  const extra = m.offset + x0 * cc * 4;
  if (extra) c.i32(extra).i32Add();
}

/** xp = x with `value` around it: [B, H, W, C] into [B, H + pt + pb, W + pl + pr, C], as tf.pad does. */
export function padImage(c: Code, batch: Local, x: Mat, g: Spatial, xp: Mat, value: number): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  fillFloats(c, xp, () => c.get(batch).i32(hp * wp * g.c).i32Mul(), value);
  const src = c.local('i32');
  const dst = c.local('i32');
  forImageRows(c, batch, g.h, (b, y) => {
    pixel(c, x, [g.h, g.w, g.c], b, y, undefined);
    c.set(src);
    pixel(c, xp, [hp, wp, g.c], b, y, undefined, g.pt, g.pl);
    c.set(dst);
    copyRun(c, src, 0, dst, 0, g.w * g.c);
  });
}

/** x = the inside of xp, the padding cut off: the inverse of padImage (tf.slice). */
export function cropImage(c: Code, batch: Local, xp: Mat, g: Spatial, x: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  const src = c.local('i32');
  const dst = c.local('i32');
  forImageRows(c, batch, g.h, (b, y) => {
    pixel(c, xp, [hp, wp, g.c], b, y, undefined, g.pt, g.pl);
    c.set(src);
    pixel(c, x, [g.h, g.w, g.c], b, y, undefined);
    c.set(dst);
    copyRun(c, src, 0, dst, 0, g.w * g.c);
  });
}

/** for b < batch, i < oh, j < ow: body(b, i, j) */
function forOutputs(c: Code, batch: Local, g: Spatial, body: (b: Local, i: Local, j: Local) => void): void {
  forRows(c, batch, (b) => {
    const i = c.local('i32');
    const j = c.local('i32');
    c.for(i, () => c.i32(0), () => c.i32(g.oh), () => c.for(j, () => c.i32(0), () => c.i32(g.ow), () => body(b, i, j)));
  });
}

/** wt [kh*kw, F, C] = the member's kernel [kh*kw, C, F] with its last two axes swapped: rows of C to scatter with. */
export function transposeKernel(c: Code, w: ParamMat, cells: number, channels: number, wt: Mat): void {
  const f = w.width;
  const pq = c.local('i32');
  const ch = c.local('i32');
  const src = c.local('i32');
  const dst = c.local('i32');
  c.for(pq, () => c.i32(0), () => c.i32(cells), () => {
    c.for(ch, () => c.i32(0), () => c.i32(channels), () => {
      // src = the kernel's row pq*C + ch; dst = wt + (pq*F*C + ch) floats
      c.get(w.base).get(pq).i32(channels).i32Mul().get(ch).i32Add().get(w.rowStride).i32Mul().i32Add().set(src);
      c.get(wt.base).get(pq).i32(f * channels).i32Mul().get(ch).i32Add().i32(4).i32Mul().i32Add().set(dst);
      for (let o = 0; o < f; o++) c.get(dst).get(src).loadF32(o * 4).storeF32(wt.offset + o * channels * 4);
    });
  });
}

/**
 * dxs [B, Hp, Wp, C] (padded; zeroed here) = each output's dz [F] times the kernel, scattered onto the
 * window it came from, output after output in (b, i, j) order: each element gets its terms in the op path's
 * order (the outputs whose windows hold it, in order, then the filters, in order).
 */
export function convGradInput(c: Code, batch: Local, dz: Mat, wt: Mat, g: Spatial, filters: number, dxs: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  fillFloats(c, dxs, () => c.get(batch).i32(hp * wp * g.c).i32Mul(), 0);
  const dzRow = c.local('i32');
  const corner = c.local('i32');
  const cache = filters <= 64;
  const d1 = cache ? Array.from({ length: filters }, () => c.local('f32')) : [];
  const d4 = cache ? Array.from({ length: filters }, () => c.local('v128')) : [];
  const groups = groupsOf(g.c).map(([first, width]) => accumulators(c, first, width));
  const fl = c.local('i32');
  const t1 = c.local('f32');
  const t4 = c.local('v128');
  address(c, dz.base, dz.offset);
  c.set(dzRow);
  forOutputs(c, batch, g, (b, i, j) => {
    pixel(c, dxs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(corner);
    for (let o = 0; o < filters && cache; o++) c.get(dzRow).loadF32(o * 4).tee(d1[o]).f32x4Splat().set(d4[o]);
    for (let p = 0; p < g.kh; p++) {
      for (let q = 0; q < g.kw; q++) {
        const at = (p * wp + q) * g.c * 4;
        const wBase = (p * g.kw + q) * filters * g.c * 4;
        for (const accs of groups) {
          for (const a of accs) {
            c.get(corner);
            a.lanes.load(at + a.col);
            c.set(a.acc);
          }
          const term = (o: number | undefined) => {
            for (const a of accs) {
              c.get(a.acc);
              if (o !== undefined) c.get(a.lanes.width === 4 ? d4[o] : d1[o]);
              else c.get(a.lanes.width === 4 ? t4 : t1);
              c.get(wt.base);
              if (o === undefined) c.get(fl).i32(g.c * 4).i32Mul().i32Add();
              a.lanes.load(wt.offset + wBase + (o ?? 0) * g.c * 4 + a.col);
              a.lanes.mul();
              a.lanes.add();
              c.set(a.acc);
            }
          };
          if (cache) for (let o = 0; o < filters; o++) term(o);
          else {
            c.for(fl, () => c.i32(0), () => c.i32(filters), () => {
              c.get(dzRow).get(fl).i32(4).i32Mul().i32Add().loadF32().tee(t1).f32x4Splat().set(t4);
              term(undefined);
            });
          }
          for (const a of accs) {
            c.get(corner).get(a.acc);
            a.lanes.store(at + a.col);
          }
        }
      }
    }
    c.get(dzRow).i32(filters * 4).i32Add().set(dzRow);
  });
}

/** y [B, oh, ow, C] = the maximum of each window of xs [B, Hp, Wp, C] (padded with -Infinity), the channels as vectors. */
export function maxPoolForward(c: Code, batch: Local, xs: Mat, g: Spatial, y: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  const corner = c.local('i32');
  const out = c.local('i32');
  const [m, tmp] = [c.local('v128'), c.local('v128')];
  address(c, y.base, y.offset);
  c.set(out);
  forOutputs(c, batch, g, (b, i, j) => {
    pixel(c, xs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(corner);
    for (const vec of vectorsOf(g.c)) {
      for (let p = 0; p < g.kh; p++) {
        for (let q = 0; q < g.kw; q++) {
          // m = max(m, the next input), in the window's row-major order
          if (p + q > 0) c.get(m);
          loadVec(c, corner, (p * wp + q) * g.c * 4 + vec.col * 4, vec, tmp);
          if (p + q > 0) c.f32x4Max();
          c.set(m);
        }
      }
      storeVec(c, out, vec.col * 4, vec, m);
    }
    c.get(out).i32(g.c * 4).i32Add().set(out);
  });
}

/**
 * dxs [B, Hp, Wp, C] (zeroed here) += each window's dy at the first maximum of its window in xs (row-major,
 * strictly greater), window after window: netc's MaxPoolGrad. (With 'same' padding a window whose inputs
 * are all -Infinity gives its gradient to the padding, where the op path gives it to the first input.)
 * The channels go as vectors, each lane finding its own maximum's slot; every slot of the window then gets
 * dy where it is the lane's maximum and +0 elsewhere (x + 0 is x: dx starts at +0, so it is never -0).
 */
export function maxPoolGrad(c: Code, batch: Local, xs: Mat, dy: Mat, g: Spatial, dxs: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  fillFloats(c, dxs, () => c.get(batch).i32(hp * wp * g.c).i32Mul(), 0);
  const corner = c.local('i32');
  const dxCorner = c.local('i32');
  const dyAt = c.local('i32');
  const [best, v, mask, at, d, tmp] = Array.from({ length: 6 }, () => c.local('v128'));
  const slot = (s: number) => c.hoisted(`i32x4:${s}`, 'v128', () => c.i32(s).i32x4Splat());
  const slots: number[] = [];
  for (let p = 0; p < g.kh; p++) for (let q = 0; q < g.kw; q++) slots.push((p * wp + q) * g.c * 4);
  address(c, dy.base, dy.offset);
  c.set(dyAt);
  forOutputs(c, batch, g, (b, i, j) => {
    pixel(c, xs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(corner);
    pixel(c, dxs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(dxCorner);
    for (const vec of vectorsOf(g.c)) {
      const col = vec.col * 4;
      loadVec(c, corner, slots[0] + col, vec, tmp);
      c.set(best);
      c.get(slot(0)).set(at);
      slots.forEach((off, s) => {
        if (s === 0) return;
        loadVec(c, corner, off + col, vec, tmp);
        c.tee(v).get(best).f32x4Gt().set(mask);
        c.get(v).get(best).get(mask).v128Bitselect().set(best);
        c.get(slot(s)).get(at).get(mask).v128Bitselect().set(at);
      });
      loadVec(c, dyAt, col, vec, tmp);
      c.set(d);
      slots.forEach((off, s) => {
        loadVec(c, dxCorner, off + col, vec, tmp);
        c.get(d).get(at).get(slot(s)).i32x4Eq().v128And().f32x4Add().set(v);
        storeVec(c, dxCorner, off + col, vec, v);
      });
    }
    c.get(dyAt).i32(g.c * 4).i32Add().set(dyAt);
  });
}

/** The window's slots, column after column (as XNNPACK's indirection takes a pooling window). */
const slotsOf = (g: Spatial): [number, number][] => {
  const out: [number, number][] = [];
  for (let q = 0; q < g.kw; q++) for (let p = 0; p < g.kh; p++) out.push([p, q]);
  return out;
};

/**
 * y [B, oh, ow, C] = the mean of each window of xs [B, Hp, Wp, C] (padded with zeros): XNNPACK's sum of up
 * to 9 inputs as a tree, times 1 / the number of the window's inputs inside the image.
 */
export function avgPoolForward(c: Code, batch: Local, xs: Mat, g: Spatial, y: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  const slots = slotsOf(g);
  if (slots.length > 9) throw new Error('internal error: avgpool windows of more than 9 inputs have no generated code');
  const corner = c.local('i32');
  const out = c.local('i32');
  const mult1 = c.local('f32');
  const mult4 = c.local('v128');
  const padded = isPadded(g);
  // the count of a window's inputs inside the image: rows * columns
  const rowsIn = c.local('i32');
  const colsIn = c.local('i32');
  const inside = (idx: Local, stride: number, pad: number, window: number, size: number, into: Local) => {
    // min(size, idx*stride - pad + window) - max(0, idx*stride - pad)
    const lo = c.local('i32');
    const hi = c.local('i32');
    c.get(idx).i32(stride).i32Mul().i32(-pad).i32Add().set(lo);
    c.get(lo).i32(window).i32Add().set(hi);
    c.get(hi).i32(size).get(hi).i32(size).i32LtS().select();
    c.get(lo).i32(0).get(lo).i32(0).i32GtS().select();
    c.i32Sub().set(into);
  };
  address(c, y.base, y.offset);
  c.set(out);
  if (!padded) {
    c.f32(1 / (g.kh * g.kw)).tee(mult1).f32x4Splat().set(mult4);
  }
  forOutputs(c, batch, g, (b, i, j) => {
    pixel(c, xs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(corner);
    if (padded) {
      inside(i, g.sh, g.pt, g.kh, g.h, rowsIn);
      inside(j, g.sw, g.pl, g.kw, g.w, colsIn);
      c.f32(1).get(rowsIn).get(colsIn).i32Mul().f32ConvertI32S().f32Div().tee(mult1).f32x4Splat().set(mult4);
    }
    columns(c, g.c, (v, col) => {
      // the 9 slots, missing ones zero: x + 0 is x, so a missing slot adds nothing
      const val: (Local | undefined)[] = Array.from({ length: 9 }, (_, s) => {
        if (s >= slots.length) return undefined;
        const [p, q] = slots[s];
        const l = v.floatLocal();
        c.get(corner);
        v.load((p * wp + q) * g.c * 4 + col);
        c.set(l);
        return l;
      });
      const add = (a: Local | undefined, b2: Local | undefined): Local | undefined => {
        if (!a) return b2;
        if (!b2) return a;
        const l = v.floatLocal();
        c.get(a).get(b2);
        v.add();
        c.set(l);
        return l;
      };
      const s01 = add(val[0], val[1]);
      const s23 = add(val[2], val[3]);
      const s45 = add(val[4], val[5]);
      const s67 = add(val[6], val[7]);
      const s018 = add(s01, val[8]);
      const s2345 = add(s23, s45);
      const s01678 = add(s018, s67);
      const sum = add(s2345, s01678)!;
      c.get(out).get(sum).get(v.width === 4 ? mult4 : mult1);
      v.mul();
      v.store(col);
    });
    c.get(out).i32(g.c * 4).i32Add().set(out);
  });
}

/**
 * dxs [B, Hp, Wp, C] (zeroed here) += dy * (1 / (kh*kw)) over each window, window after window: TF.js's
 * AvgPoolGrad, whose multiplier is the whole window's even where 'same' padding cuts a window short.
 */
export function avgPoolGrad(c: Code, batch: Local, dy: Mat, g: Spatial, dxs: Mat): void {
  const [hp, wp] = [paddedHeight(g), paddedWidth(g)];
  fillFloats(c, dxs, () => c.get(batch).i32(hp * wp * g.c).i32Mul(), 0);
  const corner = c.local('i32');
  const dyAt = c.local('i32');
  const mult = Math.fround(1 / (Math.fround(g.kh) * Math.fround(g.kw)));
  address(c, dy.base, dy.offset);
  c.set(dyAt);
  forOutputs(c, batch, g, (b, i, j) => {
    pixel(c, dxs, [hp, wp, g.c], b, i, j, 0, 0, g.sh, g.sw);
    c.set(corner);
    columns(c, g.c, (v, col) => {
      const d = v.floatLocal();
      c.get(dyAt);
      v.load(col);
      v.const(mult);
      v.mul();
      c.set(d);
      for (let p = 0; p < g.kh; p++) {
        for (let q = 0; q < g.kw; q++) {
          const at = (p * wp + q) * g.c * 4 + col;
          c.get(corner).get(corner);
          v.load(at);
          c.get(d);
          v.add();
          v.store(at);
        }
      }
    });
    c.get(dyAt).i32(g.c * 4).i32Add().set(dyAt);
  });
}
