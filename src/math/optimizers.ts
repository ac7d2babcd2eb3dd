// The optimizers' update rules, each written once (src/math/expr.ts) and rendered by the generated steps'
// targets, element by element, with the op path's operations in its order (src/kernels/optimizers.ts):
// tf.train's sgd/momentum, adam and rmsprop, Keras' decoupled weight decay (sgd, adamw). A rule reads the
// parameter `w`, its gradient `g` (clipped already where the member clips), its slots (`slot:m`) and the
// member's hyperparameters (`hyper:lr`, `hyper:-lr`, `hyper:1-beta1`, `hyper:bc1` (Adam's bias correction
// 1 - beta1^t), ...); it stores the slots' new values, then the parameter's.
import { add, div, gt, mul, select, sqrt, store, sub, let_, type Operand, type Rule } from './expr.js';

const h = (key: string): string => `hyper:${key}`;
const slot = (name: string): string => `slot:${name}`;

/** decay(w) = w - w * weight_decay * lr (a zero weight_decay leaves a finite w as it is, bit for bit) */
const decayed: Operand = sub('w', mul(mul('w', h('weight_decay')), h('lr')));

/** Adam's step, (m / bc1) / (sqrt(v / bc2) + epsilon) * -lr, on `base` (w, or adamw's decayed w). */
const adam = (base: Operand): Rule => ({
  body: [
    let_('mt', add(mul(slot('m'), h('beta1')), mul('g', h('1-beta1')))),
    let_('vt', add(mul(slot('v'), h('beta2')), mul(mul('g', 'g'), h('1-beta2')))),
    store(slot('m'), 'mt'),
    store(slot('v'), 'vt'),
    store('w', add(mul(div(div('mt', h('bc1')), add(sqrt(div('vt', h('bc2'))), h('epsilon'))), h('-lr')), base)),
  ],
});

export const updateRules: Record<string, Rule> = {
  // tf.train.momentum: accum = accum * momentum + g; w += step * -lr, step = accum (nesterov: g + accum * momentum)
  sgd: {
    body: [
      let_('accum', add(mul(slot('accum'), h('momentum')), 'g')),
      store(slot('accum'), 'accum'),
      store('w', add(mul(select(gt(h('nesterov'), 0.5), add('g', mul('accum', h('momentum'))), 'accum'), h('-lr')), decayed)),
    ],
  },
  adam: adam('w'),
  adamw: adam(decayed),
  // tf.train.rmsprop, not centred: ms = rho ms + (1 - rho) g^2; mom = momentum mom + lr g / sqrt(ms + eps); w -= mom
  rmsprop: {
    body: [
      let_('ms', add(mul(slot('ms'), h('rho')), mul(mul('g', 'g'), h('1-rho')))),
      let_('mom', add(mul(slot('mom'), h('momentum')), div(mul('g', h('lr')), sqrt(add('ms', h('epsilon')))))),
      store(slot('ms'), 'ms'),
      store(slot('mom'), 'mom'),
      store('w', sub('w', 'mom')),
    ],
  },
};

/** The optimizers the generated steps compute: every one described. */
export const describedOptimizers: readonly string[] = Object.keys(updateRules);
