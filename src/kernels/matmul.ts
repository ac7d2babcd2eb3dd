// matMul with gradients that never use the transposed-operand forms of BatchMatMul: on the wasm
// backend `matMul(a, b, true, false)` runs about 2.5x slower than transposing `a` first and multiplying
// plainly (measured on [784, 64] x [64, 1024]; see bench/NOTES.md). Same values, cheaper backward.
//
// A rank-3 product [N, B, I] x [N, I, O] of large members runs as N plain 2-D products: the wasm
// backend multiplies a batch of matrices (batch > 1) with a scalar loop, but a single matrix with
// XNNPACK, ~10x faster ([30, 64, 400] x [30, 400, 120]: 55 ms batched, 5 ms as 30 products).
import type { TF, Tensor } from './tf.js';
import { kernel } from './kernel.js';

type GradFunc = Parameters<TF['customGrad']>[0];

/** Swaps the last two axes. */
function swap(tf: TF, t: Tensor): Tensor {
  const perm = t.shape.map((_, i) => i);
  [perm[t.rank - 2], perm[t.rank - 1]] = [perm[t.rank - 1], perm[t.rank - 2]];
  return tf.transpose(t, perm);
}

/**
 * Multiply-adds per member above which a rank-3 product runs member by member on wasm. Below it the
 * batched kernel's fixed cost wins (the forum's [1000, 5, 20] x [1000, 20, 1]: 0.9 ms batched, 8 ms as
 * 1000 products); above it XNNPACK does (a 2-D product costs ~8 us plus 0.06 ns per multiply-add, the
 * batched loop ~0.6 ns per multiply-add).
 */
export const PER_MEMBER_MACS = 32768;

/**
 * Whether [N, M, K] x [N, K, P] should run as N 2-D products here. Decided by the members' own sizes,
 * never by N, so that a member is multiplied the same way in a population of any size.
 */
function perMember(tf: TF, a: Tensor, b: Tensor): boolean {
  if (a.rank !== 3 || b.rank !== 3 || a.shape[0] !== b.shape[0]) return false;
  if (tf.getBackend() !== 'wasm') return false;
  const [, m, k] = a.shape as number[];
  return m * k * (b.shape[2] as number) >= PER_MEMBER_MACS;
}

/**
 * [N, M, K] x [N, K, P] with the batched kernel, also for N = 1: wasm hands a batch of one to XNNPACK,
 * which sums in another order than its loop over a batch (blocks of 48 along K), so a member alone would
 * train differently than beside others. A lone member's product is below PER_MEMBER_MACS, so running
 * it as a batch of two (itself twice) costs microseconds.
 */
function batchedProduct(tf: TF, a: Tensor, b: Tensor): Tensor {
  if (tf.getBackend() !== 'wasm' || a.rank !== 3 || a.shape[0] !== 1 || b.shape[0] !== 1) return tf.matMul(a, b);
  const twice = tf.matMul(tf.concat([a, a]), tf.concat([b, b]));
  return tf.slice(twice, [0, 0, 0], [1, ...twice.shape.slice(1)]);
}

/** a [N, M, K] x b [N, K, P] as N 2-D products, stacked. */
function productsByMember(tf: TF, a: Tensor, b: Tensor): Tensor {
  const as = memberSlices(tf, a);
  const bs = memberSlices(tf, b);
  return tf.stack(as.map((ai, i) => tf.matMul(ai, bs[i])));
}

/**
 * a x b with the batched kernel, or member by member where that is faster. With an inner dimension of 1
 * the product is an outer product, a broadcast multiply: the same single product per element, without
 * the batched kernel's cost (the forum's [1000, 5, 1] x [1000, 1, 20] input gradient: 380 us as a
 * BatchMatMul, 60 us as a Multiply).
 */
function plainProduct(tf: TF, a: Tensor, b: Tensor): Tensor {
  if (a.shape[a.rank - 1] === 1 && b.shape[b.rank - 2] === 1 && a.rank === b.rank) return tf.mul(a, b);
  return perMember(tf, a, b) ? productsByMember(tf, a, b) : batchedProduct(tf, a, b);
}

/** a [..., M, K] x b [..., K, N] with the same leading axes, differentiable in both. */
function matMulKernel(tf: TF, a: Tensor, b: Tensor): Tensor {
  const f = tf.customGrad(((x: Tensor, w: Tensor, save: (ts: Tensor[]) => void) => {
    save([x, w]);
    return {
      value: plainProduct(tf, x, w),
      gradFunc: (dy: Tensor, [xs, ws]: Tensor[]) => [plainProduct(tf, dy, swap(tf, ws)), plainProduct(tf, swap(tf, xs), dy)],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (x: Tensor, w: Tensor) => Tensor)(a, b);
}

/** a x b where a is data: only b gets a gradient (the first layer's input needs none). */
function matMulOfDataKernel(tf: TF, a: Tensor, b: Tensor): Tensor {
  const f = tf.customGrad(((w: Tensor, save: (ts: Tensor[]) => void) => {
    // the transposed data is made and saved inside, so it lives until the backward pass
    const at = swap(tf, a);
    save([at]);
    return { value: plainProduct(tf, a, w), gradFunc: (dy: Tensor, [ats]: Tensor[]) => [plainProduct(tf, ats, dy)] };
  }) as unknown as GradFunc);
  return (f as unknown as (w: Tensor) => Tensor)(b);
}

// ---- member slices ------------------------------------------------------------------------------------

/** The parts of the wasm backend that copying a member out of its heap needs. */
interface WasmHeap {
  dataIdMap: { has(dataId: object): boolean };
  makeOutput(shape: number[], dtype: string): { dataId: object; shape: number[]; dtype: string };
  typedArrayFromHeap(info: { dataId: object; shape: number[]; dtype: string }): Float32Array;
}

/** The wasm backend's heap, where a direct copy is possible (float32 tensors that live there). */
export function wasmHeap(tf: TF, ts: Tensor[]): WasmHeap | undefined {
  if (tf.getBackend() !== 'wasm') return undefined;
  const backend = tf.backend() as unknown as Partial<WasmHeap>;
  if (typeof backend.makeOutput !== 'function' || typeof backend.typedArrayFromHeap !== 'function' || !backend.dataIdMap) return undefined;
  return ts.every((t) => t.dtype === 'float32' && backend.dataIdMap!.has(t.dataId)) ? (backend as WasmHeap) : undefined;
}

/** Copies consecutive runs of `source`'s elements into new tensors of the given shapes, heap to heap. */
function heapPieces(tf: TF, heap: WasmHeap, source: Tensor, shapes: number[][]): Tensor[] {
  const whole = { dataId: source.dataId, shape: [source.size], dtype: 'float32' };
  const engine = tf.engine();
  let offset = 0;
  return shapes.map((shape) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const out = heap.makeOutput(shape, 'float32');
    // views are taken after the allocation, which may have grown (and so moved) the heap
    heap.typedArrayFromHeap(out).set(heap.typedArrayFromHeap(whole).subarray(offset, offset + size));
    offset += size;
    return engine.makeTensorFromTensorInfo(out as never) as Tensor;
  });
}

/**
 * x [N, ...] as N tensors [...], each a copy of one member. Not differentiable: for use inside a
 * customGrad's forward and gradient functions. On wasm, TF.js's Slice/Unpack kernels copy the *whole*
 * input out of the heap for every slice they take (readSync), so unstacking N members costs N copies of
 * all of them (100 ms at LeNet's N=30); here each member is copied once, straight from heap to heap.
 */
export function memberSlices(tf: TF, x: Tensor): Tensor[] {
  const n = x.shape[0];
  const shape = x.shape.slice(1);
  if (n === 1) return [tf.reshape(x, shape)];
  const heap = wasmHeap(tf, [x]);
  return heap ? heapPieces(tf, heap, x, new Array(n).fill(shape)) : tf.unstack(x);
}

/** The elements of `ts`, one after another, as one flat tensor (not differentiable). */
function concatFlatKernel(tf: TF, ts: Tensor[]): Tensor {
  const heap = wasmHeap(tf, ts);
  if (!heap) return tf.concat(ts.map((t) => tf.reshape(t, [-1])));
  const total = ts.reduce((a, t) => a + t.size, 0);
  const out = heap.makeOutput([total], 'float32');
  const view = heap.typedArrayFromHeap(out);
  let offset = 0;
  for (const t of ts) {
    view.set(heap.typedArrayFromHeap({ dataId: t.dataId, shape: [t.size], dtype: 'float32' }), offset);
    offset += t.size;
  }
  return tf.engine().makeTensorFromTensorInfo(out as never) as Tensor;
}

/** A flat tensor cut into consecutive pieces of the given shapes (the inverse of concatFlat). */
function splitFlatKernel(tf: TF, flat: Tensor, shapes: number[][]): Tensor[] {
  const heap = wasmHeap(tf, [flat]);
  if (heap) return heapPieces(tf, heap, flat, shapes);
  const sizes = shapes.map((s) => s.reduce((a, b) => a * b, 1));
  return tf.split(flat, sizes).map((t, i) => tf.reshape(t, shapes[i]));
}

// kernels: opaque calls in a traced step (src/kernels/kernel.ts)
export const matMul = kernel('matMul', matMulKernel);
export const matMulOfData = kernel('matMulOfData', matMulOfDataKernel);
export const concatFlat = kernel('concatFlat', concatFlatKernel);
// the pieces' shapes: written once as `shapes`, as the optimizer splits three buffers alike
export const splitFlat = kernel('splitFlat', splitFlatKernel, { named: { arg: 2, name: 'shapes' } });
