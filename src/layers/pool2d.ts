// maxpool2d(size) and avgpool2d(size): pooling windows over [height, width, channels]. The stride
// defaults to the window size, as in Keras.
import type { LayerKind } from './layer-kind.js';
import { paddingArg } from './common-args.js';
import { spatialOutput } from './spatial.js';
import type { ForwardContext } from './forward.js';
import type { Tensor } from '../kernels/tf.js';

function pool(name: string, summary: string): LayerKind {
  const apply = ({ tf, attrs }: ForwardContext, x: Tensor): Tensor => {
    const size = attrs.size as [number, number];
    const stride = (attrs.stride as [number, number] | undefined) ?? size;
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
      const size = a.size as number[];
      const out = spatialOutput(ctx, name, size, (a.stride as number[] | undefined) ?? size, a.padding as string);
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
  };
}

export const maxpool2d = pool('maxpool2d', 'max pooling over [height, width, channels]');
export const avgpool2d = pool('avgpool2d', 'average pooling over [height, width, channels]');
