// The losses, each written once (src/math/expr.ts) and rendered by the generated steps' targets, with the op
// path's definitions (src/kernels/losses.ts): Keras' clipping of probabilities to [eps, 1 - eps], whose
// clipped elements pass no gradient. An elementwise loss's rule reads one prediction `p`, its label `y` and
// `scale` (the gradient of the batch mean of each example's mean over its K outputs) and stores the element's
// `term` of its example's loss and `grad`, dL/dp; the categorical cross-entropies normalise a whole row
// first, and each target writes their rows itself.
import { abs, add, copysign, div, eq, le, log, min, mul, pmax, pmin, select, sign, store, sub, let_, type Rule } from './expr.js';

export interface ElementLoss {
  rule: Rule;
  /** the example's loss is minus the mean of its terms (binary cross-entropy), else their mean */
  negated?: boolean;
  /**
   * the gradient of the two means: 1 / (B K) in one division (`once`, where the op path writes the gradient
   * out: binary cross-entropy), or (1 / B) / K, where autodiff takes one mean after the other
   */
  scale: 'once' | 'twice';
}

export const EPS = Math.fround(1e-7);
export const ONE_MINUS_EPS = Math.fround(1 - 1e-7);

/** d = p - y */
const difference = let_('d', sub('p', 'y'));

/** Every loss: an elementwise rule for its arguments, or `rows` (the categorical cross-entropies). */
export const lossRules: Record<string, ((args: Record<string, unknown>) => ElementLoss) | 'rows'> = {
  mse: () => ({ rule: { body: [difference, store('term', mul('d', 'd')), store('grad', mul('scale', mul('d', 2)))] }, scale: 'twice' }),
  // sign(d) / (B K), sign(0) = 0
  mae: () => ({ rule: { body: [difference, store('term', abs('d')), store('grad', mul(sign('d'), 'scale'))] }, scale: 'twice' }),
  huber(args) {
    const delta = Math.fround((args.delta as number | undefined) ?? 1);
    // 0.5 q^2 + delta (err - q), q = min(err, delta), err = |p - y|; its gradient d within delta, delta sign(d) beyond
    const body = [
      difference,
      let_('err', abs('d')),
      let_('q', min('err', delta)),
      store('term', add(mul(0.5, mul('q', 'q')), mul(delta, sub('err', 'q')))),
      store('grad', mul(select(le('err', delta), 'd', copysign(delta, 'd')), 'scale')),
    ];
    return { rule: { body, upfront: ['d', 'err', 'q'] }, scale: 'twice' };
  },
  binary_crossentropy: () => ({
    rule: {
      body: [
        // q and 1 - q are clipped probabilities (or NaN)
        let_('q', pmin(pmax('p', EPS), ONE_MINUS_EPS)),
        let_('rest', sub(1, 'q')),
        let_('lq', log('q', { clipped: true })),
        let_('lr', log('rest', { clipped: true })),
        // y log q + (1 - y) log(1 - q)
        store('term', add(mul('y', 'lq'), mul(sub(1, 'y'), 'lr'))),
        // (q - y) / (q (1 - q)) / (B K) inside the clip range, 0 where p was clipped (NaN fails the range)
        store('grad', select(eq('p', 'q'), mul(div(sub('q', 'y'), mul('q', 'rest')), 'scale'), 0)),
      ],
      upfront: ['q', 'rest', 'lq', 'lr'],
    },
    negated: true,
    scale: 'once',
  }),
  categorical_crossentropy: 'rows',
  sparse_categorical_crossentropy: 'rows',
};

/** The losses the generated steps compute: every one described. */
export const describedLosses: readonly string[] = Object.keys(lossRules);

/** The elementwise rule of a loss for its arguments, or undefined for a row's (the categorical cross-entropies) or an unknown one. */
export function elementLoss(name: string, args: Record<string, unknown>): ElementLoss | undefined {
  const r = lossRules[name];
  return r === undefined || r === 'rows' ? undefined : r(args);
}
