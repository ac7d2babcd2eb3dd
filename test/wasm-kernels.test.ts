// netc's wasm kernels (src/kernels/wasm-kernels.ts) against TF.js's cpu backend, value for value: the
// max-pool gradient (its fast path for non-overlapping windows and its general path) and the Slice,
// SplitV and Unpack kernels, which read the heap in place instead of copying whole tensors (readSync).
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import '@tensorflow/tfjs-backend-wasm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerWasmKernels } from '../src/kernels/wasm-kernels.js';
import type { TF } from '../src/kernels/tf.js';
import { Rng } from '../src/util/rng.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

beforeAll(async () => {
  await tf.setBackend('wasm');
  await tf.ready();
  registerWasmKernels(tf as unknown as TF);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await tf.setBackend('wasm');
});

/** Values from a small set, so that windows have ties and negative maxima. */
function values(seed: number, size: number, levels = 7): Float32Array {
  const rng = Rng.of(seed, 'wasm-kernels');
  return Float32Array.from({ length: size }, () => Math.floor(rng.uniform() * levels) - 4);
}

/** f's result on cpu and on wasm, as arrays of numbers. */
async function onBoth(f: () => tf.Tensor | tf.Tensor[]): Promise<{ cpu: number[][]; wasm: number[][] }> {
  const run = async (backend: string) => {
    await tf.setBackend(backend);
    const out = tf.tidy(f);
    const list = Array.isArray(out) ? out : [out];
    const data = await Promise.all(list.map(async (t) => Array.from(await t.data())));
    tf.dispose(list);
    return data;
  };
  return { cpu: await run('cpu'), wasm: await run('wasm') };
}

describe('wasm MaxPoolGrad', () => {
  const cases: { input: [number, number, number, number]; window: number | [number, number]; stride: number | [number, number]; pad: 'valid' | 'same' }[] = [
    { input: [2, 6, 6, 3], window: 2, stride: 2, pad: 'valid' }, // the fast path (LeNet's pools)
    { input: [1, 7, 5, 2], window: 2, stride: 2, pad: 'valid' }, // fast path, a row and a column left over
    { input: [2, 6, 6, 2], window: 3, stride: 3, pad: 'same' }, // fast path, 3x3
    { input: [1, 7, 7, 2], window: 2, stride: 2, pad: 'same' }, // padded: the general path
    { input: [2, 5, 6, 3], window: 3, stride: 1, pad: 'valid' }, // overlapping windows: the general path
    { input: [1, 6, 5, 1], window: [2, 3], stride: [2, 1], pad: 'same' },
  ];
  for (const [i, c] of cases.entries()) {
    it(`equals the cpu backend's, ${c.input.join('x')} window ${String(c.window)} stride ${String(c.stride)} ${c.pad}`, async () => {
      const size = c.input.reduce((a, b) => a * b, 1);
      const x = values(i, size);
      const g = (input: tf.Tensor4D) => tf.maxPool(input, c.window, c.stride, c.pad);
      const outShape = tf.tidy(() => g(tf.zeros(c.input) as tf.Tensor4D).shape);
      const dy = values(100 + i, outShape.reduce((a, b) => a * b, 1), 11);
      const r = await onBoth(() => tf.grad((input: tf.Tensor) => tf.mul(g(input as tf.Tensor4D), tf.tensor(dy, outShape)).sum())(tf.tensor4d(x, c.input)));
      expect(r.wasm).toEqual(r.cpu);
    });
  }
});

describe('wasm Slice, SplitV and Unpack', () => {
  it('equal the cpu backend on float32, int32 and bool tensors', async () => {
    const x = values(7, 2 * 3 * 4 * 5);
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      const r = await onBoth(() => {
        const f = tf.tensor(x, [2, 3, 4, 5]);
        // (a bool made by cast keeps the int's bits on wasm, TF.js 4.22: -4 -> 252; a comparison is 0/1)
        const t = dtype === 'bool' ? tf.greater(f, 0) : f.cast(dtype);
        return [
          tf.slice(t, [1, 0, 0, 0], [1, 3, 4, 5]), // one contiguous run
          tf.slice(t, [0, 1, 0, 0], [2, 2, 4, 5]), // runs of 40
          tf.slice(t, [1, 1, 2, 1], [1, 2, -1, 3]), // runs of 3
          tf.slice(t, [0, 0, 0, 4], [-1, -1, -1, 1]),
          tf.slice(tf.reshape(t, [120]), [17], [50]),
          tf.slice(t, [0, 0, 0, 0], [2, 0, 4, 5]), // empty
          ...tf.split(t, [1, 2], 1),
          ...tf.split(t, 5, 3),
          ...tf.unstack(t, 0),
          ...tf.unstack(t, 2),
        ].map((s) => s.cast('float32'));
      });
      expect(r.wasm, dtype).toEqual(r.cpu);
    }
  });

  it('read no whole tensor out of the heap', async () => {
    const backend = tf.backend() as unknown as { readSync(id: object): unknown };
    const readSync = vi.spyOn(backend, 'readSync');
    const t = tf.tensor(values(8, 30 * 64), [30, 64]);
    const pieces = [tf.slice(t, [3, 0], [2, 64]), ...tf.split(t, 3, 0), ...tf.unstack(t)];
    expect(readSync).not.toHaveBeenCalled();
    expect(Array.from(await pieces[1].data())).toEqual(Array.from((await t.data()).subarray(0, 640)));
    tf.dispose([t, ...pieces]);
  });

  it('give the gradients of slice, split and unstack that the cpu backend gives', async () => {
    const x = values(9, 4 * 6);
    const r = await onBoth(() => {
      const f = (t: tf.Tensor) => {
        const [a, b] = tf.split(t, [2, 4], 1);
        const rows = tf.unstack(b);
        return tf.add(tf.sum(tf.mul(a, a)), tf.sum(tf.mul(rows[1], tf.slice(b, [2, 0], [1, 4]).reshape([4]))));
      };
      return tf.grad(f)(tf.tensor(x, [4, 6]));
    });
    expect(r.wasm).toEqual(r.cpu);
  });
});
