// The generated kernels' exp, log, tanh, sigmoid and erf (src/wasm/math.ts) against double precision, in
// SIMD lanes and in the scalar tail alike: within 2 ulp of the float32 rounding of the exact value across
// the float32 range (random bit patterns and dense sweeps of the ranges training uses), Infinity on
// overflow, 0 on underflow, NaN for NaN.
import { describe, expect, it } from 'vitest';
import { ModuleBuilder, type Local } from '../src/wasm/module.js';
import { scalarLanes, simdLanes, type Lanes } from '../src/wasm/lanes.js';
import * as M from '../src/wasm/math.js';

type Fn = (v: Lanes, x: Local) => void;

/** A module whose run(src, dst, n) applies fn to n floats: a SIMD loop, then the scalar tail. */
function compileApply(fn: Fn): { run: (n: number) => void; input: Float32Array; output: Float32Array } {
  const mb = new ModuleBuilder();
  mb.func(['i32', 'i32', 'i32'], [], (c) => {
    const [src, dst, n] = [c.param(0), c.param(1), c.param(2)];
    const i = c.local('i32');
    const pass = (v: Lanes, from: () => void, to: () => void) => {
      const x = v.floatLocal();
      c.for(i, from, to, () => {
        c.get(dst).get(i).i32(2).i32Shl().i32Add();
        c.get(src).get(i).i32(2).i32Shl().i32Add();
        v.load();
        c.set(x);
        fn(v, x);
        v.store();
      }, v.width);
    };
    pass(simdLanes(c), () => c.i32(0), () => c.get(n).i32(-4).i32And());
    pass(scalarLanes(c), () => c.get(n).i32(-4).i32And(), () => c.get(n));
  }, 'run');
  const bytes = mb.bytes();
  expect(WebAssembly.validate(bytes)).toBe(true);
  const memory = new WebAssembly.Memory({ initial: 128 });
  const run = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } }).exports.run as (s: number, d: number, n: number) => void;
  const size = 1 << 20;
  return { run: (n) => run(0, size * 4, n), input: new Float32Array(memory.buffer, 0, size), output: new Float32Array(memory.buffer, size * 4, size) };
}

const bits = new Float32Array(1);
const asInt = new Int32Array(bits.buffer);
/** floats as integers in their order: the distance between two is their distance in ulps */
function ordinal(x: number): number {
  bits[0] = x;
  return asInt[0] < 0 ? -(asInt[0] & 0x7fffffff) : asInt[0];
}

/** ulps between a float32 result and the float32 rounding of the exact value (Infinity where one is NaN alone) */
function ulps(actual: number, exact: number): number {
  const want = Math.fround(exact);
  if (Number.isNaN(want) || Number.isNaN(actual)) return Number.isNaN(want) && Number.isNaN(actual) ? 0 : Infinity;
  if (want === actual) return 0;
  if (!Number.isFinite(want) || !Number.isFinite(actual)) return Infinity;
  return Math.abs(ordinal(actual) - ordinal(want));
}

function worstOver(fn: Fn, exact: (x: number) => number, fill: (input: Float32Array) => number): { worst: number; at: number } {
  const k = compileApply(fn);
  const n = fill(k.input);
  k.run(n);
  let worst = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const d = ulps(k.output[i], exact(k.input[i]));
    if (d > worst) [worst, at] = [d, k.input[i]];
  }
  return { worst, at };
}

const randomBits = (seed: number) => (input: Float32Array) => {
  const u = new Uint32Array(input.buffer, input.byteOffset, input.length);
  let s = seed >>> 0;
  for (let i = 0; i < u.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    u[i] = s ^ (s >>> 13);
  }
  return input.length - 3; // not a multiple of 4: the scalar tail runs too
};
const sweep = (lo: number, hi: number) => (input: Float32Array) => {
  for (let i = 0; i < input.length; i++) input[i] = lo + ((hi - lo) * i) / (input.length - 1);
  return input.length - 1;
};

const exactSigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** erf in double precision: its Taylor series below 2, 1 - erfc by erfc's continued fraction above (both to ~1e-15). */
function exactErf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a < 2) {
    let sum = 0;
    let term = a;
    for (let n = 0; n < 60; n++) {
      sum += term / (2 * n + 1);
      term *= (-a * a) / (n + 1);
    }
    return Math.sign(x) * ((2 / Math.sqrt(Math.PI)) * sum);
  }
  if (a > 10) return Math.sign(x);
  let f = a;
  for (let k = 400; k >= 1; k--) f = a + k / 2 / f;
  return Math.sign(x) * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / f);
}
const cases: [string, Fn, (x: number) => number, [number, number][]][] = [
  ['exp', M.exp, Math.exp, [[-104, 89], [-2, 2]]],
  ['log', M.log, Math.log, [[0, 4], [1e-6, 1e-3], [0.5, 2]]],
  ['tanh', M.tanh, Math.tanh, [[-10, 10], [-1, 1], [0.55, 0.7]]],
  ['sigmoid', M.sigmoid, exactSigmoid, [[-110, 90], [-8, 8]]],
  ['erf', M.erf, exactErf, [[-5, 5], [-1.2, 1.2], [0.7, 0.8], [3.5, 4.5], [-1e-3, 1e-3]]],
];

describe('generated SIMD math', () => {
  for (const [name, fn, exact, ranges] of cases) {
    it(`${name} is within 2 ulp of double precision over random float32 bit patterns`, () => {
      const { worst, at } = worstOver(fn, exact, randomBits(name.length));
      expect(worst, `worst at ${at}`).toBeLessThanOrEqual(2);
    });
    it(`${name} is within 2 ulp over dense sweeps of ${ranges.map((r) => `[${r}]`).join(', ')}`, () => {
      for (const [lo, hi] of ranges) {
        const { worst, at } = worstOver(fn, exact, sweep(lo, hi));
        expect(worst, `worst at ${at}`).toBeLessThanOrEqual(2);
      }
    });
  }

  it('keeps the special values: overflow to Infinity, underflow to 0, NaN to NaN', () => {
    const special = [Infinity, -Infinity, NaN, 0, -0, 1e-45, 1e-40, 88.72, 89, 100, -88, -104, -200, 3.4e38, -3.4e38];
    const expectations: [Fn, (x: number) => number][] = [[M.exp, Math.exp], [M.log, Math.log], [M.tanh, Math.tanh], [M.sigmoid, exactSigmoid], [M.erf, exactErf]];
    for (const [fn, exact] of expectations) {
      const { worst, at } = worstOver(fn, exact, (input) => (input.set(special), special.length));
      expect(worst, `worst at ${at}`).toBeLessThanOrEqual(2);
    }
  });
});
