// dense(units): y = activation(x · kernel + bias) on the last axis of a flat input [F] or of a sequence
// [T, F] (each step alike, as Keras' Dense on a 3-D input). Shared, one kernel serves every member.
import { Messages } from '../diagnostics/messages.js';
import type { Initializer } from '../vocabulary/initializers.js';
import { weightedArgs } from './common-args.js';
import { fmtShape, type LayerKind } from './layer-kind.js';
import { activate } from '../kernels/activations.js';
import { activateWide } from './activate.js';
import { matMul, matMulOfData } from '../kernels/matmul.js';
import type { Tensor, TF } from '../kernels/tf.js';
import type { ForwardContext, Params } from './forward.js';
import { sharedByFolding } from './widened.js';
import { lastAxisRows, type WasmContext, type WasmRule } from './wasm-rule.js';
import { columnSums, denseForward, denseGradInput, denseGradWeights, type ParamMat } from '../wasm/blocks.js';
import { rowsGradInput, rowsGradWeights, rowsProduct } from '../wasm/tiles.js';
import { applyActivation, applyActivationGrad } from '../wasm/activations.js';
import { kernelActivations, LEAKY_RELU_ALPHA } from '../math/activations.js';
import type { Local } from '../wasm/module.js';
import { weightedLayers } from './reference-rule.js';
import { activationArgOf, biasTensor, selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { denseKernel as denseKernelOf, linearWeight } from '../interop/layout.js';
import { onnxActivated, torchActivation } from '../interop/activation-forms.js';
import { int, onnxLinear } from '../interop/onnx-graph.js';
import { activationOf, denseDinput, denseForwardKernel, denseUpdates, whyNotActivation } from '../wgsl/dense.js';
import { sharedDinput, sharedUpdates, type SharedWriter } from '../wgsl/shared.js';
import type { DenseLayer, WgslLayerRule, Writers } from '../wgsl/rule.js';
import type { WgslKernel } from '../wgsl/kernel-text.js';
import { perCell } from '../wgsl/norm.js';

export const dense: LayerKind = {
  name: 'dense',
  summary: 'fully connected layer on the last axis: activation(x · kernel + bias)',
  args: [{ name: 'units', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true }, ...weightedArgs],
  reads: 'previous',
  shape(ctx) {
    const input = ctx.inputs[0];
    if (input.length !== 1 && input.length !== 2) {
      ctx.error(Messages.InputRank, undefined, 'dense', 'a flat [features] or a sequence [steps, features]', fmtShape(input), '; add flatten() before it');
      return undefined;
    }
    return [...input.slice(0, -1), ctx.args.values.units as number];
  },
  params(args, [input]) {
    const units = args.units as number;
    const kernel = { name: 'kernel', shape: [input[input.length - 1], units], init: args.init as Initializer, trainable: true };
    return args.bias ? [kernel, { name: 'bias', shape: [units], init: args.bias_init as Initializer, trainable: true }] : [kernel];
  },
  widen: { keepsShared: false, kernels: ['kernel'] },
  forward: {
    single: (ctx, x, p) => apply(ctx, x, p, false),
    // [N, B, in] x [N, in, out]; a shared [B, in] input meets all members' kernels side by side in one
    // wide [B, in] x [in, N*out] matMul
    // (a sequence's steps are folded into its rows: [B, T, in] as [B*T, in], and back after)
    grouped(ctx, [x], p) {
      const { tf } = ctx;
      let y;
      if (x.shared) {
        const rows = foldSteps(tf, x.t, 1);
        const wide = (x.data ? matMulOfData : matMul)(tf, rows, p.kernel);
        const [b, nOut] = wide.shape;
        const units = nOut / ctx.members;
        y = tf.transpose(tf.reshape(p.bias ? tf.add(wide, p.bias) : wide, [b, ctx.members, units]), [1, 0, 2]);
        y = unfoldSteps(tf, y, x.t.shape, 1);
      } else {
        // each member's own rows: [N, B, in] x [N, in, out] (data, the members' own inputs, needs no gradient)
        y = (x.data ? matMulOfData : matMul)(tf, foldSteps(tf, x.t, 2), p.kernel);
        if (p.bias) y = tf.add(y, tf.expandDims(p.bias, 1));
        y = unfoldSteps(tf, y, x.t.shape, 2);
      }
      return activateWide(ctx, ctx.attrs.activation as string, { t: y, shared: false });
    },
    // [B, N*in] x [N*in, N*out] (block-diagonal), or a shared [B, in] x [in, N*out]
    blockdiag(ctx, [x], p) {
      const { tf } = ctx;
      const y = (x.data ? matMulOfData : matMul)(tf, foldSteps(tf, x.t, 1), p.kernel);
      const z = unfoldSteps(tf, p.bias ? tf.add(y, p.bias) : y, x.t.shape, 1);
      return activateWide(ctx, ctx.attrs.activation as string, { t: z, shared: false });
    },
    // one [in, out] kernel: on a shared [B, in] input once, on per-member inputs all members' rows at once
    shared: sharedByFolding(apply),
  },
  wasm: denseKernel(),
  reference: { layers: (ctx) => weightedLayers(ctx, (common) => ctx.tf.layers.dense({ units: ctx.args.units as number, ...common })) },
  export: { node: exportNode },
  wgsl: denseWgsl(),
};

/**
 * A PyTorch Linear (an ONNX Gemm, or on a sequence MatMul and Add, which act on the last axis) and its
 * activation; the weight [out, in], its columns in the input's feature order.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [x] = ctx.inputs;
  const inFeatures = x.shape[x.shape.length - 1];
  const outFeatures = ctx.args.units as number;
  const bias = !!ctx.args.bias;
  const act = activationArgOf(ctx.args.activation);
  const self = selfOf(ctx);
  const weight = { name: 'weight', shape: [outFeatures, inFeatures], data: linearWeight(ctx.param(0), inFeatures, outFeatures, x.order) };
  return {
    ...ctx.base,
    act,
    tensors: [weight, ...biasTensor(ctx, 1)],
    torch: {
      init: [`${self} = nn.Linear(${inFeatures}, ${outFeatures}${bias ? '' : ', bias=False'})`],
      forward: ([v]) => torchActivation(act, `${self}(${v})`, ctx.base.shape),
    },
    onnx: ({ g, xs, out, tensors }) => onnxActivated(g, act, ctx.base.shape, out, (name) => (x.shape.length === 1 ? g.op('Gemm', [xs[0], ...tensors()], [int('transB', 1)], name) : onnxLinear(g, xs[0], tensors(), name))),
    params: (t, input) => [denseKernelOf(t('weight'), inFeatures, outFeatures, input.order), ...(bias ? [t('bias')] : [])],
  };
}

/**
 * The WGSL step's dense layer (src/wgsl/dense.ts; a shared one's gradients, and a member's on a shared
 * layer's value, src/wgsl/shared.ts'): forward, its input's gradient, then its kernel's and bias's updates.
 */
function denseWgsl(): WgslLayerRule<DenseLayer> {
  return {
    // its input is [F] or a sequence [T, F] (its shape rule refuses an image), and a sequence input is B*T rows of F as it lies
    whyNot: (op, c) => whyNotActivation(op, c.activations),
    readsImages: true,
    sharedParams: true,
    onShared: 'sums',
    layer(b) {
      const cells = b.base.op.shape.length === 2 ? b.base.op.shape[0] : 1;
      const clipFloats = (b.base.inWidth / cells) * (b.base.width / cells);
      return { ...b.base, ...activationOf(b), family: 'dense', kernel: b.param('kernel'), bias: b.param('bias'), keys: [], clipFloats, order: [0], cells };
    },
    forward: (w, l) => [denseForwardKernel(w.of(l, l.cells), perCell(l, l.cells ?? 1))],
    backward(w, l, [prev]) {
      const cells = l.cells ?? 1;
      const rows = perCell(l, cells);
      const kernels = [];
      // the gradient of the layer's input first: it reads the kernel before its update (a member's layer on a
      // shared layer's value: every member's gradient of it summed, as the op path's one wide product sums it)
      if (prev) kernels.push(prev.op.shared && !l.op.shared ? sharedDinput(sharedRows(w, cells), rows, prev) : denseDinput(w.of(l, cells), rows, prev));
      const update = (which: 'kernel' | 'bias') => (l.kernel?.layout === 'shared' ? sharedUpdates(sharedRows(w, cells), rows, which) : denseUpdates(w.all(cells), rows, which));
      if (l.kernel) kernels.push(...update('kernel'));
      if (l.bias) kernels.push(...update('bias'));
      return kernels;
    },
  };
}

/** The shared layers' writer for B*cells rows (a dense layer on a sequence: B*T rows of F); the step's own for flat values. */
function sharedRows(w: Writers, cells: number): SharedWriter<WgslKernel> {
  if (cells === 1) return w.shared;
  const rows = w.all(cells);
  return { ...w.shared, batch: rows.batch, input: (k, l) => rows.input(k, l, 'i'), dz: (k, l) => rows.dz(k, l as never) };
}

/**
 * The generated step's dense layer, per member: z = x · kernel + bias, then the activation; backward, the
 * gradient through the activation, dkernel = xᵀ dz, dbias = the column sums of dz, dx = dz kernelᵀ.
 */
function denseKernel(): WasmRule {
  // an activation's leaky_relu has TF's fixed slope (a leaky_relu layer's may vary: it reads its hyperparameter)
  const slope = (k: WasmContext) => {
    const alpha = k.code.local('f32');
    k.code.f32(LEAKY_RELU_ALPHA).set(alpha);
    return alpha;
  };
  return {
    whyNot: (attrs) => (kernelActivations.has(attrs.activation as string) ? undefined : `the ${String(attrs.activation)} activation`),
    // a sequence [T, F] is B*T rows of F (lastAxisRows), each step alike
    forward(k) {
      const act = k.attrs.activation as string;
      const r = lastAxisRows(k);
      const z = act === 'linear' ? k.output : k.saved('z', k.output.width);
      // a sequence's B*T rows in register tiles (the same sums; a batch's rows keep denseForward's code)
      const product = r.steps > 1 ? rowsProduct : denseForward;
      product(k.code, r.rows, r.of(k.inputs[0]), r.kernel(k.params.kernel as ParamMat), k.params.bias as Local | undefined, r.of(z));
      if (act !== 'linear') applyActivation(k.code, act, r.rows, r.of(z), r.of(k.output), act === 'leaky_relu' ? slope(k) : undefined);
    },
    backward(k) {
      const act = k.attrs.activation as string;
      const r = lastAxisRows(k);
      const dz = r.of(k.dOutput);
      if (act !== 'linear') applyActivationGrad(k.code, act, r.rows, r.of(k.saved('z', k.output.width)), r.of(k.output), dz, dz, act === 'leaky_relu' ? slope(k) : undefined);
      // the rows are the inner dimension here: its blocks of 48 matter only for more than 48 rows
      const kernel = r.kernel(k.params.kernel as ParamMat);
      const [gradWeights, gradInput] = r.steps > 1 ? [rowsGradWeights, rowsGradInput] : [denseGradWeights, denseGradInput];
      gradWeights(k.code, r.rows, r.of(k.inputs[0]), dz, k.grads.kernel, r.blockedRows(k.params.kernel as ParamMat), k.accumulate);
      if (k.grads.bias) columnSums(k.code, r.rows, dz, k.grads.bias, k.accumulate);
      if (k.dInputs[0]) gradInput(k.code, r.rows, dz, kernel, r.of(k.dInputs[0]), k.saved('kernelT', Math.ceil((kernel.rows * kernel.width) / k.maxBatch)));
    },
  };
}

/** activation(x · kernel + bias) for [rows, in] or [rows, T, in] inputs; `data`: x needs no gradient. */
function apply({ tf, attrs }: ForwardContext, [x]: Tensor[], p: Params, data: boolean): Tensor {
  const y = (data ? matMulOfData : matMul)(tf, foldSteps(tf, x, 1), p.kernel);
  return activate(tf, attrs.activation as string, unfoldSteps(tf, p.bias ? tf.add(y, p.bias) : y, x.shape, 1));
}

/**
 * A sequence's steps folded into its rows: `lead` leading axes kept ([N, B] or [B]), then [B*T, in] where the
 * example is [T, in], so that one product serves every step. A flat example is returned as it is, so that a
 * flat dense runs the very ops it always has.
 */
function foldSteps(tf: TF, x: Tensor, lead: 1 | 2): Tensor {
  if (x.rank === lead + 1) return x;
  const s = x.shape as number[];
  return tf.reshape(x, [...s.slice(0, lead - 1), s[lead - 1] * s[lead], s[s.length - 1]]);
}

/** The rows of foldSteps back as [..., B, T, out], the input being `input` (a flat one's are as they are). */
function unfoldSteps(tf: TF, y: Tensor, input: number[], lead: 1 | 2): Tensor {
  if (input.length === lead + 1) return y;
  return tf.reshape(y, [...y.shape.slice(0, -2), input[lead - 1], input[lead], y.shape[y.rank - 1]]);
}
