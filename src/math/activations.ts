// The activation functions and their gradients, each written once (src/math/expr.ts) and rendered by the
// generated steps' targets: TF.js's definitions, in the operation order of the op path (src/kernels/activations.ts)
// and its autodiff. A forward rule reads `z` (and leaky_relu's slope `alpha`); a gradient reads dL/da `da`,
// the activation's value `a`, and `z` only where it must (gelu, swish: a target keeps z for those alone).
// The softmax is a row's, not an element's: each target writes its rows itself.
import { add, erf, exp, gt, inputsOf, mul, neg, pmax, rule, select, sigmoid, sub, tanh, let_, type Rule } from './expr.js';

/** leaky_relu's slope for x < 0 when it is a layer's `activation:` argument (TF's tf.nn.leaky_relu default). */
export const LEAKY_RELU_ALPHA = 0.2;

export interface ElementwiseActivation {
  forward: Rule;
  /** dL/dz; its masks read a > 0 for z > 0, the same set for relu, elu and leaky_relu (alpha >= 0), NaN included */
  grad: Rule;
}

const SQRT1_2 = Math.fround(Math.SQRT1_2);
const TWO_OVER_SQRT_PI = Math.fround(2 / Math.sqrt(Math.PI));

/** gelu's parts as the op path computes them: h = z * 0.5, u = z * sqrt(1/2), b = 1 + erf(u); gelu = h * b. */
const geluParts = [let_('h', mul('z', 0.5)), let_('u', mul('z', SQRT1_2)), let_('b', add(1, erf('u')))];

const positive = gt('a', 0);

/** Every activation: an elementwise rule, or `rows` (the softmax, along the last axis). */
export const activationRules: Record<string, ElementwiseActivation | 'rows'> = {
  linear: { forward: rule('z'), grad: rule('da') },
  relu: { forward: rule(pmax('z', 0)), grad: rule(select(positive, 'da', 0)) },
  // dy * y * (1 - y)
  sigmoid: { forward: rule(sigmoid('z')), grad: rule(mul('da', mul('a', sub(1, 'a')))) },
  // dy * (1 - y^2)
  tanh: { forward: rule(tanh('z')), grad: rule(mul('da', sub(1, mul('a', 'a')))) },
  softmax: 'rows',
  // z > 0 ? z : exp(z) - 1; z > 0 ? dy : dy * (y + 1)
  elu: { forward: rule(select(gt('z', 0), 'z', sub(exp('z'), 1))), grad: rule(select(positive, 'da', mul('da', add('a', 1)))) },
  // the exact form, (z * 0.5) * (1 + erf(z * sqrt(1/2))); autodiff of h * b: (dy b) 0.5 + ((dy h) (2/sqrt(pi) exp(-u^2))) sqrt(1/2)
  gelu: {
    forward: rule(mul('h', 'b'), geluParts, ['h', 'u', 'b']),
    grad: rule(add(mul(mul('da', 'b'), 0.5), mul(mul(mul('da', 'h'), mul(TWO_OVER_SQRT_PI, exp('nu2', { nonPositive: true }))), SQRT1_2)), [...geluParts, let_('nu2', neg(mul('u', 'u')))], ['h', 'u', 'b']),
  },
  // z s(z); autodiff of it: dy s + (dy z) (s (1 - s))
  swish: {
    forward: rule(mul('z', sigmoid('z'))),
    grad: rule(add(mul('da', 's'), mul(mul('da', 'z'), mul('s', sub(1, 's')))), [let_('s', sigmoid('z'))]),
  },
  // z where z > 0, z * alpha elsewhere (and the gradient: dy, dy * alpha)
  leaky_relu: { forward: rule(select(gt('z', 0), 'z', mul('z', 'alpha'))), grad: rule(select(positive, 'da', mul('da', 'alpha'))) },
};

/** The activations the generated steps' kernels compute, the WebAssembly step's and the WGSL step's: every one described. */
export const kernelActivations: ReadonlySet<string> = new Set(Object.keys(activationRules));

/** The elementwise rules of an activation, or undefined for a row's (the softmax) or an unknown one. */
export function elementwise(name: string): ElementwiseActivation | undefined {
  const r = activationRules[name];
  return r === undefined || r === 'rows' ? undefined : r;
}

/** The elementwise rules of an activation a target has written code for (`what`: the target's code, for the error). */
export function elementwiseOrThrow(name: string, what: string): ElementwiseActivation {
  const r = elementwise(name);
  if (!r) throw new Error(`internal error: no ${what} for the activation ${name}`);
  return r;
}

/** Whether an activation's gradient reads z (the pre-activation, which a dense layer then keeps). */
export const gradReadsZ = (name: string): boolean => {
  const r = elementwise(name);
  return r !== undefined && inputsOf(r.grad).includes('z');
};
