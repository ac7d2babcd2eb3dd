// flatten(): [h, w, c] -> [h*w*c], row-major as TF.js reshapes.
import type { LayerKind } from './layer-kind.js';
import { product } from './spatial.js';

export const flatten: LayerKind = {
  name: 'flatten',
  summary: 'reshape one example to a flat vector',
  args: [],
  reads: 'previous',
  shape: (ctx) => [product(ctx.inputs[0])],
  params: () => [],
};
