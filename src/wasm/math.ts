// exp, log, tanh, erf and the sigmoid as instruction sequences over Lanes: range reduction and a
// polynomial, with plain multiplies and adds only (SIMD128 has no deterministic fused multiply-add). The
// coefficients are the classic single-precision minimax fits (Cephes' expf, logf, tanhf, erff); each
// function is tested against a double-precision reference across the float32 range (test/wasm-math.test.ts):
// within 2 ulp, overflow to Infinity, underflow to 0, NaN in -> NaN out.
import type { Code, Local } from './module.js';
import type { Lanes } from './lanes.js';

/** p(x) by Horner's rule, highest coefficient first: [x] is a local, pushes the value. */
function horner(v: Lanes, x: Local, coefficients: number[]): void {
  v.const(coefficients[0]);
  for (const c of coefficients.slice(1)) {
    v.code.get(x);
    v.mul();
    v.const(c);
    v.add();
  }
}

/**
 * p(x) by Estrin's scheme, highest coefficient first; [x] and [x2] = x * x are locals, pushes the value.
 * Pairs a + b x, then pairs of those with x^2, x^4, ...: the chain of dependent operations grows with
 * log2 of the degree where Horner's grows with the degree, and a kernel of many exps waits on that chain.
 */
function estrin(v: Lanes, x: Local, x2: Local, coefficients: number[]): void {
  const c = v.code;
  const low = [...coefficients].reverse();
  let terms: (() => void)[] = [];
  for (let i = 0; i < low.length; i += 2) {
    const [a, b] = [low[i], low[i + 1]];
    terms.push(b === undefined ? () => v.const(a) : () => (v.const(b), c.get(x), v.mul(), v.const(a), v.add()));
  }
  let power = x2;
  while (terms.length > 1) {
    const p = power;
    const next: (() => void)[] = [];
    for (let i = 0; i < terms.length; i += 2) {
      const [lo, hi] = [terms[i], terms[i + 1]];
      next.push(hi === undefined ? lo : () => (hi(), c.get(p), v.mul(), lo(), v.add()));
    }
    terms = next;
    if (terms.length > 1) power = keep(v, () => (c.get(p), c.get(p), v.mul()));
  }
  terms[0]();
}

/** Pushes the value of `emit` into a new local and returns it. */
function keep(v: Lanes, emit: () => void): Local {
  const l = v.floatLocal();
  emit();
  v.code.set(l);
  return l;
}

const LOG2E = 1.44269504088896341;
const LN2_HI = 0.693359375;
const LN2_LO = -2.12194440e-4;
/** 1.5 * 2^23: adding it rounds a float below 2^22 in magnitude to an integer, kept in the low mantissa bits */
const ROUNDER = 12582912;
const ROUNDER_BITS = 0x4b400000;
const EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1];

/** 2^k for an int k in [-126, 127] (its float bits: (k + 127) << 23); [k] -> value */
function pow2(v: Lanes): void {
  v.intConst(127);
  v.intAdd();
  v.intShl(23);
  v.fromBits();
}

/** How exp's code is written: the same accuracy (within 2 ulp) either way. */
export interface ExpForm {
  /**
   * P by Estrin's scheme (see estrin), as the sigmoid uses it: other roundings than Horner's rule, which
   * tanh, elu and the losses keep (their op-path tests were measured with it)
   */
  shortChain?: boolean;
  /**
   * x is never above 0 (-|z|, -z^2, z - max(z)) or is NaN: no clamp at the overflow end, and 2^n is applied as
   * one exact power and one constant (see scaleNonPositive), the same bits as the general form's two steps
   */
  nonPositive?: boolean;
}

/** exp(x), x a local; pushes the value. */
export function exp(v: Lanes, x: Local, form: ExpForm = {}): void {
  const c = v.code;
  // beyond these exp is Infinity and 0 in float32; NaN passes the clamp as NaN
  const xc = keep(v, () => {
    c.get(x);
    if (!form.nonPositive) {
      v.const(88.8);
      v.pmin();
    }
    v.const(-104);
    v.pmax();
  });
  // n = round(x log2e), ties to even, by adding and taking away 1.5 * 2^23: the sum's low bits are n itself
  const t = keep(v, () => {
    c.get(xc);
    v.const(LOG2E);
    v.mul();
    v.const(ROUNDER);
    v.add();
  });
  const n = keep(v, () => {
    c.get(t);
    v.const(ROUNDER);
    v.sub();
  });
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 in two parts so that n ln2 is exact enough
  const r = keep(v, () => {
    c.get(xc);
    c.get(n);
    v.const(LN2_HI);
    v.mul();
    v.sub();
    c.get(n);
    v.const(LN2_LO);
    v.mul();
    v.sub();
  });
  // 1 + r + r^2 P(r)
  const p = keep(v, () => {
    if (form.shortChain) {
      const r2 = keep(v, () => (c.get(r), c.get(r), v.mul()));
      estrin(v, r, r2, EXP_P);
      c.get(r2);
      v.mul();
      c.get(r);
      v.const(1);
      v.add();
      v.add();
      return;
    }
    horner(v, r, EXP_P);
    c.get(r);
    v.mul();
    c.get(r);
    v.mul();
    c.get(r);
    v.add();
    v.const(1);
    v.add();
  });
  if (form.nonPositive) return scaleNonPositive(v, p, t);
  // times 2^n as 2^n1 2^n2 with n1 = n >> 1 and n2 = n - n1: each in the normal range for n in [-150, 128]
  const k = v.intLocal();
  const k1 = v.intLocal();
  c.get(t);
  v.bits();
  v.intConst(ROUNDER_BITS);
  v.intSub();
  c.set(k);
  c.get(k);
  v.intShrS(1);
  c.set(k1);
  c.get(p);
  c.get(k1);
  pow2(v);
  v.mul();
  c.get(k);
  c.get(k1);
  v.intSub();
  pow2(v);
  v.mul();
}

/** 2^24 below 2^-126: n + 24 is a normal float's exponent for every n in [-150, 0] */
const SUBNORMAL_SPAN = 24;

/**
 * Pushes p 2^n for n in [-150, 0] (t's low bits, as exp's rounding left them; p in [0.70, 1.42]): p 2^(n + 24),
 * then times the constant 2^-24, which rounds into the subnormals as the two-step scale's second multiply
 * does: the same bits in four operations instead of nine. The first product is exact but for n = -150 with
 * p < 1, where it rounds to a grid 2^24 times finer than the result's; the result is then 0 or 2^-149, and
 * its one tie (a first product of exactly 2^-126, 2^-150 after the second) goes to 0 both ways.
 */
function scaleNonPositive(v: Lanes, p: Local, t: Local): void {
  const c = v.code;
  c.get(p);
  // (n + 127 + 24) << 23, n = t's bits less the rounder's
  c.get(t);
  v.bits();
  v.intConst(127 + SUBNORMAL_SPAN - ROUNDER_BITS);
  v.intAdd();
  v.intShl(23);
  v.fromBits();
  v.mul();
  v.const(2 ** -SUBNORMAL_SPAN);
  v.mul();
}

const SQRTHF = 0.707106781186547524;
const LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1];

/**
 * log(x), x a local; pushes the value (0 -> -Infinity, negative -> NaN, Infinity -> Infinity). `clipped`: x is a
 * clipped probability, in [1e-7, 1 - 1e-7], or NaN: neither subnormal, 0, negative nor infinite, so those cases'
 * code is left out (it would leave every such x's value as it is: the same bits).
 */
export function log(v: Lanes, x: Local, clipped = false): void {
  const c = v.code;
  // subnormal inputs are scaled into the normal range first (a clipped probability is never subnormal)
  let tiny: Local | undefined;
  let xs = x;
  if (!clipped) {
    const mask = v.maskLocal();
    c.get(x);
    v.const(1.17549435e-38);
    v.lt();
    c.set(mask);
    xs = keep(v, () => {
      c.get(x);
      v.const(8388608);
      v.mul();
      c.get(x);
      c.get(mask);
      v.select();
    });
    tiny = mask;
  }
  // x = m 2^e with m in [0.5, 1)
  const bits = v.intLocal();
  c.get(xs);
  v.bits();
  c.set(bits);
  const e = keep(v, () => {
    c.get(bits);
    v.intShrS(23);
    v.intConst(0xff);
    v.intAnd();
    v.intConst(126);
    v.intSub();
    v.toFloat();
    if (tiny) {
      v.const(-23);
      v.const(0);
      c.get(tiny);
      v.select();
      v.add();
    }
  });
  const m0 = keep(v, () => {
    c.get(bits);
    v.intConst(0x007fffff);
    v.intAnd();
    v.intConst(0x3f000000);
    v.intOr();
    v.fromBits();
  });
  // m < sqrt(1/2): use 2m - 1 and e - 1, else m - 1: the argument lies in [sqrt(1/2) - 1, sqrt(2) - 1)
  const small = v.maskLocal();
  c.get(m0);
  v.const(SQRTHF);
  v.lt();
  c.set(small);
  const m = keep(v, () => {
    c.get(m0);
    c.get(m0);
    v.add();
    v.const(1);
    v.sub();
    c.get(m0);
    v.const(1);
    v.sub();
    c.get(small);
    v.select();
  });
  const ex = keep(v, () => {
    c.get(e);
    v.const(1);
    v.sub();
    c.get(e);
    c.get(small);
    v.select();
  });
  const z = keep(v, () => {
    c.get(m);
    c.get(m);
    v.mul();
  });
  // y = m z P(m) + LN2_LO e - z / 2; log = m + y + LN2_HI e
  const y = keep(v, () => {
    horner(v, m, LOG_P);
    c.get(m);
    v.mul();
    c.get(z);
    v.mul();
    c.get(ex);
    v.const(LN2_LO);
    v.mul();
    v.add();
    c.get(z);
    v.const(0.5);
    v.mul();
    v.sub();
  });
  const result = keep(v, () => {
    c.get(m);
    c.get(y);
    v.add();
    c.get(ex);
    v.const(LN2_HI);
    v.mul();
    v.add();
  });
  // the special cases: x = Infinity -> Infinity; x = 0 -> -Infinity; x < 0 -> NaN (NaN stays NaN)
  const special = (value: number, test: () => void) => {
    v.const(value);
    c.get(result);
    c.get(x);
    test();
    v.select();
    c.set(result);
  };
  if (!clipped) {
    special(Infinity, () => (v.const(Infinity), v.eq()));
    special(-Infinity, () => (v.const(0), v.eq()));
    special(NaN, () => (v.const(0), v.lt()));
  }
  special(NaN, () => (c.get(x), v.ne()));
  c.get(result);
}

/**
 * The sigmoid 1 / (1 + exp(-x)), TF.js's definition, in the form that never overflows: with e = exp(-|x|),
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below (within 2 ulp of the exact sigmoid); pushes the value.
 */
export function sigmoid(v: Lanes, x: Local): void {
  const c = v.code;
  const negAbs = keep(v, () => {
    c.get(x);
    v.negAbs();
  });
  const e = keep(v, () => exp(v, negAbs, { shortChain: true, nonPositive: true }));
  // one division: (x >= 0 ? 1 : e) / (1 + e)
  v.const(1);
  c.get(e);
  c.get(x);
  v.const(0);
  v.ge();
  v.select();
  v.const(1);
  c.get(e);
  v.add();
  v.div();
}

const TANH_P = [-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1];

/** tanh(x): a polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) with x's sign above; pushes the value. */
export function tanh(v: Lanes, x: Local): void {
  const c = v.code;
  const a = keep(v, () => {
    c.get(x);
    v.abs();
  });
  const twice = keep(v, () => {
    c.get(a);
    c.get(a);
    v.add();
  });
  const big = keep(v, () => {
    v.const(1);
    v.const(2);
    exp(v, twice);
    v.const(1);
    v.add();
    v.div();
    v.sub();
    c.get(x);
    v.copysign();
  });
  const z = keep(v, () => {
    c.get(x);
    c.get(x);
    v.mul();
  });
  // x + x z P(z)
  horner(v, z, TANH_P);
  c.get(z);
  v.mul();
  c.get(x);
  v.mul();
  c.get(x);
  v.add();
  const near = v.floatLocal();
  c.set(near);
  c.get(big);
  c.get(near);
  c.get(a);
  v.const(0.625);
  v.ge();
  v.select();
}

/**
 * erf's Taylor series below |x| = 0.75, in z = x^2 (highest first): (2/sqrt(pi)) (-1)^n / (n! (2n + 1)),
 * n = 0..11, less 1 in the constant term: erf(x) = x + x P(z), the leading x exact.
 */
const ERF_TAYLOR = [-1.22905553017e-9, 1.48071928159e-8, -1.63658446912e-7, 0.00000164621143659, -0.0000149256503584, 0.000120553329818, -0.000854832702345, 0.00522397762544, -0.0268661706451, 0.11283791671, -0.376126389032, 0.12837916709551257];
/** erfc(x) exp(x^2) on [0.75, 4] in u = (x - 2.375) / 1.625 (highest first), fitted by `scripts/fit-erfc.ts 13 0.75` (relative error 5.3e-9). */
const ERFC_SCALED = [-0.00002130307668, 0.00005905143726, -0.00007432773567, 0.0001602624449, -0.0004639076584, 0.001074473658, -0.002319044474, 0.004967255491, -0.01034515811, 0.02077586147, -0.04015752415, 0.0744259548, -0.13158783, 0.2205056931];
const ERF_SPLIT = 0.75;

/**
 * erf(x): x + x P(x^2) below |x| = 0.75; 1 - exp(-x^2) R(|x|) with x's sign from 0.75 to 4; +-1 beyond (erf rounds to
 * 1 in float32 above 3.92); pushes the value.
 */
export function erf(v: Lanes, x: Local): void {
  const c = v.code;
  const a = keep(v, () => {
    c.get(x);
    v.abs();
  });
  const z = keep(v, () => {
    c.get(x);
    c.get(x);
    v.mul();
  });
  const near = keep(v, () => {
    c.get(x);
    horner(v, z, ERF_TAYLOR);
    c.get(x);
    v.mul();
    v.add();
  });
  // the tail: |x| clamped to at most 4 (beyond 4, 1 - tiny rounds to 1)
  const t = keep(v, () => {
    c.get(a);
    v.const(4);
    v.pmin();
  });
  const u = keep(v, () => {
    c.get(t);
    v.const(2.375);
    v.sub();
    v.const(1 / 1.625);
    v.mul();
  });
  const negSquare = keep(v, () => {
    c.get(t);
    c.get(t);
    v.mul();
    v.neg();
  });
  const far = keep(v, () => {
    v.const(1);
    exp(v, negSquare, { nonPositive: true });
    horner(v, u, ERFC_SCALED);
    v.mul();
    v.sub();
    c.get(x);
    v.copysign();
  });
  // NaN fails |x| < 0.75 and lands in the tail, whose copysign keeps it NaN (t is NaN there)
  c.get(near);
  c.get(far);
  c.get(a);
  v.const(ERF_SPLIT);
  v.lt();
  v.select();
}

/**
 * Pushes s^1.5 for an f32 local s, as TF.js's pow(s, 1.5) gives it (rsqrt's gradient): s * sqrt(s) in
 * double precision, rounded to float32 once. Against the wasm backend's powf it differs in about 1 of
 * 1,500 values (powf's own last-bit error), where float32's s * sqrt(s), rounded twice, differs in 1 of 4.
 */
export function pow1_5(c: Code, s: Local): void {
  c.get(s).f64PromoteF32();
  c.get(s).f64PromoteF32().f64Sqrt();
  c.f64Mul().f32DemoteF64();
}
