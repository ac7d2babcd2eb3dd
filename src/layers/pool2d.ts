// maxpool2d(size) and avgpool2d(size): pooling windows over [height, width, channels]. The stride
// defaults to the window size, as in Keras.
import type { LayerKind } from './layer-kind.js';
import { paddingArg } from './common-args.js';
import { spatialOutput } from './spatial.js';

function pool(name: string, summary: string): LayerKind {
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
  };
}

export const maxpool2d = pool('maxpool2d', 'max pooling over [height, width, channels]');
export const avgpool2d = pool('avgpool2d', 'average pooling over [height, width, channels]');
