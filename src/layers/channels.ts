// Normalisation kernels on images: a member's [B, H, W, C] values, contiguous rows of H*W*C floats, are
// the same memory as B*H*W rows of C (the pixels in order, example after example). batchnorm's statistics
// per channel over (example, row, column) are then the flat rule on those rows, summed in the op path's
// order: TF.js reduces over the (example, row, column) axes with the channel moved first, one run over
// them in that order (and so sums its gradients of gamma and beta).
import type { WasmBackwardContext, WasmContext } from './wasm-rule.js';
import type { Mat } from '../wasm/blocks.js';
import { rowsOf } from '../wasm/conv.js';

const product = (s: number[]) => s.reduce((a, b) => a * b, 1);

/**
 * The layer's context seen per pixel: `batch` the B*H*W rows, every value and gradient [rows, C], and
 * `saved` buffers of that many rows (a flat input, [C], is its own view).
 */
export function perPixel<K extends WasmContext | WasmBackwardContext>(k: K): K {
  const cells = product(k.shape.slice(0, -1));
  if (cells === 1) return k;
  const c = k.shape[k.shape.length - 1];
  const view = (m: Mat): Mat => ({ ...m, width: c });
  const out: WasmContext = {
    ...k,
    batch: rowsOf(k.code, k.batch, cells),
    maxBatch: k.maxBatch * cells,
    inputs: k.inputs.map(view),
    inputShapes: k.inputShapes.map(() => [c]),
    shape: [c],
    output: view(k.output),
    saved: (name, width) => ({ ...k.saved(name, width * cells), width }),
  };
  if (!('dOutput' in k)) return out as K;
  return { ...out, dOutput: view(k.dOutput), dInputs: k.dInputs.map((d) => d && view(d)) } as K;
}
