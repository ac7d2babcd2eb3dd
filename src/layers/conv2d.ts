// conv2d(filters, kernel:, stride:, padding:) on [height, width, channels] inputs (NHWC, as TF.js).
import type { Initializer } from '../vocabulary/initializers.js';
import { paddingArg, weightedArgs } from './common-args.js';
import type { LayerKind } from './layer-kind.js';
import { spatialOutput } from './spatial.js';
import { activate } from '../kernels/activations.js';
import { conv2d as trainableConv, conv2dOfData, groupedConv2d, type Padding } from '../kernels/conv.js';
import { activateWide } from './activate.js';
import type { Tensor } from '../kernels/tf.js';
import type { ForwardContext, Params } from './forward.js';
import { sharedByFolding } from './widened.js';

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
    // one [kh, kw, C, F] kernel: on a shared input once, on per-member inputs all members' images at once
    shared: sharedByFolding(apply),
  },
};

/** activation(conv(x, kernel) + bias) for [B, H, W, C] inputs; `data`: x needs no gradient. */
function apply({ tf, attrs }: ForwardContext, [x]: Tensor[], p: Params, data: boolean): Tensor {
  const y = (data ? conv2dOfData : trainableConv)(tf, x, p.kernel, attrs.stride as number[], attrs.padding as Padding);
  return activate(tf, attrs.activation as string, p.bias ? tf.add(y, p.bias) : y);
}
