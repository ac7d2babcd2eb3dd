// A small expression language for elementwise math, in the manner of tinygrad's renderers: an activation
// and its gradient, a loss's term and gradient, an optimizer's update are each written once, here, as a
// rule (lets and stores over expressions, in the exact order of their operations), and each target renders
// the rule: the generated WebAssembly step (src/wasm/render.ts, over Lanes, with src/wasm/math.ts's
// polynomials) and the WGSL step (src/wgsl/render.ts, as text). A rule's operation order is its
// rounding: a renderer emits the operations as written, operand by operand, and never reassociates.
//
// The transcendental functions (exp, log, tanh, erf, the sigmoid, sign) are operations of their own: each
// target renders them its own way (the wasm step by polynomials within 2 ulp; the WGSL step by TF.js's
// WebGPU shaders' formulas), as the op path on each backend computes them.

/** A binary operation: arithmetic, a clamp, a comparison (a mask), or copysign (a's magnitude, b's sign). */
export type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'min' | 'max' | 'pmin' | 'pmax' | 'gt' | 'ge' | 'lt' | 'le' | 'eq' | 'ne' | 'copysign';
/** A unary operation; `sign` is 0 at 0. */
export type UnaryOp = 'neg' | 'abs' | 'sqrt' | 'sign' | 'tanh' | 'erf' | 'sigmoid';

export type Expr =
  | { op: 'const'; value: number }
  /** an input of the rule (`z`, `a`, `da`, `g`, `w`, `hyper:lr`, `slot:m`, ...) or a let before it */
  | { op: 'ref'; name: string }
  /**
   * min/max: IEEE's (NaN in, NaN out); pmin/pmax: the SIMD rule, [a, b] -> b < a ? b : a (pmin), a < b ? b : a
   * (pmax), a clamp that lets a NaN in a through
   */
  | { op: BinaryOp; a: Expr; b: Expr }
  | { op: UnaryOp; a: Expr }
  /** nonPositive: a is never above 0 (or is NaN), which a renderer may use (no clamp at the overflow end) */
  | { op: 'exp'; a: Expr; nonPositive?: boolean }
  /** clipped: a is a clipped probability, in [1e-7, 1 - 1e-7], or NaN (never 0, negative, subnormal or infinite) */
  | { op: 'log'; a: Expr; clipped?: boolean }
  /** cond ? then : otherwise, cond a comparison */
  | { op: 'select'; cond: Expr; then: Expr; otherwise: Expr };

/** A statement: a named value (`let`), or a value written to an output (`store`: a slot, the parameter, a loss's term). */
export type Stmt = { let: string; value: Expr } | { store: string; value: Expr };

export interface Rule {
  /** the statements, in order */
  body: Stmt[];
  /** the rule's value (an activation's, a gradient's), after the body; none for a rule that only stores */
  value?: Expr;
  /**
   * the lets whose locals the wasm renderer allocates before the first statement, in this order (the others
   * each at its let): the order the hand-written code had, which keeps the generated module's bytes
   */
  upfront?: readonly string[];
}

/** An operand: an expression, a constant, or a reference by name. */
export type Operand = Expr | number | string;

export const expr = (x: Operand): Expr => (typeof x === 'number' ? { op: 'const', value: x } : typeof x === 'string' ? { op: 'ref', name: x } : x);
const binary = (op: BinaryOp) => (a: Operand, b: Operand): Expr => ({ op, a: expr(a), b: expr(b) });
const unary = (op: UnaryOp) => (a: Operand): Expr => ({ op, a: expr(a) });

export const add = binary('add');
export const sub = binary('sub');
export const mul = binary('mul');
export const div = binary('div');
export const min = binary('min');
export const max = binary('max');
export const pmin = binary('pmin');
export const pmax = binary('pmax');
export const gt = binary('gt');
export const ge = binary('ge');
export const lt = binary('lt');
export const le = binary('le');
export const eq = binary('eq');
export const ne = binary('ne');
export const copysign = binary('copysign');
export const neg = unary('neg');
export const abs = unary('abs');
export const sqrt = unary('sqrt');
export const sign = unary('sign');
export const tanh = unary('tanh');
export const erf = unary('erf');
export const sigmoid = unary('sigmoid');
export const exp = (a: Operand, form: { nonPositive?: boolean } = {}): Expr => ({ op: 'exp', a: expr(a), ...form });
export const log = (a: Operand, form: { clipped?: boolean } = {}): Expr => ({ op: 'log', a: expr(a), ...form });
export const select = (cond: Operand, then: Operand, otherwise: Operand): Expr => ({ op: 'select', cond: expr(cond), then: expr(then), otherwise: expr(otherwise) });
export const let_ = (name: string, value: Operand): Stmt => ({ let: name, value: expr(value) });
export const store = (name: string, value: Operand): Stmt => ({ store: name, value: expr(value) });

/** A rule of lets and a value. */
export const rule = (value: Operand, body: Stmt[] = [], upfront?: readonly string[]): Rule => ({ body, value: expr(value), ...(upfront ? { upfront } : {}) });

/** The operands of an expression, in the order a renderer emits them. */
export function operands(e: Expr): Expr[] {
  switch (e.op) {
    case 'const':
    case 'ref':
      return [];
    case 'select':
      return [e.then, e.otherwise, e.cond];
    default:
      return 'b' in e ? [e.a, e.b] : [e.a];
  }
}

/** The inputs a rule reads (its refs that no let before them names), in the order first read. */
export function inputsOf(r: Rule): string[] {
  const bound = new Set<string>();
  const inputs: string[] = [];
  const visit = (e: Expr) => {
    if (e.op === 'ref' && !bound.has(e.name) && !inputs.includes(e.name)) inputs.push(e.name);
    operands(e).forEach(visit);
  };
  for (const s of r.body) {
    visit(s.value);
    if ('let' in s) bound.add(s.let);
  }
  if (r.value) visit(r.value);
  return inputs;
}

/** The outputs a rule stores to, in order. */
export const storesOf = (r: Rule): string[] => r.body.flatMap((s) => ('store' in s ? [s.store] : []));
