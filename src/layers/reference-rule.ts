// A layer kind's rule for the reference: one member's layer as tfjs-layers layers, with Keras-style
// names, its member's own arguments and the initializers netc drew its weights from. serve/layers-model.ts
// builds a member's model from these; the equivalence tests hold the op path and the generated step to it,
// and `netc extract` writes it.
import type * as tfjs from '@tensorflow/tfjs';
import type { TF } from '../kernels/tf.js';
import { LEAKY_RELU_ALPHA } from '../math/activations.js';

/** A layer or activation that tfjs-layers cannot express. */
export class UnsupportedLayerError extends Error {
  override name = 'UnsupportedLayerError';
}

export type ReferenceLayer = tfjs.layers.Layer;

export interface ReferenceContext {
  tf: TF;
  /** the layer's name: its weights are found under it */
  name: string;
  /** the member's values of the layer's arguments */
  args: Record<string, unknown>;
  /** the shapes of one example of each of its inputs */
  inputShapes: number[][];
  /** the initializers netc drew its parameters from, by tfjs-layers' names (`glorotUniform`), in the kind's parameter order */
  initializers: string[];
}

export interface ReferenceRule {
  /** the layer, applied to its input (or its inputs, as a list), then any layers after it, each on the one before */
  layers(ctx: ReferenceContext): ReferenceLayer[];
}

/** The initializers under a layer config's names (`kernelInitializer`, ...), given in the kind's parameter order. */
export function initializerConfig(ctx: ReferenceContext, names: string[]): Record<string, never> {
  return Object.fromEntries(ctx.initializers.map((init, i) => [names[i], init])) as Record<string, never>;
}

// activations tfjs-layers knows by name (leaky_relu is a layer there, not an activation)
const tfActivations = new Set(['linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'elu', 'gelu', 'swish']);

/** Whether tfjs-layers has the activation by name: `tf.layers.activation({ activation })`. */
export const hasTfActivation = (name: string): boolean => tfActivations.has(name);

/**
 * A weighted layer's `activation:` as tfjs-layers' activation argument. leaky_relu has none there: the
 * layer is written linear and followed by the LeakyReLU layer of `activationAfter`.
 */
function activationConfig(ctx: ReferenceContext): string {
  const a = String(ctx.args.activation ?? 'linear');
  if (a === 'leaky_relu') return 'linear';
  if (!tfActivations.has(a)) throw new UnsupportedLayerError(`${ctx.name}: tfjs-layers has no '${a}' activation for a layer's activation argument; write ${a}() as a layer of its own`);
  return a;
}

/**
 * The layer that applies a weighted layer's leaky_relu `activation:` after it (with netc's alpha, not
 * tfjs-layers' default 0.3), named `NAME_leaky_relu`; it has no weights, so the weights keep their names.
 */
function activationAfter(ctx: ReferenceContext): ReferenceLayer[] {
  return ctx.args.activation === 'leaky_relu' ? [ctx.tf.layers.leakyReLU({ alpha: LEAKY_RELU_ALPHA, name: `${ctx.name}_leaky_relu` })] : [];
}

/**
 * A weighted layer (dense, conv2d) as tfjs-layers layers: `make` given what every such layer's config holds (its
 * activation argument, whether it has a bias, the initializers netc drew its kernel and bias from, its name), then
 * the leaky_relu layer that stands for a leaky_relu `activation:`.
 */
export function weightedLayers(ctx: ReferenceContext, make: (common: Record<string, never>) => ReferenceLayer): ReferenceLayer[] {
  const common = { activation: activationConfig(ctx), useBias: ctx.args.bias as boolean, ...initializerConfig(ctx, ['kernelInitializer', 'biasInitializer']), name: ctx.name } as unknown as Record<string, never>;
  return [make(common), ...activationAfter(ctx)];
}
