// The generated step's dense forward product (src/wasm/blocks.ts, denseForward), run alone against a
// float32 reference written out in the op path's order (each output from 0 over i in order, in blocks of 48
// where the op path sums so, then plus the bias): bit for bit. An output narrower than a vector (dense(1),
// (2), (3)) takes four rows at a time in a vector's lanes, the rows left over one by one; wider outputs go
// by columns. The cases cover batches that are and are not multiples of four, inner sizes that are and are
// not whole vectors, two blocks of the sum, a kernel whose rows lie apart (a fused kernel's columns), and
// a layer without bias.
import { describe, expect, it } from 'vitest';
import { ModuleBuilder, type Code, type Local } from '../src/wasm/module.js';
import { denseForward, SUM_BLOCK, type Mat, type ParamMat } from '../src/wasm/blocks.js';
import { values } from './kernel-values.js';

const f = Math.fround;

/** y[b, o] = (the sum over i of x[b, i] w[i, o], in order, by blocks where blocked) + bias[o], in float32. */
function reference(x: Float32Array, w: Float32Array, bias: Float32Array | undefined, batch: number, rows: number, width: number, blocked: boolean): Float32Array {
  const y = new Float32Array(batch * width);
  const blocks: [number, number][] = [];
  for (let k0 = 0; k0 < rows; k0 += blocked ? SUM_BLOCK : rows) blocks.push([k0, Math.min(rows, k0 + (blocked ? SUM_BLOCK : rows))]);
  for (let b = 0; b < batch; b++) for (let o = 0; o < width; o++) {
    const sum = (k0: number, k1: number) => {
      let acc = 0;
      for (let i = k0; i < k1; i++) acc = f(acc + f(x[b * rows + i] * w[i * width + o]));
      return acc;
    };
    let total = blocks.length === 1 ? sum(0, rows) : 0;
    if (blocks.length > 1) for (const [k0, k1] of blocks) total = f(total + sum(k0, k1));
    y[b * width + o] = bias ? f(total + bias[o]) : total;
  }
  return y;
}

interface Case {
  batch: number;
  rows: number;
  width: number;
  blocked: boolean;
  /** floats between one kernel row and the next: width where rows are contiguous (stacked), more where they lie apart */
  rowFloats: number;
  bias: boolean;
}

/** Runs denseForward on the case's x, w and bias in a memory of its own whose every other float is NaN. */
function run(k: Case, x: Float32Array, w: Float32Array, bias: Float32Array): Float32Array {
  const [xAt, wAt, biasAt] = [64, 64 + 4096 * 4, 64 + 8192 * 4];
  const yAt = 64 + 12288 * 4;
  const mb = new ModuleBuilder();
  mb.func(['i32', 'i32'], [], (c: Code) => {
    const [base, batch] = [c.param(0), c.param(1)];
    const local = (offset: number): Local => {
      const l = c.local('i32');
      c.get(base).i32(offset).i32Add().set(l);
      return l;
    };
    const stride = c.local('i32');
    c.i32(k.rowFloats * 4).set(stride);
    const kernel: ParamMat = { base: local(wAt), rowStride: stride, rows: k.rows, width: k.width, blocked: k.blocked, ...(k.rowFloats === k.width ? { stride: k.width * 4 } : {}) };
    const xMat: Mat = { base, offset: xAt, width: k.rows };
    const yMat: Mat = { base, offset: yAt, width: k.width };
    denseForward(c, batch, xMat, kernel, k.bias ? local(biasAt) : undefined, yMat);
  }, 'run');
  const memory = new WebAssembly.Memory({ initial: 2 });
  const heap = new Float32Array(memory.buffer);
  heap.fill(NaN);
  heap.set(x, xAt / 4);
  for (let i = 0; i < k.rows; i++) heap.set(w.subarray(i * k.width, (i + 1) * k.width), wAt / 4 + i * k.rowFloats);
  heap.set(bias, biasAt / 4);
  const exports = new WebAssembly.Instance(new WebAssembly.Module(mb.bytes()), { env: { memory } }).exports;
  (exports.run as (base: number, batch: number) => void)(0, k.batch);
  return heap.slice(yAt / 4, yAt / 4 + k.batch * k.width);
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

const cases: Case[] = [
  { batch: 5, rows: 20, width: 1, blocked: true, rowFloats: 1, bias: true }, // forum's dense(1)
  { batch: 4, rows: 20, width: 1, blocked: false, rowFloats: 1, bias: true },
  { batch: 9, rows: 7, width: 1, blocked: false, rowFloats: 1, bias: true }, // columns left over
  { batch: 3, rows: 8, width: 2, blocked: false, rowFloats: 2, bias: true }, // no four rows: all one by one
  { batch: 7, rows: 6, width: 2, blocked: true, rowFloats: 2, bias: false },
  { batch: 8, rows: 50, width: 3, blocked: true, rowFloats: 3, bias: true }, // two blocks of the sum
  { batch: 6, rows: 10, width: 3, blocked: false, rowFloats: 3 * 5, bias: true }, // rows apart, at run time
  { batch: 5, rows: 13, width: 1, blocked: false, rowFloats: 4, bias: false },
  { batch: 6, rows: 9, width: 5, blocked: false, rowFloats: 5, bias: true }, // by columns (a vector and one)
];

describe('the dense forward product of the generated step', () => {
  for (const k of cases) {
    it(`equals the op path's order bit for bit: batch ${k.batch}, ${k.rows} -> ${k.width}${k.blocked ? ', blocks of 48' : ''}${k.rowFloats !== k.width ? ', rows apart' : ''}${k.bias ? '' : ', no bias'}`, () => {
      const x = values(k.batch * k.rows, 1 + k.batch * 31 + k.rows);
      const w = values(k.rows * k.width, 7 + k.width);
      const bias = values(k.width, 11);
      expect(bits(run(k, x, w, bias))).toEqual(bits(reference(x, w, k.bias ? bias : undefined, k.batch, k.rows, k.width, k.blocked)));
    });
  }
});
