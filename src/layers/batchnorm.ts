// batchnorm(): normalises over the batch on the last axis; keeps running statistics per member.
import type { LayerKind } from './layer-kind.js';

export const batchnorm: LayerKind = {
  name: 'batchnorm',
  summary: 'batch normalisation over the last axis, with running statistics',
  args: [
    { name: 'momentum', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, default: 0.99, hyper: true },
    { name: 'epsilon', type: { kind: 'number', min: 0, minExclusive: true }, default: 1e-3, hyper: true },
  ],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params(_, [input]) {
    const c = [input[input.length - 1]];
    return [
      { name: 'gamma', shape: c, init: 'ones', trainable: true },
      { name: 'beta', shape: c, init: 'zeros', trainable: true },
      { name: 'moving_mean', shape: c, init: 'zeros', trainable: false },
      { name: 'moving_variance', shape: c, init: 'ones', trainable: false },
    ];
  },
};
