// Window arithmetic shared by conv2d and pooling: output size for a padding and stride, in TF's rules.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type ShapeContext } from './layer-kind.js';
import type { Shape } from '../core/arg-spec.js';
import { samePadding } from '../kernels/conv.js';
import type { Spatial } from '../wasm/conv.js';

export function windowOutput(size: number, window: number, stride: number, padding: string): number {
  return padding === 'same' ? Math.ceil(size / stride) : Math.floor((size - window) / stride) + 1;
}

/** Checks an [H, W, C] input and returns the output's [H', W'], or undefined after reporting. */
export function spatialOutput(ctx: ShapeContext, what: string, window: number[], stride: number[], padding: string): [number, number] | undefined {
  const input = ctx.inputs[0];
  if (input.length !== 3) {
    ctx.error(Messages.InputRank, undefined, what, 'a spatial [height, width, channels]', fmtShape(input), input.length === 1 ? '; it only applies to images, not flat features' : '');
    return undefined;
  }
  const [h, w] = input;
  if (padding === 'valid' && (window[0] > h || window[1] > w)) {
    ctx.error(Messages.KernelTooLarge, 'kernel' in ctx.args.spans ? 'kernel' : undefined, what, `${window[0]}x${window[1]}`, `${h}x${w}`);
    return undefined;
  }
  const out: [number, number] = [windowOutput(h, window[0], stride[0], padding), windowOutput(w, window[1], stride[1], padding)];
  if (out[0] < 1 || out[1] < 1) {
    ctx.error(Messages.EmptyOutput, undefined, what, fmtShape(out), fmtShape(input));
    return undefined;
  }
  return out;
}

export const product = (s: Shape): number => s.reduce((a, b) => a * b, 1);

/** The window of a conv or pool for the generated step: input [H, W, C], its window, stride and padding (TF's rules), output [oh, ow]. */
export function kernelSpatial(input: number[], window: number[], stride: number[], padding: string, output: number[]): Spatial {
  const [h, w, c] = input;
  const [[pt, pb], [pl, pr]] = padding === 'same' ? [samePadding(h, window[0], stride[0]), samePadding(w, window[1], stride[1])] : [[0, 0], [0, 0]];
  return { h, w, c, kh: window[0], kw: window[1], sh: stride[0], sw: stride[1], oh: output[0], ow: output[1], pt, pb, pl, pr };
}
