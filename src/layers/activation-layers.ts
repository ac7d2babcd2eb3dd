// relu(), sigmoid(), tanh(), softmax(), ...: one stand-alone layer per activation function.
import { activations } from '../vocabulary/activations.js';
import type { LayerKind } from './layer-kind.js';
import { activate } from '../kernels/activations.js';
import { activateWide } from './activate.js';
import { blockMembers, groupedMembers, groupedVector } from './widened.js';
import { blockVector } from '../kernels/block-vector.js';
import { applyActivation, applyActivationGrad, kernelActivations } from '../wasm/activations.js';
import { activationBackward, activationForward } from '../wgsl/dense.js';
import type { DenseLayer, WgslLayerRule } from '../wgsl/rule.js';

export const activationLayers: LayerKind[] = activations
  .filter((a) => a !== 'linear')
  .map((name) => ({
    name,
    summary: `the ${name} activation as a layer`,
    args: name === 'leaky_relu' ? [{ name: 'alpha', type: { kind: 'number', min: 0 }, positional: true, default: 0.2, hyper: true }] : [],
    reads: 'previous' as const,
    shape: (ctx) => ctx.inputs[0],
    params: () => [],
    // leaky_relu's alpha may differ per member, so its output is per member
    widen: { keepsShared: name !== 'leaky_relu' },
    forward: {
      single: ({ tf, hyper }, [x]) => activate(tf, name, x, name === 'leaky_relu' ? hyper('alpha')[0] : undefined),
      grouped(ctx, [x]) {
        if (name !== 'leaky_relu') return activateWide(ctx, name, x);
        const t = groupedMembers(ctx, x);
        return activateWide(ctx, name, { t, shared: false }, groupedVector(ctx.tf, ctx.hyper('alpha'), t.rank));
      },
      blockdiag(ctx, [x]) {
        if (name !== 'leaky_relu') return activateWide(ctx, name, x);
        const t = blockMembers(ctx, x);
        return activateWide(ctx, name, { t, shared: false }, blockVector(ctx.tf, ctx.hyper('alpha'), t.shape[t.rank - 1] / ctx.members));
      },
    },
    // the generated step: the activation over the member's [B, width], and its gradient
    kernel: {
      // softmax runs over the last axis: the generated one over the member's whole row
      unsupported: (_, [input]) => (!kernelActivations.has(name) ? `the ${name} layer` : name === 'softmax' && input.length > 1 ? 'the softmax layer of an input with more than one axis' : undefined),
      forward: (k) => applyActivation(k.code, name, k.batch, k.inputs[0], k.output, name === 'leaky_relu' ? k.hyper('alpha') : undefined),
      backward(k) {
        if (k.dInputs[0]) applyActivationGrad(k.code, name, k.batch, k.inputs[0], k.output, k.dOutput, k.dInputs[0], name === 'leaky_relu' ? k.hyper('alpha') : undefined);
      },
    },
    wgsl: activationWgsl(name),
  }));

/** The WGSL step's activation layer (src/wgsl/dense.ts): a forward kernel and a dinput kernel of its own, elementwise (softmax's per row). */
function activationWgsl(name: string): WgslLayerRule<DenseLayer> {
  return {
    whyNot(op, c) {
      if (!c.activations.has(name)) return `the ${name} layer`;
      // on the shared input it computes one value for every member: not written (on a shared layer's value it is, once)
      if (op.shared && c.onInput) return `the ${name} layer ${op.name} on the shared input`;
      // softmax() is a row of its own along the last axis: written for a flat layer only
      if (name === 'softmax' && op.shape.length !== 1) return `the softmax layer ${op.name} on values of shape [${op.shape.join(', ')}]`;
      return undefined;
    },
    onShared: 'flat',
    layer(b) {
      // leaky_relu's slope may differ per member: its own row of `hyper`
      const keys = name === 'leaky_relu' ? [`${b.base.op.name}.alpha`] : [];
      return { ...b.base, family: 'activation', activation: name, alpha: keys.length ? { key: keys[0] } : undefined, keys, clipFloats: 0, order: [0] };
    },
    forward: (w, l) => [activationForward(w.of(l), l)],
    backward: (w, l, [prev]) => (prev ? [activationBackward(w.of(l), l, prev)] : []),
  };
}
