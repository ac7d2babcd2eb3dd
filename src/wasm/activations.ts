// The activation functions and their derivatives as generated code, with TF.js's definitions (see
// src/kernels/activations.ts, the op path): elementwise over Lanes, and the softmax row by row.
import type { Code, Local } from './module.js';
import { scalarLanes as scalar, type Lanes } from './lanes.js';
import { erf, exp, sigmoid, tanh } from './math.js';
import { address, columns, forEachFloat, forRows, loadAt, rowOf, type Mat } from './blocks.js';

/** The activations the generated step computes: all of netc's. */
export const kernelActivations = new Set(['linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'elu', 'swish', 'leaky_relu', 'gelu']);

const SQRT1_2 = Math.fround(Math.SQRT1_2);
const TWO_OVER_SQRT_PI = Math.fround(2 / Math.sqrt(Math.PI));

/** gelu's parts as the op path computes them: h = z * 0.5, u = z * sqrt(1/2), b = 1 + erf(u); gelu = h * b. */
function geluParts(v: Lanes, z: Local): { h: Local; u: Local; b: Local } {
  const c = v.code;
  const [h, u, b] = [v.floatLocal(), v.floatLocal(), v.floatLocal()];
  c.get(z);
  v.const(0.5);
  v.mul();
  c.set(h);
  c.get(z);
  v.const(SQRT1_2);
  v.mul();
  c.set(u);
  v.const(1);
  erf(v, u);
  v.add();
  c.set(b);
  return { h, u, b };
}

/** Elementwise activations: pushes f(z). `alpha`: leaky_relu's slope, an f32 local (splat in SIMD lanes). */
export function activation(v: Lanes, name: string, z: Local, alpha?: Local): void {
  const c = v.code;
  switch (name) {
    case 'linear':
      c.get(z);
      return;
    case 'relu':
      c.get(z);
      v.const(0);
      v.pmax();
      return;
    case 'sigmoid':
      sigmoid(v, z);
      return;
    case 'tanh':
      tanh(v, z);
      return;
    case 'elu':
      // z > 0 ? z : exp(z) - 1
      c.get(z);
      exp(v, z);
      v.const(1);
      v.sub();
      positive(v, z);
      v.select();
      return;
    case 'swish':
      c.get(z);
      sigmoid(v, z);
      v.mul();
      return;
    case 'gelu': {
      // the exact form, (z * 0.5) * (1 + erf(z * sqrt(1/2)))
      const { h, b } = geluParts(v, z);
      c.get(h);
      c.get(b);
      v.mul();
      return;
    }
    case 'leaky_relu':
      byLeakySlope(v, z, z, alpha!);
      return;
    default:
      throw new Error(`internal error: no generated code for the activation ${name}`);
  }
}

/** Pushes the mask z > 0. */
function positive(v: Lanes, z: Local): void {
  v.code.get(z);
  v.const(0);
  v.gt();
}

/** leaky_relu and its gradient: pushes t where z > 0, t * alpha elsewhere (t = z, or dy). */
function byLeakySlope(v: Lanes, t: Local, z: Local, alpha: Local): void {
  v.code.get(t);
  v.code.get(t);
  slope(v, alpha);
  v.mul();
  positive(v, z);
  v.select();
}

/** Pushes leaky_relu's slope in every lane. */
function slope(v: Lanes, alpha: Local): void {
  v.code.get(alpha);
  v.splat();
}

/** The gradient through an elementwise activation: pushes dz from z, a = f(z) and da (locals). */
export function activationGrad(v: Lanes, name: string, z: Local, a: Local, da: Local, alpha?: Local): void {
  const c = v.code;
  switch (name) {
    case 'linear':
      c.get(da);
      return;
    case 'relu':
      c.get(da);
      v.const(0);
      positive(v, z);
      v.select();
      return;
    case 'sigmoid':
      // dy * y * (1 - y)
      c.get(da);
      c.get(a);
      v.const(1);
      c.get(a);
      v.sub();
      v.mul();
      v.mul();
      return;
    case 'tanh':
      // dy * (1 - y^2)
      c.get(da);
      v.const(1);
      c.get(a);
      c.get(a);
      v.mul();
      v.sub();
      v.mul();
      return;
    case 'elu':
      // z > 0 ? dy : dy * (y + 1)
      c.get(da);
      c.get(da);
      c.get(a);
      v.const(1);
      v.add();
      v.mul();
      positive(v, z);
      v.select();
      return;
    case 'swish': {
      // autodiff of z s(z): dy s + (dy z) (s (1 - s))
      const s = v.floatLocal();
      sigmoid(v, z);
      c.set(s);
      c.get(da);
      c.get(s);
      v.mul();
      c.get(da);
      c.get(z);
      v.mul();
      c.get(s);
      v.const(1);
      c.get(s);
      v.sub();
      v.mul();
      v.mul();
      v.add();
      return;
    }
    case 'gelu': {
      // autodiff of h * b: (dy b) 0.5 + ((dy h) (2/sqrt(pi) exp(-u^2))) sqrt(1/2)
      const { h, u, b } = geluParts(v, z);
      const nu2 = v.floatLocal();
      c.get(u);
      c.get(u);
      v.mul();
      v.neg();
      c.set(nu2);
      c.get(da);
      c.get(b);
      v.mul();
      v.const(0.5);
      v.mul();
      c.get(da);
      c.get(h);
      v.mul();
      v.const(TWO_OVER_SQRT_PI);
      exp(v, nu2, { nonPositive: true });
      v.mul();
      v.mul();
      v.const(SQRT1_2);
      v.mul();
      v.add();
      return;
    }
    case 'leaky_relu':
      byLeakySlope(v, da, z, alpha!);
      return;
    default:
      throw new Error(`internal error: no generated gradient for the activation ${name}`);
  }
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
