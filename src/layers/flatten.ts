// flatten(): [h, w, c] -> [h*w*c], row-major as TF.js reshapes.
import type { LayerKind } from './layer-kind.js';
import { product } from './spatial.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { nchwFlattenOrder } from '../interop/layout.js';
import { int, ints, toChannelsLast } from '../interop/onnx-graph.js';

export const flatten: LayerKind = {
  name: 'flatten',
  summary: 'reshape one example to a flat vector',
  args: [],
  reads: 'previous',
  shape: (ctx) => [product(ctx.inputs[0])],
  params: () => [],
  widen: { keepsShared: true },
  forward: {
    single: ({ tf }, [x]) => tf.reshape(x, [x.shape[0], -1]),
    grouped({ tf }, [x]) {
      const lead = x.shared ? 1 : 2;
      return { t: tf.reshape(x.t, [...x.t.shape.slice(0, lead), -1]), shared: x.shared };
    },
    // each member flattens its own [H, W, C] in row-major order: [B, H*W, N, C] -> [B, N, H*W*C]
    blockdiag({ tf, members: n }, [x]) {
      const [b, ...rest] = x.t.shape;
      if (x.shared || rest.length === 1) return { t: tf.reshape(x.t, [b, -1]), shared: x.shared };
      const c = rest[rest.length - 1] / n;
      const cells = rest.slice(0, -1).reduce((a, d) => a * d, 1);
      return { t: tf.reshape(tf.transpose(tf.reshape(x.t, [b, cells, n, c]), [0, 2, 1, 3]), [b, -1]), shared: false };
    },
  },
  // the generated step keeps a member's example row-major already: flattening moves nothing
  wasm: { alias: true, forward: () => {}, backward: () => {} },
  reference: { layers: ({ tf, name }) => [tf.layers.flatten({ name })] },
  export: { node: exportNode },
  // and so does the WGSL step: the layer after it reads its input as it lies (an image from the batch too)
  wgsl: {
    alias: true,
    readsImages: true,
    onShared: 'flat',
  },
};

/**
 * torch.flatten of the NCHW image, channel after channel: its feature order is absorbed by the weights after
 * it. Where the plan cannot absorb it, channels last: a permute first, and netc's own order.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [x] = ctx.inputs;
  const image = x.layout === 'nchw';
  const last = image && ctx.channelsLast;
  return {
    ...ctx.base,
    order: image && !ctx.channelsLast ? nchwFlattenOrder(x.shape) : x.order,
    torch: { init: [], forward: ([v]) => (last ? `torch.flatten(${v}.permute(0, 2, 3, 1), 1)` : `torch.flatten(${v}, 1)`) },
    onnx: ({ g, xs: [v], out }) => g.op('Flatten', [last ? g.op('Transpose', [v], [ints('perm', toChannelsLast(4))]) : v], [int('axis', 1)], out),
  };
}
