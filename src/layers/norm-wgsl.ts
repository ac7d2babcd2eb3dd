// The WGSL rule dropout, layernorm and batchnorm share (src/wgsl/norm.ts writes their kernels): the kind's name
// picks its kernels, and an image's norm is the flat rule on B*H*W rows of its channels.
import { normBackward, normForward, normLayer, perCell, whyNotNorm, type Norm, type NormLayer } from '../wgsl/norm.js';
import type { WgslLayerRule } from '../wgsl/rule.js';

/** The norm `kind`'s WGSL rule; `sharedParams`: a shared one's parameters are stepped once (layernorm's). */
export function normWgsl(kind: Norm, sharedParams = false): WgslLayerRule<NormLayer> {
  return {
    whyNot: (op) => whyNotNorm(kind, op),
    ...(sharedParams ? { sharedParams: true } : {}),
    onShared: 'flat',
    layer: (b) => normLayer(b, kind),
    forward: (w, l, training) => normForward(w.of(l, l.cells), perCell(l, l.cells), training),
    backward: (w, l, [prev]) => normBackward(w.of(l, l.cells), perCell(l, l.cells), prev),
  };
}
