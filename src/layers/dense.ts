// dense(units): y = activation(x · kernel + bias) on a flat input.
import { Messages } from '../diagnostics/messages.js';
import type { Initializer } from '../vocabulary/initializers.js';
import { weightedArgs } from './common-args.js';
import { fmtShape, type LayerKind } from './layer-kind.js';

export const dense: LayerKind = {
  name: 'dense',
  summary: 'fully connected layer on a flat input: activation(x · kernel + bias)',
  args: [{ name: 'units', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true }, ...weightedArgs],
  reads: 'previous',
  shape(ctx) {
    const input = ctx.inputs[0];
    if (input.length !== 1) {
      ctx.error(Messages.InputRank, undefined, 'dense', 'a flat [features]', fmtShape(input), '; add flatten() before it');
      return undefined;
    }
    return [ctx.args.values.units as number];
  },
  params(args, [input]) {
    const units = args.units as number;
    const kernel = { name: 'kernel', shape: [input[0], units], init: args.init as Initializer, trainable: true };
    return args.bias ? [kernel, { name: 'bias', shape: [units], init: args.bias_init as Initializer, trainable: true }] : [kernel];
  },
};
