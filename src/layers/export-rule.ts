// What the layer kinds' export rules share (the rule itself, its context and its node are in
// src/interop/export-node.ts, below the kinds): a weighted layer's activation and bias.
import { LEAKY_RELU_ALPHA } from '../math/activations.js';
import type { Act } from '../interop/activation-forms.js';
import type { ExportContext, ExportTensor } from '../interop/export-node.js';
import { netcVector, reorderVector, type FeatureOrder } from '../interop/layout.js';

/** A layer's `activation:` argument with its constants (leaky_relu's 0.2, as netc computes it). */
export function activationArgOf(name: unknown): Act {
  const a = String(name ?? 'linear');
  return a === 'leaky_relu' ? { name: a, alpha: LEAKY_RELU_ALPHA } : { name: a };
}

/** A weighted layer's bias, its parameter `i`, where it has one. */
export function biasTensor(ctx: ExportContext, i: number): ExportTensor[] {
  const shape = ctx.base.shape;
  return ctx.args.bias ? [{ name: 'bias', shape: [shape[shape.length - 1]], data: ctx.param(i) }] : [];
}

/** The module attribute a layer's code refers to it by: `self.dense_1`. */
export const selfOf = (ctx: ExportContext): string => `self.${ctx.base.name}`;

/** Per-feature vectors (gamma, beta, running statistics), parameters 0, 1, ..., under PyTorch's `names`, in the input's feature order. */
export function featureTensors(ctx: ExportContext, names: string[]): ExportTensor[] {
  const features = ctx.base.shape[ctx.base.shape.length - 1];
  return names.map((name, i) => ({ name, shape: [features], data: reorderVector(ctx.param(i), ctx.inputs[0].order) }));
}

/** netc import: those vectors back in netc's feature order. */
export const featureParams = (t: (name: string) => Float32Array, names: string[], order: FeatureOrder): Float32Array[] => names.map((name) => netcVector(t(name), order));
