// The WGSL renderer of src/math/expr.ts's rules: an expression as WGSL text (operands in order, parentheses
// where the grammar needs them), the transcendental functions as TF.js's WebGPU shaders write them, a rule
// with lets as a helper function (or, in a kernel's body, as `let` lines). Inputs are bound to WGSL text: a
// local, a buffer's element, a literal.
import { add, inputsOf, store, sub, let_, type Expr, type Rule } from '../math/expr.js';
import { elementwiseOrThrow } from '../math/activations.js';
import { updateRules } from '../math/optimizers.js';
import type { ElementLoss } from '../math/losses.js';

/** A float32 constant as WGSL writes it: short where that names the same f32, else 9 significant digits. */
export function literal(v: number): string {
  const f = Math.fround(v);
  if (Object.is(f, -0)) return '-0.0';
  if (Number.isInteger(f) && Math.abs(f) < 1e6) return `${f}.0`;
  const short = String(v);
  if (short.length <= 6 && Math.fround(Number(short)) === f) return short;
  const s = f.toPrecision(9);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

const TANH_FN = 'fn tanh_tfjs(a: f32) -> f32 {\n  let e2x = exp(-2.0 * abs(a));\n  return sign(a) * (1.0 - e2x) / (1.0 + e2x);\n}';

/** TF.js's erf (Abramowitz and Stegun 7.1.26, its WebGPU shader's constants and order). */
const ERF_FN = [
  'fn erf_tfjs(a: f32) -> f32 {',
  `  let p = ${literal(0.3275911)};`,
  `  let a1 = ${literal(0.254829592)};`,
  `  let a2 = ${literal(-0.284496736)};`,
  `  let a3 = ${literal(1.421413741)};`,
  `  let a4 = ${literal(-1.453152027)};`,
  `  let a5 = ${literal(1.061405429)};`,
  '  let s = sign(a);',
  '  let absA = abs(a);',
  '  let t = 1.0 / (1.0 + p * absA);',
  '  return s * (1.0 - (((((a5 * t + a4) * t) + a3) * t + a2) * t + a1) * t * exp(-absA * absA));',
  '}',
].join('\n');

/** Text and its binding strength: 0 a comparison, 1 a sum, 2 a product, 3 a negation, 4 an atom (a name, a call, an index). */
interface Text {
  s: string;
  p: number;
}

const arithmetic = { add: ['+', 1], sub: ['-', 1], mul: ['*', 2], div: ['/', 2] } as const;
const comparisons = { gt: '>', ge: '>=', lt: '<', le: '<=', eq: '==', ne: '!=' } as const;
const calls = { min: 'min', max: 'max', pmin: 'min', pmax: 'max', abs: 'abs', sqrt: 'sqrt', sign: 'sign', exp: 'exp', log: 'log' } as const;

const wrap = (t: Text, below: number): string => (t.p < below ? `(${t.s})` : t.s);

/** Renders expressions against bindings, collecting the helper functions they call, in first-use order. */
export class WgslRenderer {
  readonly helpers: string[] = [];
  constructor(private readonly bound: Record<string, string>) {}

  private helper(fn: string): void {
    if (!this.helpers.includes(fn)) this.helpers.push(fn);
  }

  expr(e: Expr): string {
    return this.text(e).s;
  }

  private text(e: Expr): Text {
    switch (e.op) {
      case 'const': {
        const s = literal(e.value);
        return { s, p: s.startsWith('-') ? 3 : 4 };
      }
      case 'ref': {
        const s = this.bound[e.name];
        if (s === undefined) throw new Error(`internal error: the rule reads ${e.name}, which nothing binds`);
        return { s, p: /^[\w.]+(\[[^\]]*\])?$/.test(s) ? 4 : 0 };
      }
      case 'add':
      case 'sub':
      case 'mul':
      case 'div': {
        const [sym, p] = arithmetic[e.op];
        return { s: `${wrap(this.text(e.a), p)} ${sym} ${wrap(this.text(e.b), p + 1)}`, p };
      }
      case 'gt':
      case 'ge':
      case 'lt':
      case 'le':
      case 'eq':
      case 'ne':
        return { s: `${wrap(this.text(e.a), 1)} ${comparisons[e.op]} ${wrap(this.text(e.b), 1)}`, p: 0 };
      case 'select':
        return { s: `select(${this.expr(e.otherwise)}, ${this.expr(e.then)}, ${this.expr(e.cond)})`, p: 4 };
      case 'neg':
        return { s: `-${wrap(this.text(e.a), 4)}`, p: 3 };
      case 'sigmoid':
        // TF.js's WebGPU sigmoid: 1 / (1 + exp(-1 * x))
        return { s: `1.0 / (1.0 + exp(-1.0 * ${wrap(this.text(e.a), 3)}))`, p: 2 };
      case 'tanh':
        this.helper(TANH_FN);
        return { s: `tanh_tfjs(${this.expr(e.a)})`, p: 4 };
      case 'erf':
        this.helper(ERF_FN);
        return { s: `erf_tfjs(${this.expr(e.a)})`, p: 4 };
      case 'copysign':
        // a's magnitude with b's sign, bit for bit (WGSL has no copysign)
        return { s: `bitcast<f32>((bitcast<u32>(${this.expr(e.a)}) & 0x7fffffffu) | (bitcast<u32>(${this.expr(e.b)}) & 0x80000000u))`, p: 4 };
      case 'min':
      case 'max':
      case 'pmin':
      case 'pmax':
        // WGSL's min and max: pmin's and pmax's NaN rule is the hardware's here, as in TF.js's shaders
        return { s: `${calls[e.op]}(${this.expr(e.a)}, ${this.expr(e.b)})`, p: 4 };
      case 'abs':
      case 'sqrt':
      case 'sign':
      case 'exp':
      case 'log':
        return { s: `${calls[e.op]}(${this.expr(e.a)})`, p: 4 };
    }
  }

  /**
   * A rule's statements as lines of a kernel's body (`indent` before each): a let as `let NAME = ...;`, a
   * store as `store(name, value)` says. Its lets are bound for what follows; returns the lines.
   */
  lines(r: Rule, indent: string, store: (name: string, value: string) => string = noStore): string[] {
    const out: string[] = [];
    for (const s of r.body) {
      if ('let' in s) {
        out.push(`${indent}let ${s.let} = ${this.expr(s.value)};`);
        this.bound[s.let] = s.let;
      } else out.push(`${indent}${store(s.store, this.expr(s.value))}`);
    }
    return out;
  }
}

const noStore = (name: string): string => {
  throw new Error(`internal error: nowhere to store ${name}`);
};

/**
 * A rule's value as an expression over `bound`, and the helper functions it needs: inline where the rule has no
 * lets, else a call of a helper function `name` of the rule's inputs that holds them.
 */
export function ruleValue(r: Rule, name: string, bound: Record<string, string>): { value: string; helpers: string[] } {
  if (!r.value) throw new Error(`internal error: the rule ${name} has no value`);
  if (r.body.length === 0) {
    const w = new WgslRenderer(bound);
    return { value: w.expr(r.value), helpers: w.helpers };
  }
  const params = inputsOf(r);
  const own = new WgslRenderer(Object.fromEntries(params.map((p) => [p, p])));
  const body = own.lines(r, '  ');
  const fn = [`fn ${name}(${params.map((p) => `${p}: f32`).join(', ')}) -> f32 {`, ...body, `  return ${own.expr(r.value)};`, '}'].join('\n');
  return { value: `${name}(${params.map((p) => bound[p]).join(', ')})`, helpers: [...own.helpers, fn] };
}

/** The activation f(z) of z's text (`alpha`: leaky_relu's slope), and the helper functions it calls. */
export function activationText(name: string, z: string, alpha = ''): { value: string; helpers: string[] } {
  return ruleValue(elementwiseOrThrow(name, 'WGSL').forward, `${name}_f`, { z, ...(alpha ? { alpha } : {}) });
}

/** dL/dz of an activation from dL/da `da`, a = f(z), z (where it reads it) and alpha, and the helper functions it calls. */
export function activationGradText(name: string, bound: { da: string; a: string; z?: string; alpha?: string }): { value: string; helpers: string[] } {
  const b: Record<string, string> = { da: bound.da, a: bound.a };
  if (bound.z) b.z = bound.z;
  if (bound.alpha) b.alpha = bound.alpha;
  return ruleValue(elementwiseOrThrow(name, 'WGSL').grad, `${name}_grad`, b);
}

/**
 * An optimizer's step of one element as lines of a kernel's body: `w`, the parameter's element (read and
 * written), `slot(name)` a slot's, `h(key)` the member's hyperparameter; the gradient is the local `g`.
 */
export function updateText(optimizer: string, at: { w: string; slot(name: string): string; h(key: string): string }): string[] {
  const rule = updateRules[optimizer];
  if (!rule) throw new Error(`internal error: no WGSL for the optimizer ${optimizer}`);
  const place = (name: string): string => (name === 'w' ? at.w : name === 'g' ? 'g' : name.startsWith('slot:') ? at.slot(name.slice(5)) : at.h(name.slice('hyper:'.length)));
  // the parameter's element read once, as w0, before the step writes it
  const inputs = inputsOf(rule);
  const w = new WgslRenderer(Object.fromEntries(inputs.map((name) => [name, name === 'w' ? 'w0' : place(name)])));
  const lines = [...(inputs.includes('w') ? [`  let w0 = ${at.w};`] : []), ...w.lines(rule, '  ', (name, value) => `${place(name)} = ${value};`)];
  if (w.helpers.length) throw new Error(`internal error: the ${optimizer} update calls a helper function, which a kernel's body cannot hold`);
  return lines;
}

/**
 * One element's lines of the elementwise loss `e` (the rule of `loss` for its arguments), over the locals `p` and
 * `y` and the literal `scale`: its term added to (or, negated, taken from) the local `row`, and `let grad = ...;`
 * (dL/dp of the batch mean).
 */
export function lossElementText(loss: string, e: ElementLoss, scale: string): string[] {
  const body = e.rule.body.map((s) => ('let' in s ? s : s.store === 'term' ? store('row', (e.negated ? sub : add)('row', s.value)) : let_('grad', s.value)));
  const w = new WgslRenderer({ p: 'p', y: 'y', scale, row: 'row' });
  const lines = w.lines({ body }, '', (name, value) => `${name} = ${value};`);
  if (w.helpers.length) throw new Error(`internal error: the ${loss} loss calls a helper function, which a kernel's body cannot hold`);
  return lines;
}
