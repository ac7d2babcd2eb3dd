// relu(), sigmoid(), tanh(), softmax(), ...: one stand-alone layer per activation function.
import { activations } from '../vocabulary/activations.js';
import type { LayerKind } from './layer-kind.js';

export const activationLayers: LayerKind[] = activations
  .filter((a) => a !== 'linear')
  .map((name) => ({
    name,
    summary: `the ${name} activation as a layer`,
    args: name === 'leaky_relu' ? [{ name: 'alpha', type: { kind: 'number', min: 0 }, positional: true, default: 0.2, hyper: true }] : [],
    reads: 'previous' as const,
    shape: (ctx) => ctx.inputs[0],
    params: () => [],
  }));
