// One instruction vocabulary for one float (f32) or four (f32x4): the generated kernels write their
// elementwise math once, against Lanes, and get a SIMD loop body and its scalar tail from the same
// description. Every operation here is exact IEEE arithmetic lane by lane (no fused multiply-add), so an
// element computes the same bits whether it falls in a vector or in the tail: where a member's elements
// fall never changes its numbers.
import type { Code, Local, ValType } from './module.js';

export interface Lanes {
  readonly width: 1 | 4;
  /** the type of a float (or bits) value: f32 / i32, or v128 for both */
  readonly float: ValType;
  readonly int: ValType;
  readonly code: Code;
  /** [address] -> value */
  load(offset?: number): void;
  /** [address, value] -> */
  store(offset?: number): void;
  /** a constant in every lane */
  const(v: number): void;
  /** a scalar f32 on the stack -> in every lane */
  splat(): void;
  add(): void;
  sub(): void;
  mul(): void;
  div(): void;
  min(): void;
  max(): void;
  /** [a, b] -> b < a ? b : a, and a < b ? b : a: a clamp that lets NaN through, in one SIMD instruction */
  pmin(): void;
  pmax(): void;
  sqrt(): void;
  neg(): void;
  abs(): void;
  /** -|x|: the sign bit set (abs and neg on one float, one or on four) */
  negAbs(): void;
  nearest(): void;
  /** comparisons -> a mask (all bits of a lane set where true; an i32 0/1 for one float) */
  lt(): void;
  gt(): void;
  le(): void;
  ge(): void;
  eq(): void;
  ne(): void;
  /** masks: and, or, not */
  and(): void;
  or(): void;
  /** [a, b, mask] -> mask ? a : b */
  select(): void;
  /** f32 -> its bits, as ints; and back */
  bits(): void;
  fromBits(): void;
  /** f32 -> int (truncated, saturating, NaN -> 0); int -> f32 */
  toInt(): void;
  toFloat(): void;
  intConst(v: number): void;
  intAdd(): void;
  intSub(): void;
  intAnd(): void;
  intOr(): void;
  intShl(k: number): void;
  intShrS(k: number): void;
  intGt(): void;
  /** [value] -> copysign(value, sign) with sign from [sign] below it: [value, sign] -> value with sign's sign */
  copysign(): void;
  floatLocal(): Local;
  intLocal(): Local;
  /** a local for a comparison's mask */
  maskLocal(): Local;
}

export function scalarLanes(code: Code): Lanes {
  const c = code;
  return {
    width: 1,
    float: 'f32',
    int: 'i32',
    code,
    load: (o = 0) => void c.loadF32(o),
    store: (o = 0) => void c.storeF32(o),
    const: (v) => void c.f32(v),
    splat: () => {},
    add: () => void c.f32Add(),
    sub: () => void c.f32Sub(),
    mul: () => void c.f32Mul(),
    div: () => void c.f32Div(),
    min: () => void c.f32Min(),
    max: () => void c.f32Max(),
    // the SIMD instructions' rule, lane for lane: [a, b] -> select(b, a, b < a)
    pmin: () => {
      const [a, b] = [c.local('f32'), c.local('f32')];
      c.set(b).set(a).get(b).get(a).get(b).get(a).f32Lt().select();
    },
    pmax: () => {
      const [a, b] = [c.local('f32'), c.local('f32')];
      c.set(b).set(a).get(b).get(a).get(a).get(b).f32Lt().select();
    },
    sqrt: () => void c.f32Sqrt(),
    neg: () => void c.f32Neg(),
    abs: () => void c.f32Abs(),
    negAbs: () => void c.f32Abs().f32Neg(),
    nearest: () => void c.f32Nearest(),
    lt: () => void c.f32Lt(),
    gt: () => void c.f32Gt(),
    le: () => void c.f32Le(),
    ge: () => void c.f32Ge(),
    eq: () => void c.f32Eq(),
    ne: () => void c.f32Ne(),
    and: () => void c.i32And(),
    or: () => void c.i32Or(),
    select: () => void c.select(),
    bits: () => void c.i32ReinterpretF32(),
    fromBits: () => void c.f32ReinterpretI32(),
    toInt: () => void c.i32TruncSatF32S(),
    toFloat: () => void c.f32ConvertI32S(),
    intConst: (v) => void c.i32(v),
    intAdd: () => void c.i32Add(),
    intSub: () => void c.i32Sub(),
    intAnd: () => void c.i32And(),
    intOr: () => void c.i32Or(),
    intShl: (k) => void c.i32(k).i32Shl(),
    intShrS: (k) => void c.i32(k).i32ShrS(),
    intGt: () => void c.i32GtS(),
    copysign: () => void c.f32Copysign(),
    floatLocal: () => c.local('f32'),
    intLocal: () => c.local('i32'),
    maskLocal: () => c.local('i32'),
  };
}

export function simdLanes(code: Code): Lanes {
  const c = code;
  // constants live in locals set once at the function's start
  const intSplat = (v: number) => void c.get(c.hoisted(`i32x4:${v}`, 'v128', () => c.i32(v).i32x4Splat()));
  const floatSplat = (v: number) => void c.get(c.hoisted(`f32x4:${Object.is(v, -0) ? '-0' : v}`, 'v128', () => c.v128Const([v, v, v, v])));
  return {
    width: 4,
    float: 'v128',
    int: 'v128',
    code,
    load: (o = 0) => void c.loadV128(o),
    store: (o = 0) => void c.storeV128(o),
    const: floatSplat,
    splat: () => void c.f32x4Splat(),
    add: () => void c.f32x4Add(),
    sub: () => void c.f32x4Sub(),
    mul: () => void c.f32x4Mul(),
    div: () => void c.f32x4Div(),
    min: () => void c.f32x4Min(),
    max: () => void c.f32x4Max(),
    pmin: () => void c.f32x4Pmin(),
    pmax: () => void c.f32x4Pmax(),
    sqrt: () => void c.f32x4Sqrt(),
    neg: () => void c.f32x4Neg(),
    abs: () => void c.f32x4Abs(),
    negAbs: () => (floatSplat(-0), void c.v128Or()),
    nearest: () => void c.f32x4Nearest(),
    lt: () => void c.f32x4Lt(),
    gt: () => void c.f32x4Gt(),
    le: () => void c.f32x4Le(),
    ge: () => void c.f32x4Ge(),
    eq: () => void c.f32x4Eq(),
    ne: () => void c.f32x4Ne(),
    and: () => void c.v128And(),
    or: () => void c.v128Or(),
    select: () => void c.v128Bitselect(),
    bits: () => {},
    fromBits: () => {},
    toInt: () => void c.i32x4TruncSatF32x4S(),
    toFloat: () => void c.f32x4ConvertI32x4S(),
    intConst: intSplat,
    intAdd: () => void c.i32x4Add(),
    intSub: () => void c.i32x4Sub(),
    intAnd: () => void c.v128And(),
    intOr: () => void c.v128Or(),
    intShl: (k) => void c.i32(k).i32x4Shl(),
    intShrS: (k) => void c.i32(k).i32x4ShrS(),
    intGt: () => void c.i32x4GtS(),
    copysign: () => {
      // [value, sign] -> (value & 0x7fffffff) | (sign & 0x80000000)
      const sign = c.local('v128');
      c.set(sign);
      intSplat(0x7fffffff);
      c.v128And();
      c.get(sign);
      intSplat(-0x80000000);
      c.v128And();
      c.v128Or();
    },
    floatLocal: () => c.local('v128'),
    intLocal: () => c.local('v128'),
    maskLocal: () => c.local('v128'),
  };
}
