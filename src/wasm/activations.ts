// The activation functions and their derivatives as generated code: src/math/activations.ts's rules
// rendered elementwise over Lanes (src/wasm/render.ts), and the softmax row by row.
import type { Code, Local } from './module.js';
import { scalarLanes as scalar, type Lanes } from './lanes.js';
import { exp } from './math.js';
import { emitRule, type Binding } from './render.js';
import { elementwiseOrThrow } from '../math/activations.js';
import { address, columns, forEachFloat, forRows, loadAt, rowOf, type Mat } from './blocks.js';
import { rowColumns } from './sequence.js';

/** leaky_relu's slope in every lane, from an f32 local. */
const slope = (v: Lanes, alpha?: Local): Record<string, Binding> => (alpha ? { alpha: () => (v.code.get(alpha), v.splat()) } : {});

/** Elementwise activations: pushes f(z). `alpha`: leaky_relu's slope, an f32 local (splat in SIMD lanes). */
export function activation(v: Lanes, name: string, z: Local, alpha?: Local): void {
  emitRule(v, elementwiseOrThrow(name, 'generated code').forward, { inputs: { z, ...slope(v, alpha) } });
}

/** The gradient through an elementwise activation: pushes dz from z, a = f(z) and da (locals). */
export function activationGrad(v: Lanes, name: string, z: Local, a: Local, da: Local, alpha?: Local): void {
  emitRule(v, elementwiseOrThrow(name, 'generated code').grad, { inputs: { z, a, da, ...slope(v, alpha) } });
}

/** a[b, :] = softmax(z[b, :]): exp(z - max) times 1 / their sum, row by row (scalar: rows are short). */
export function softmaxRows(c: Code, batch: Local, z: Mat, a: Mat): void {
  const zRow = c.local('i32');
  const aRow = c.local('i32');
  const max = c.local('f32');
  const sum = c.local('f32');
  const t = c.local('f32');
  const lanes = scalar(c);
  forRows(c, batch, (b) => {
    rowOf(c, z, b);
    c.set(zRow);
    rowOf(c, a, b);
    c.set(aRow);
    c.get(zRow).loadF32().set(max);
    for (let k = 1; k < z.width; k++) c.get(max).get(zRow).loadF32(k * 4).f32Max().set(max);
    c.f32(0).set(sum);
    for (let k = 0; k < z.width; k++) {
      c.get(zRow).loadF32(k * 4).get(max).f32Sub().set(t);
      c.get(aRow);
      exp(lanes, t, { nonPositive: true });
      c.tee(t).storeF32(k * 4);
      c.get(sum).get(t).f32Add().set(sum);
    }
    // times 1 / sum, as TF.js's softmax (XNNPACK) scales
    c.f32(1).get(sum).f32Div().set(sum);
    for (let k = 0; k < z.width; k++) c.get(aRow).get(aRow).loadF32(k * 4).get(sum).f32Mul().storeF32(k * 4);
  });
}

/**
 * softmaxRows' values for long rows (attention's, T wide), its exps four at a time: an element's exp is the
 * same bits in a vector's lane as alone (lanes.ts), the maximum and the sum still taken one float at a time in
 * order, and the loops run-time ones where softmaxRows unrolls a row.
 */
export function softmaxRowsWide(c: Code, rows: Local, z: Mat, a: Mat): void {
  const [zRow, aRow, k] = [c.local('i32'), c.local('i32'), c.local('i32')];
  const [max, sum] = [c.local('f32'), c.local('f32')];
  const [maxes, sums] = [c.local('v128'), c.local('v128')];
  const overRow = (body: () => void) => c.for(k, () => c.i32(0), () => c.i32(z.width * 4), body, 4);
  forRows(c, rows, (b) => {
    rowOf(c, z, b);
    c.set(zRow);
    rowOf(c, a, b);
    c.set(aRow);
    c.get(zRow).loadF32().set(max);
    overRow(() => void c.get(max).get(zRow).get(k).i32Add().loadF32().f32Max().set(max));
    c.get(max).f32x4Splat().set(maxes);
    rowColumns(c, z.width, (v, off, col) => {
      const t = v.floatLocal();
      c.get(zRow);
      if (off) c.get(off).i32Add();
      v.load(col);
      c.get(v.width === 4 ? maxes : max);
      v.sub();
      c.set(t);
      c.get(aRow);
      if (off) c.get(off).i32Add();
      exp(v, t, { nonPositive: true });
      v.store(col);
    });
    c.f32(0).set(sum);
    overRow(() => void c.get(sum).get(aRow).get(k).i32Add().loadF32().f32Add().set(sum));
    // times 1 / sum, as softmaxRows
    c.f32(1).get(sum).f32Div().tee(sum).f32x4Splat().set(sums);
    rowColumns(c, z.width, (v, off, col) => {
      c.get(aRow);
      if (off) c.get(off).i32Add();
      c.get(aRow);
      if (off) c.get(off).i32Add();
      v.load(col);
      c.get(v.width === 4 ? sums : sum);
      v.mul();
      v.store(col);
    });
  });
}

/** dz[b, :] = da a - sum(da a) a, softmax's gradient as TF.js computes it, row by row. */
export function softmaxGradRows(c: Code, batch: Local, a: Mat, da: Mat, dz: Mat): void {
  const dot = c.local('f32');
  const aRow = c.local('i32');
  const daRow = c.local('i32');
  const dzRow = c.local('i32');
  const row = (m: Mat, b: Local, into: Local) => (rowOf(c, m, b), c.set(into));
  forRows(c, batch, (b) => {
    row(a, b, aRow);
    row(da, b, daRow);
    row(dz, b, dzRow);
    c.f32(0).set(dot);
    for (let k = 0; k < a.width; k++) c.get(dot).get(daRow).loadF32(k * 4).get(aRow).loadF32(k * 4).f32Mul().f32Add().set(dot);
    // TF.js's rule: dy y - sum(dy y) y
    columns(c, a.width, (v, col) => {
      c.get(dzRow);
      c.get(daRow);
      v.load(col);
      c.get(aRow);
      v.load(col);
      v.mul();
      c.get(dot);
      v.splat();
      c.get(aRow);
      v.load(col);
      v.mul();
      v.sub();
      v.store(col);
    });
  });
}

/** a = f(z) over [B, width] (softmax row by row). */
export function applyActivation(c: Code, name: string, batch: Local, z: Mat, a: Mat, alpha?: Local): void {
  if (name === 'softmax') return softmaxRows(c, batch, z, a);
  forEachFloat(
    c,
    () => c.get(batch).i32(z.width).i32Mul(),
    (v, off) => {
      const x = v.floatLocal();
      loadAt(v, z, off);
      c.set(x);
      address(c, a.base, a.offset, off);
      activation(v, name, x, alpha);
      v.store();
    },
  );
}

/** dz = da f'(z) over [B, width], from z, a = f(z) and da; dz may be da itself. */
export function applyActivationGrad(c: Code, name: string, batch: Local, z: Mat, a: Mat, da: Mat, dz: Mat, alpha?: Local): void {
  if (name === 'softmax') return softmaxGradRows(c, batch, a, da, dz);
  forEachFloat(
    c,
    () => c.get(batch).i32(z.width).i32Mul(),
    (v, off) => {
      const [x, y, d] = [v.floatLocal(), v.floatLocal(), v.floatLocal()];
      loadAt(v, z, off);
      c.set(x);
      loadAt(v, a, off);
      c.set(y);
      loadAt(v, da, off);
      c.set(d);
      address(c, dz.base, dz.offset, off);
      activationGrad(v, name, x, y, d, alpha);
      v.store();
    },
  );
}
