// layernorm(): normalises each example over its last axis.
import type { LayerKind } from './layer-kind.js';

export const layernorm: LayerKind = {
  name: 'layernorm',
  summary: 'layer normalisation over the last axis of each example',
  args: [{ name: 'epsilon', type: { kind: 'number', min: 0, minExclusive: true }, default: 1e-3, hyper: true }],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params(_, [input]) {
    const c = [input[input.length - 1]];
    return [
      { name: 'gamma', shape: c, init: 'ones', trainable: true },
      { name: 'beta', shape: c, init: 'zeros', trainable: true },
    ];
  },
};
