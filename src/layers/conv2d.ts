// conv2d(filters, kernel:, stride:, padding:) on [height, width, channels] inputs (NHWC, as TF.js).
import type { Initializer } from '../vocabulary/initializers.js';
import { paddingArg, weightedArgs } from './common-args.js';
import type { LayerKind } from './layer-kind.js';
import { spatialOutput } from './spatial.js';

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
};
