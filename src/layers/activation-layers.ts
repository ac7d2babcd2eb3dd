// relu(), sigmoid(), tanh(), softmax(), ...: one stand-alone layer per activation function, every rule of
// every one of them made here, from the activation's name.
import { activations } from '../vocabulary/activations.js';
import type { LayerKind, Rule } from './layer-kind.js';
import { activate } from '../kernels/activations.js';
import { activateWide } from './activate.js';
import { blockMembers, groupedMembers, groupedVector } from './widened.js';
import { blockVector } from '../kernels/block-vector.js';
import { applyActivation, applyActivationGrad } from '../wasm/activations.js';
import { kernelActivations } from '../math/activations.js';
import type { WasmContext, WasmRule } from './wasm-rule.js';
import { hasTfActivation, type ReferenceRule } from './reference-rule.js';
import type { ExportRule } from '../interop/export-node.js';
import { onnxActivation, torchActivation, type Act } from '../interop/activation-forms.js';
import { kwargName } from '../interop/torch-code.js';
import { activationBackward, activationForward } from '../wgsl/dense.js';
import type { DenseLayer, WgslLayerRule } from '../wgsl/rule.js';

export const activationLayers: LayerKind[] = activations.filter((a) => a !== 'linear').map(activationLayer);

function activationLayer(name: string): LayerKind {
  return {
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
    wasm: wasmRule(name),
    reference: referenceRule(name),
    export: exportRule(name),
    wgsl: activationWgsl(name),
  };
}

/** The generated step: the activation over the member's [B, width], and its gradient. */
function wasmRule(name: string): Rule<WasmRule> {
  if (!kernelActivations.has(name)) return { unsupported: `the ${name} layer` };
  const alpha = name === 'leaky_relu' ? (k: WasmContext) => k.hyper('alpha') : () => undefined;
  return {
    // softmax runs over the last axis: the generated one over the member's whole row
    whyNot: (_, [input]) => (name === 'softmax' && input.length > 1 ? 'the softmax layer of an input with more than one axis' : undefined),
    forward: (k) => applyActivation(k.code, name, k.batch, k.inputs[0], k.output, alpha(k)),
    backward(k) {
      if (k.dInputs[0]) applyActivationGrad(k.code, name, k.batch, k.inputs[0], k.output, k.dOutput, k.dInputs[0], alpha(k));
    },
  };
}

/** tfjs-layers' Activation layer, or its LeakyReLU with the member's alpha. */
function referenceRule(name: string): Rule<ReferenceRule> {
  if (name === 'leaky_relu') return { layers: ({ tf, args, name: layer }) => [tf.layers.leakyReLU({ alpha: args.alpha as number, name: layer })] };
  if (!hasTfActivation(name)) return { unsupported: `tfjs-layers has no '${name}' activation` };
  return { layers: ({ tf, name: layer }) => [tf.layers.activation({ activation: name as never, name: layer })] };
}

/** The activation's PyTorch expression and ONNX nodes; leaky_relu's slope is the constructor's keyword argument. */
function exportRule(name: string): ExportRule {
  return {
    node(ctx) {
      const leaky = name === 'leaky_relu';
      const act: Act = leaky ? { name, alpha: ctx.args.alpha as number } : { name };
      const kw = kwargName(ctx.base, 'alpha');
      return {
        ...ctx.base,
        act,
        order: ctx.inputs[0].order,
        torch: { init: leaky ? [`self.${kw} = ${kw}`] : [], forward: ([x]) => torchActivation(act, x, ctx.base.shape, leaky ? `self.${kw}` : undefined) },
        onnx: ({ g, xs, out }) => onnxActivation(g, act, xs[0], ctx.base.shape, out),
      };
    },
  };
}

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
