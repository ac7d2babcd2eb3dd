// maxpool2d(size) and avgpool2d(size): pooling windows over [height, width, channels]. The stride
// defaults to the window size, as in Keras.
import type { LayerKind } from './layer-kind.js';
import { paddingArg } from './common-args.js';
import { kernelSpatial, spatialOutput } from './spatial.js';
import type { WasmContext, WasmRule } from './wasm-rule.js';
import { avgPoolForward, avgPoolGrad, cropImage, isPadded, maxPoolForward, maxPoolGrad, padImage, paddedHeight, paddedWidth, type Spatial } from '../wasm/conv.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { isPadded as isPaddedExport, isSymmetric, windowPads, type Pads } from '../interop/layout.js';
import { int, ints, onnxPads } from '../interop/onnx-graph.js';
import { pair, padTuple, torchPadding } from '../interop/torch-code.js';
import { selfOf } from './export-rule.js';
import { spatialBackward, spatialForward, spatialLayer, type SpatialLayer } from '../wgsl/conv.js';
import { activationOf } from '../wgsl/dense.js';
import type { WgslLayerRule } from '../wgsl/rule.js';

/** A pool's stride: its own, or its window's size (Keras's default). */
const strideOf = (attrs: Record<string, unknown>): number[] => (attrs.stride as number[] | undefined) ?? (attrs.size as number[]);

/** The pool's window over one example's `input` [H, W, C] to its `output`, as both steps' rules see it. */
const poolWindow = (attrs: Record<string, unknown>, input: number[], output: number[]): Spatial => kernelSpatial(input, attrs.size as number[], strideOf(attrs), attrs.padding as string, output);

function pool(name: 'maxpool2d' | 'avgpool2d', summary: string): LayerKind {
  const apply = ({ tf, attrs }: ForwardContext, x: Tensor): Tensor => {
    const size = attrs.size as [number, number];
    const stride = strideOf(attrs) as [number, number];
    const padding = attrs.padding as 'valid' | 'same';
    return name === 'maxpool2d' ? tf.maxPool(x as never, size, stride, padding) : tf.avgPool(x as never, size, stride, padding);
  };
  return {
    name,
    summary,
    args: [
      { name: 'size', type: { kind: 'pair', min: 1 }, positional: true, default: [2, 2], shapeAffecting: true },
      { name: 'stride', type: { kind: 'pair', min: 1 }, shapeAffecting: true },
      paddingArg,
    ],
    reads: 'previous',
    shape(ctx) {
      const a = ctx.args.values;
      const out = spatialOutput(ctx, name, a.size as number[], strideOf(a), a.padding as string);
      return out && [...out, ctx.inputs[0][2]];
    },
    params: () => [],
    widen: { keepsShared: true },
    forward: {
      single: (ctx, [x]) => apply(ctx, x),
      // pooling never mixes examples, so the members fold into the batch: [N*B, H, W, C]
      grouped(ctx, [x]) {
        if (x.shared) return { t: apply(ctx, x.t), shared: true };
        const [n, b, ...rest] = x.t.shape;
        const y = apply(ctx, ctx.tf.reshape(x.t, [n * b, ...rest]));
        return { t: ctx.tf.reshape(y, [n, b, ...y.shape.slice(1)]), shared: false };
      },
      // nor channels: the folded [B, H, W, N*C] pools as it is
      blockdiag: (ctx, [x]) => ({ t: apply(ctx, x.t), shared: x.shared }),
    },
    wasm: poolKernel(name === 'maxpool2d'),
    reference: {
      layers({ tf, args, name: layer }) {
        const config = { poolSize: args.size as [number, number], strides: strideOf(args) as [number, number], padding: args.padding as 'valid' | 'same', name: layer };
        return [name === 'maxpool2d' ? tf.layers.maxPooling2d(config) : tf.layers.averagePooling2d(config)];
      },
    },
    export: { node: (ctx) => (name === 'maxpool2d' ? maxPoolNode : avgPoolNode)(ctx, windowOf(ctx)) },
    wgsl: poolWgsl(name),
  };
}

/** A pooling window in export's terms: TF's `same` as [top, bottom, left, right] pads. */
function windowOf(ctx: ExportContext): { size: number[]; stride: number[]; pads: Pads } {
  const size = ctx.args.size as number[];
  const stride = strideOf(ctx.args);
  return { size, stride, pads: windowPads(ctx.inputs[0].shape, size, stride, ctx.args.padding as string) };
}

/** nn.MaxPool2d, or over uneven padding an F.max_pool2d of the image padded by -inf; ONNX's MaxPool. */
function maxPoolNode(ctx: ExportContext, { size, stride, pads }: { size: number[]; stride: number[]; pads: Pads }): ExportNode {
  const self = selfOf(ctx);
  const even = isSymmetric(pads);
  return {
    ...ctx.base,
    torch: {
      init: even ? [`${self} = nn.MaxPool2d(${pair(size)}, stride=${pair(stride)}${torchPadding(pads)})`] : [],
      forward: ([x]) => (even ? `${self}(${x})` : `F.max_pool2d(F.pad(${x}, ${padTuple(pads)}, value=float("-inf")), ${pair(size)}, ${pair(stride)})`),
    },
    onnx: ({ g, xs, out }) => g.op('MaxPool', xs.slice(0, 1), [ints('kernel_shape', size), ints('strides', stride), ints('pads', onnxPads(pads))], out),
  };
}

const AVG_POOL_SAME = `

def avg_pool_same(x, pads, kernel_size, stride):
    """Average pooling over TF's \`same\` windows, whose padding is left out of each window's count."""
    total = F.avg_pool2d(F.pad(x, pads), kernel_size, stride)
    count = F.avg_pool2d(F.pad(torch.ones_like(x[:, :1]), pads), kernel_size, stride)
    return total / count
`;

/** nn.AvgPool2d without the padding in its counts, or over uneven padding model.py's avg_pool_same; ONNX's AveragePool. */
function avgPoolNode(ctx: ExportContext, { size, stride, pads }: { size: number[]; stride: number[]; pads: Pads }): ExportNode {
  const self = selfOf(ctx);
  const even = isSymmetric(pads);
  return {
    ...ctx.base,
    torch: {
      init: even ? [`${self} = nn.AvgPool2d(${pair(size)}, stride=${pair(stride)}${isPaddedExport(pads) ? `${torchPadding(pads)}, count_include_pad=False` : ''})`] : [],
      forward: ([x]) => (even ? `${self}(${x})` : `avg_pool_same(${x}, ${padTuple(pads)}, ${pair(size)}, ${pair(stride)})`),
      ...(even ? {} : { helper: AVG_POOL_SAME }),
    },
    onnx: ({ g, xs, out }) => g.op('AveragePool', xs.slice(0, 1), [ints('kernel_shape', size), ints('strides', stride), ints('pads', onnxPads(pads)), int('count_include_pad', 0)], out),
  };
}

/** The WGSL step's pooling (src/wgsl/conv.ts): its forward kernel and its input's gradient, as TF.js's pool and pool-gradient shaders compute them. */
function poolWgsl(name: 'maxpool2d' | 'avgpool2d'): WgslLayerRule<SpatialLayer> {
  return {
    // a pool on a shared layer's value is computed once (its value is every member's); on the input itself not written
    whyNot: (op, c) => (c.inputs[0].op === 'input' ? `${op.name} on the input (the WGSL step pools members' own values and shared layers' values)` : undefined),
    readsImages: true,
    onShared: 'flat',
    layer(b) {
      const input = b.inputs[0].shape;
      const g = poolWindow(b.base.op.attrs, input, b.base.op.shape);
      return spatialLayer({ ...b.base, ...activationOf(b), keys: [], order: [0] }, name, g, input[2]);
    },
    forward: (w, l) => [spatialForward(w.of(l), l)],
    backward: (w, l, [prev]) => spatialBackward(w.of(l), l, prev),
  };
}

/**
 * The generated step's pooling, per member (src/wasm/conv.ts): on the input padded as TF pads it (-Infinity
 * for max, zeros for the mean), the window's maximum or mean; backward, dy scattered onto the padded input,
 * window after window, and the padding cut off.
 */
function poolKernel(max: boolean): WasmRule {
  const parts = (k: WasmContext) => {
    const g = poolWindow(k.attrs, k.inputShapes[0], k.shape);
    const padded = isPadded(g);
    const xs = padded ? k.saved('xpad', paddedHeight(g) * paddedWidth(g) * g.c) : k.inputs[0];
    return { g, padded, xs };
  };
  return {
    whyNot(attrs) {
      const size = attrs.size as number[];
      // XNNPACK sums larger windows in passes of its own
      if (!max && size[0] * size[1] > 9) return 'avgpool2d windows of more than 9 inputs';
      return undefined;
    },
    forward(k) {
      const { g, padded, xs } = parts(k);
      if (padded) padImage(k.code, k.batch, k.inputs[0], g, xs, max ? -Infinity : 0);
      (max ? maxPoolForward : avgPoolForward)(k.code, k.batch, xs, g, k.output);
    },
    backward(k) {
      const dx = k.dInputs[0];
      if (!dx) return;
      const { g, padded, xs } = parts(k);
      const dxs = padded ? k.saved('dxpad', paddedHeight(g) * paddedWidth(g) * g.c) : dx;
      if (max) maxPoolGrad(k.code, k.batch, xs, k.dOutput, g, dxs);
      else avgPoolGrad(k.code, k.batch, k.dOutput, g, dxs);
      if (padded) cropImage(k.code, k.batch, dxs, g, dx);
    },
  };
}

export const maxpool2d = pool('maxpool2d', 'max pooling over [height, width, channels]');
export const avgpool2d = pool('avgpool2d', 'average pooling over [height, width, channels]');
