// The wasm renderer of src/math/expr.ts's rules: each operation as Lanes instructions (one float or four),
// operands in order, the transcendental functions as src/wasm/math.ts's polynomials. A let is a local; an
// input is what the caller binds it to: a local, or code that pushes its value (a load, a splat).
import type { Local } from './module.js';
import type { Lanes } from './lanes.js';
import { erf, exp, log, sigmoid, tanh } from './math.js';
import { operands, type Expr, type Rule } from '../math/expr.js';

/** An input's value: a local (its value, which a polynomial may read as its argument), or code that pushes it. */
export type Binding = Local | (() => void);

export interface WasmEnv {
  inputs: Record<string, Binding>;
  /** writes a store's value: `push` pushes it (a rule without stores needs none) */
  store?(name: string, push: () => void): void;
}

const polynomials = { tanh, erf, sigmoid } as const;

/** Emits a rule's statements and pushes its value (if it has one). */
export function emitRule(v: Lanes, r: Rule, env: WasmEnv): void {
  const bound = new Map<string, Binding>(Object.entries(env.inputs));
  const locals = new Map<string, Local>();
  for (const name of r.upfront ?? []) locals.set(name, v.floatLocal());
  for (const s of r.body) {
    if ('let' in s) {
      const l = locals.get(s.let) ?? v.floatLocal();
      emitExpr(v, s.value, bound);
      v.code.set(l);
      bound.set(s.let, l);
    } else {
      if (!env.store) throw new Error(`internal error: nowhere to store ${s.store}`);
      env.store(s.store, () => emitExpr(v, s.value, bound));
    }
  }
  if (r.value) emitExpr(v, r.value, bound);
}

/** Pushes an expression's value. */
export function emitExpr(v: Lanes, e: Expr, bound: ReadonlyMap<string, Binding>): void {
  const c = v.code;
  const emit = (x: Expr) => emitExpr(v, x, bound);
  switch (e.op) {
    case 'const':
      v.const(e.value);
      return;
    case 'ref': {
      const b = bound.get(e.name);
      if (b === undefined) throw new Error(`internal error: the rule reads ${e.name}, which nothing binds`);
      if (typeof b === 'function') b();
      else c.get(b);
      return;
    }
    case 'select':
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'min':
    case 'max':
    case 'pmin':
    case 'pmax':
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
    case 'eq':
    case 'ne':
    case 'copysign':
      operands(e).forEach(emit);
      if (e.op === 'select') v.select();
      else v[e.op]();
      return;
    case 'neg':
    case 'abs':
    case 'sqrt':
      emit(e.a);
      v[e.op]();
      return;
    case 'sign': {
      // copysign(1, x) where x != 0, 0 at 0
      const x = argument(v, e.a, bound);
      v.const(1);
      c.get(x);
      v.copysign();
      v.const(0);
      c.get(x);
      v.const(0);
      v.ne();
      v.select();
      return;
    }
    case 'exp':
      exp(v, argument(v, e.a, bound), e.nonPositive ? { nonPositive: true } : {});
      return;
    case 'log':
      log(v, argument(v, e.a, bound), e.clipped ?? false);
      return;
    case 'tanh':
    case 'erf':
    case 'sigmoid':
      polynomials[e.op](v, argument(v, e.a, bound));
      return;
  }
}

/** A polynomial's argument as a local: the one an input or let is bound to, or a new one holding the value. */
function argument(v: Lanes, e: Expr, bound: ReadonlyMap<string, Binding>): Local {
  const b = e.op === 'ref' ? bound.get(e.name) : undefined;
  if (b !== undefined && typeof b !== 'function') return b;
  const l = v.floatLocal();
  emitExpr(v, e, bound);
  v.code.set(l);
  return l;
}
