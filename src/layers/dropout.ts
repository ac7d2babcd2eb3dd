// dropout(rate): zeroes a fraction of activations while training (inverted dropout); each member
// draws its own mask.
import type { LayerKind } from './layer-kind.js';

export const dropout: LayerKind = {
  name: 'dropout',
  summary: 'randomly zero a fraction `rate` of activations while training',
  args: [{ name: 'rate', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, positional: true, required: true, hyper: true }],
  reads: 'previous',
  shape: (ctx) => ctx.inputs[0],
  params: () => [],
};
