// conv2d(filters, kernel:, stride:, padding:) on [height, width, channels] inputs (NHWC, as TF.js).
import type { Initializer } from '../vocabulary/initializers.js';
import { paddingArg, weightedArgs } from './common-args.js';
import type { LayerKind } from './layer-kind.js';
import { kernelSpatial, spatialOutput } from './spatial.js';
import { activate } from '../kernels/activations.js';
import { conv2d as trainableConv, conv2dOfData, conv2dOfRows, groupedConv2d, type Padding } from '../kernels/conv.js';
import { activateWide } from './activate.js';
import type { Tensor } from '../kernels/tf.js';
import type { ForwardContext, Params } from './forward.js';
import { sharedByFolding } from './widened.js';
import type { WasmContext, WasmRule } from './wasm-rule.js';
import { columnSums, type Mat, type ParamMat } from '../wasm/blocks.js';
import { applyActivation, applyActivationGrad } from '../wasm/activations.js';
import { kernelActivations, LEAKY_RELU_ALPHA } from '../math/activations.js';
import { convGradInput, cropImage, isPadded, padImage, paddedHeight, paddedWidth, rowsOf, transposeKernel, type Spatial } from '../wasm/conv.js';
import { convForwardDirect, convGradInputDirect, convGradWeightsDirect, padKernelRows, paddedGradSpatial, transposeKernelPadded } from '../wasm/conv-direct.js';
import { paddedRow } from '../wasm/vectors.js';
import type { Local } from '../wasm/module.js';
import { weightedLayers } from './reference-rule.js';
import { activationArgOf, biasTensor, selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { convKernel as convKernelOf, convWeight, isSymmetric, windowPads } from '../interop/layout.js';
import { onnxActivated, torchActivation } from '../interop/activation-forms.js';
import { ints, onnxPads } from '../interop/onnx-graph.js';
import { pair, padTuple, torchPadding } from '../interop/torch-code.js';
import { spatialBackward, spatialForward, spatialLayer, type SpatialLayer } from '../wgsl/conv.js';
import { activationOf, softmaxCells, whyNotActivation } from '../wgsl/dense.js';
import type { WgslLayerRule } from '../wgsl/rule.js';

export const conv2d: LayerKind = {
  name: 'conv2d',
  summary: '2-D convolution over [height, width, channels]',
  args: [
    { name: 'filters', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true },
    { name: 'kernel', type: { kind: 'pair', min: 1 }, default: [3, 3], shapeAffecting: true },
    { name: 'stride', type: { kind: 'pair', min: 1 }, default: [1, 1], shapeAffecting: true },
    paddingArg,
    ...weightedArgs,
  ],
  reads: 'previous',
  shape(ctx) {
    const a = ctx.args.values;
    const out = spatialOutput(ctx, 'conv2d', a.kernel as number[], a.stride as number[], a.padding as string);
    return out && [...out, a.filters as number];
  },
  params(args, [input]) {
    const [kh, kw] = args.kernel as number[];
    const filters = args.filters as number;
    const kernel = { name: 'kernel', shape: [kh, kw, input[2], filters], init: args.init as Initializer, trainable: true };
    return args.bias ? [kernel, { name: 'bias', shape: [filters], init: args.bias_init as Initializer, trainable: true }] : [kernel];
  },
  widen: { keepsShared: false, kernels: ['kernel'] },
  forward: {
    single: (ctx, x, p) => apply(ctx, x, p, false),
    grouped(ctx, [x], p) {
      const { tf, attrs, members: n } = ctx;
      const stride = attrs.stride as number[];
      const padding = attrs.padding as Padding;
      let y;
      if (x.shared) {
        // one conv for all members: their kernels side by side as N*F output channels, [kh, kw, C, N*F]
        const f = (p.kernel.shape[3] as number) / n;
        let out = (x.data ? conv2dOfData : trainableConv)(tf, x.t, p.kernel, stride, padding);
        if (p.bias) out = tf.add(out, p.bias);
        const [b, oh, ow] = out.shape;
        y = tf.reshape(tf.transpose(tf.reshape(out, [b, oh * ow, n, f]), [2, 0, 1, 3]), [n, b, oh, ow, f]);
      } else {
        // TF.js has no grouped conv: one conv per member, each on its own input and kernel
        const f = p.kernel.shape[4] as number;
        y = groupedConv2d(tf, x.t, p.kernel, stride, padding);
        if (p.bias) y = tf.add(y, tf.reshape(p.bias, [n, 1, 1, 1, f]));
      }
      return activateWide(ctx, attrs.activation as string, { t: y, shared: false });
    },
    // channels folded: [B, H, W, N*C] with a block-diagonal [kh, kw, N*C, N*F] kernel (or [kh, kw, C, N*F])
    blockdiag(ctx, [x], p) {
      const { tf, attrs } = ctx;
      const conv = x.data ? conv2dOfData : trainableConv;
      const y = conv(tf, x.t, p.kernel, attrs.stride as number[], attrs.padding as Padding);
      return activateWide(ctx, attrs.activation as string, { t: p.bias ? tf.add(y, p.bias) : y, shared: false });
    },
    // one [kh, kw, C, F] kernel: on a shared input once, on per-member inputs all members' images at once;
    // its dW always by patches, rows in order (member after member where they are folded)
    shared: sharedByFolding((ctx, x, p, data) => apply(ctx, x, p, data, conv2dOfRows)),
  },
  wasm: convKernel(),
  reference: {
    layers: (ctx) =>
      weightedLayers(ctx, (common) =>
        ctx.tf.layers.conv2d({ filters: ctx.args.filters as number, kernelSize: ctx.args.kernel as number[], strides: ctx.args.stride as number[], padding: ctx.args.padding as 'valid' | 'same', ...common }),
      ),
  },
  export: { node: exportNode },
  wgsl: convWgsl(),
};

/**
 * A PyTorch Conv2d (an ONNX Conv) and its activation on the NCHW image; the weight [out, in, kh, kw]. TF's
 * `same` padding where it is uneven is an F.pad before the Conv2d (ONNX's pads say it as they are).
 */
function exportNode(ctx: ExportContext): ExportNode {
  const a = ctx.args;
  const [x] = ctx.inputs;
  const kernel = a.kernel as number[];
  const shape = [kernel[0], kernel[1], x.shape[2], a.filters as number];
  const weight = { name: 'weight', shape: [shape[3], shape[2], shape[0], shape[1]], data: convWeight(ctx.param(0), shape) };
  const stride = a.stride as number[];
  const pads = windowPads(x.shape, kernel, stride, a.padding as string);
  const bias = !!a.bias;
  const act = activationArgOf(a.activation);
  const self = selfOf(ctx);
  const padding = isSymmetric(pads) ? torchPadding(pads) : '';
  return {
    ...ctx.base,
    act,
    tensors: [weight, ...biasTensor(ctx, 1)],
    torch: {
      init: [`${self} = nn.Conv2d(${shape[2]}, ${shape[3]}, kernel_size=${pair(kernel)}, stride=${pair(stride)}${padding}${bias ? '' : ', bias=False'})`],
      forward: ([v]) => torchActivation(act, `${self}(${isSymmetric(pads) ? v : `F.pad(${v}, ${padTuple(pads)})`})`, ctx.base.shape),
    },
    onnx({ g, xs, out, tensors }) {
      const attrs = [ints('kernel_shape', kernel), ints('strides', stride), ints('pads', onnxPads(pads))];
      return onnxActivated(g, act, ctx.base.shape, out, (name) => g.op('Conv', [xs[0], ...tensors()], attrs, name));
    },
    params: (t) => [convKernelOf(t('weight'), shape), ...(bias ? [t('bias')] : [])],
  };
}

/** The conv's window over one example's `input` [H, W, C] to its `output`, as both steps' rules see it. */
function convWindow(attrs: Record<string, unknown>, input: number[], output: number[]): Spatial {
  return kernelSpatial(input, attrs.kernel as number[], attrs.stride as number[], attrs.padding as string, output);
}

/**
 * The generated step's conv2d, per member (src/wasm/conv.ts says whose order each sum follows, and
 * src/wasm/conv-direct.ts how the loops keep it): the input padded as the op path pads it, z = the conv of
 * it with the kernel (its rows padded to whole vectors) + bias, then the activation; backward, the
 * gradient through the activation, dbias = the sums of dz over (example, row, column), dkernel from the
 * padded input and dz, and dx gathered from dz padded by the kernel's size (stride 1; other strides
 * scatter dz through the kernel).
 */
function convKernel(): WasmRule {
  const slope = (k: WasmContext) => {
    const alpha = k.code.local('f32');
    k.code.f32(LEAKY_RELU_ALPHA).set(alpha);
    return alpha;
  };
  const parts = (k: WasmContext) => {
    const g = convWindow(k.attrs, k.inputShapes[0], k.shape);
    const f = k.attrs.filters as number;
    const cells = g.oh * g.ow;
    const depth = g.kh * g.kw * g.c;
    const padded = isPadded(g);
    const xs = padded ? k.saved('xpad', paddedHeight(g) * paddedWidth(g) * g.c) : k.inputs[0];
    const act = k.attrs.activation as string;
    const z: Mat = { ...(act === 'linear' ? k.output : k.saved('z', k.output.width)), width: f };
    const out: Mat = { ...k.output, width: f };
    // scratch of a few rows of the batch's size: the kernel with its rows padded, or transposed
    const scratch = (name: string, floats: number) => k.saved(name, Math.ceil(floats / k.maxBatch));
    return { g, f, cells, depth, padded, xs, act, z, out, scratch, kernel: { ...(k.params.kernel as ParamMat), blocked: false } };
  };
  return {
    whyNot(attrs, inputs) {
      if (!kernelActivations.has(attrs.activation as string)) return `the ${String(attrs.activation)} activation`;
      // one filter on one channel, XNNPACK convolves depthwise, in an order of its own (as the filter
      // gradient of a one-example batch, whose dilated conv has one input and one output channel: a short
      // last batch of one differs from the op path in the last bits of that step's gradient). Measured on
      // 12x12 images: 2x2, 3x3 and 5x5 kernels (4, 9, 25 taps) sum the taps column by column (column
      // outer, row inner), every output alike; 4x4 and 7x7 kernels the ordinary way, row by row. The first
      // conv on the shared data has N*F output channels, so it convolves depthwise at N=1 only
      if ((attrs.filters as number) === 1 && inputs[0][2] === 1) return 'conv2d with one filter on one channel';
      return undefined;
    },
    forward(k) {
      const { g, f, depth, padded, xs, act, z, out, kernel, cells, scratch } = parts(k);
      if (padded) padImage(k.code, k.batch, k.inputs[0], g, xs, 0);
      const wp: Mat = { ...scratch('kernelPadded', depth * paddedRow(f)), width: paddedRow(f) };
      padKernelRows(k.code, kernel, wp);
      convForwardDirect(k.code, k.batch, xs, g, wp, k.params.bias as Local | undefined, f, z);
      const rows = rowsOf(k.code, k.batch, cells);
      if (act !== 'linear') applyActivation(k.code, act, rows, z, out, act === 'leaky_relu' ? slope(k) : undefined);
    },
    backward(k) {
      const { g, f, cells, padded, xs, act, z, out, kernel, scratch } = parts(k);
      const rows = rowsOf(k.code, k.batch, cells);
      const dz: Mat = { ...k.dOutput, width: f };
      if (act !== 'linear') applyActivationGrad(k.code, act, rows, z, out, dz, dz, act === 'leaky_relu' ? slope(k) : undefined);
      if (k.grads.bias) columnSums(k.code, rows, dz, k.grads.bias, k.accumulate);
      // a columns kernel meets the shared data in one product of the patches with dy (rows in order), and a
      // shared kernel all members' rows (member after member, each added on); a member's own input, in a
      // dilated conv (over the output's cells, then the examples)
      const order = k.accumulate || (kernel.stride === undefined && !k.dInputs[0]) ? 'rows' : 'cells';
      convGradWeightsDirect(k.code, k.batch, xs, dz, g, f, order, k.grads.kernel, k.accumulate);
      const dx = k.dInputs[0];
      if (!dx) return;
      if (g.sh === 1 && g.sw === 1) {
        const pg = paddedGradSpatial(g, f);
        const dzp = k.saved('dzpad', paddedHeight(pg) * paddedWidth(pg) * f);
        padImage(k.code, k.batch, { ...dz, width: cells * f }, pg, dzp, 0);
        const wt = scratch('kernelT', g.kh * g.kw * f * paddedRow(g.c));
        transposeKernelPadded(k.code, kernel, g.kh * g.kw, g.c, wt);
        convGradInputDirect(k.code, k.batch, dzp, g, wt, f, dx);
        return;
      }
      const wt = scratch('kernelT', g.kh * g.kw * g.c * f);
      transposeKernel(k.code, kernel, g.kh * g.kw, g.c, wt);
      const dxs = padded ? k.saved('dxpad', paddedHeight(g) * paddedWidth(g) * g.c) : dx;
      convGradInput(k.code, k.batch, dz, wt, g, f, dxs);
      if (padded) cropImage(k.code, k.batch, dxs, g, dx);
    },
  };
}

/** activation(conv(x, kernel) + bias) for [B, H, W, C] inputs; `data`: x needs no gradient; `trainable`: the conv otherwise. */
function apply({ tf, attrs }: ForwardContext, [x]: Tensor[], p: Params, data: boolean, trainable = trainableConv): Tensor {
  const y = (data ? conv2dOfData : trainable)(tf, x, p.kernel, attrs.stride as number[], attrs.padding as Padding);
  return activate(tf, attrs.activation as string, p.bias ? tf.add(y, p.bias) : y);
}

/**
 * The WGSL step's conv2d (src/wgsl/conv.ts; a shared one's parameters stepped by src/wgsl/shared.ts): its
 * forward kernel (softmax over a cell's channels a second one, src/wgsl/dense.ts), its input's gradient,
 * its kernel's and bias's updates.
 */
function convWgsl(): WgslLayerRule<SpatialLayer> {
  return {
    // softmax over a conv's channels: its z here, then the step's softmax kernel on B*H*W rows of F (see spatialForward)
    whyNot: (op, c) => whyNotActivation(op, c.activations),
    readsImages: true,
    sharedParams: true,
    onShared: 'sums',
    layer(b) {
      const a = b.base.op.attrs;
      const g = convWindow(a, b.inputs[0].shape, b.base.op.shape);
      const own = { ...b.base, ...activationOf(b), kernel: b.param('kernel'), bias: b.param('bias'), keys: [], order: [0] };
      return spatialLayer(own, 'conv2d', g, a.filters as number);
    },
    // softmax: z here, normalised over each cell's F channels by the kernel after it
    forward: (w, l) => (l.activation === 'softmax' ? [spatialForward(w.of(l), l), softmaxCells(w.of(l), l)] : [spatialForward(w.of(l), l)]),
    backward: (w, l, [prev]) => spatialBackward(w.of(l), l, prev),
  };
}
