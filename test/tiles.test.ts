// The register-tiled products of the recurrent layers' steps (src/wasm/tiles.ts) against the loops they stand
// in for (src/wasm/blocks.ts), run side by side on the same inputs in a memory of NaN: bit for
// bit, and nothing written next to the output. The cases cover rows left over after the
// tiles, widths that are not whole vectors nor whole groups of vectors, two blocks of the sum, a kernel whose
// rows lie apart, an output whose rows are wider than the product (a step's columns of a sequence), and a
// gradient added to a total or written.
import { describe, expect, it } from 'vitest';
import { ModuleBuilder, type Code, type Local } from '../src/wasm/module.js';
import { columnSums, denseForward, denseGradWeights, type Mat, type ParamMat } from '../src/wasm/blocks.js';
import { addFloats } from '../src/wasm/sequence.js';
import { addColumnSums, tiledGradWeights, tiledProduct } from '../src/wasm/tiles.js';
import { values } from './kernel-values.js';

const FLOATS = 1 << 16;
/** The first float of each region: the inputs, the reference's scratch, its output and the tiles' output. */
const IN = 64;
const SHARE = 20480;
const REF = 28672;
const OUT = 40960;

/** Fills the memory with NaN and the inputs, runs `body(c, base, rows)` (one export), and returns the two outputs' regions. */
function run(rows: number, inputs: Float32Array, outputs: [Float32Array, number], body: (c: Code, base: Local, batch: Local) => void): [Float32Array, Float32Array] {
  const mb = new ModuleBuilder();
  mb.func(['i32', 'i32'], [], (c: Code) => body(c, c.param(0), c.param(1)), 'run');
  const memory = new WebAssembly.Memory({ initial: (FLOATS * 4) / 65536 });
  const heap = new Float32Array(memory.buffer);
  heap.fill(NaN);
  heap.set(inputs, IN);
  // an output region's starting values (a total added to), in both copies
  heap.set(outputs[0], REF);
  heap.set(outputs[0], OUT);
  const exports = new WebAssembly.Instance(new WebAssembly.Module(mb.bytes()), { env: { memory } }).exports;
  (exports.run as (base: number, batch: number) => void)(0, rows);
  // nothing written around the tiles' output
  expect(heap.slice(OUT - 256, OUT).every(Number.isNaN) && heap.slice(OUT + outputs[1], OUT + outputs[1] + 256).every(Number.isNaN)).toBe(true);
  return [heap.slice(REF, REF + outputs[1]), heap.slice(OUT, OUT + outputs[1])];
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** A local set to base + `floats` floats. */
function at(c: Code, base: Local, floats: number): Local {
  const l = c.local('i32');
  c.get(base).i32(floats * 4).i32Add().set(l);
  return l;
}

interface ProductCase {
  rows: number;
  k: number;
  width: number;
  blocked: boolean;
  /** floats between one kernel row and the next (width: contiguous) */
  rowFloats: number;
  /** floats between one output row and the next (width: contiguous) */
  yFloats: number;
  /** a bias row added after the sums */
  bias?: boolean;
}

const products: ProductCase[] = [
  { rows: 5, k: 7, width: 10, blocked: false, rowFloats: 13, yFloats: 10 }, // a row left over, 2 lanes over
  { rows: 6, k: 60, width: 20, blocked: true, rowFloats: 20, yFloats: 20 }, // two blocks of the sum
  { rows: 3, k: 100, width: 32, blocked: false, rowFloats: 32, yFloats: 96 }, // a step's columns of a sequence
  { rows: 1, k: 3, width: 3, blocked: true, rowFloats: 3, yFloats: 3 }, // one row of one partial vector
  { rows: 9, k: 16, width: 51, blocked: false, rowFloats: 64, yFloats: 55 }, // groups and a partial vector
  { rows: 7, k: 60, width: 22, blocked: true, rowFloats: 30, yFloats: 22, bias: true }, // a bias after two blocks
  { rows: 4, k: 9, width: 7, blocked: false, rowFloats: 7, yFloats: 11, bias: true }, // a bias's partial vector
];

describe('the tiled product y = x · W', () => {
  for (const p of products) {
    it(`is denseForward's bit for bit: ${p.rows} rows, ${p.k} -> ${p.width}${p.blocked ? ', blocks of 48' : ''}${p.rowFloats !== p.width ? ', rows apart' : ''}${p.yFloats !== p.width ? ', wider output rows' : ''}${p.bias ? ', plus a bias' : ''}`, () => {
      const x = values(p.rows * p.k, 3 + p.k);
      const w = values(p.k * p.rowFloats, 5 + p.width);
      const b = p.bias ? values(p.width, 7) : [];
      const size = p.rows * p.yFloats;
      const [ref, out] = run(p.rows, Float32Array.from([...x, ...w, ...b]), [new Float32Array(size).fill(NaN), size], (c, base, rows) => {
        const stride = c.local('i32');
        c.i32(p.rowFloats * 4).set(stride);
        const kernel: ParamMat = { base: at(c, base, IN + x.length), rowStride: stride, rows: p.k, width: p.width, blocked: p.blocked };
        const xMat: Mat = { base, offset: IN * 4, width: p.k };
        const bias = p.bias ? at(c, base, IN + x.length + w.length) : undefined;
        denseForward(c, rows, xMat, kernel, bias, { base, offset: REF * 4, width: p.yFloats });
        tiledProduct(c, rows, xMat, kernel, { base, offset: OUT * 4, width: p.yFloats }, bias);
      });
      expect(out.some((v) => !Number.isNaN(v))).toBe(true);
      expect(bits(out)).toEqual(bits(ref));
    });
  }
});

const grads = [
  { batch: 5, k: 7, width: 10, add: true },
  { batch: 4, k: 32, width: 128, add: true },
  { batch: 3, k: 5, width: 3, add: false },
  { batch: 7, k: 2, width: 37, add: true },
];

describe('the tiled weight gradient xᵀ dy', () => {
  for (const g of grads) {
    it(`is denseGradWeights's bit for bit${g.add ? ', added to a total as addFloats adds it' : ''}: batch ${g.batch}, ${g.k} x ${g.width}`, () => {
      const x = values(g.batch * g.k, 7 + g.k);
      const dy = values(g.batch * g.width, 11 + g.width);
      const size = g.k * g.width;
      const total = g.add ? values(size, 13) : new Float32Array(size).fill(NaN);
      const [ref, out] = run(g.batch, Float32Array.from([...x, ...dy]), [total, size], (c, base, batch) => {
        const xMat: Mat = { base, offset: IN * 4, width: g.k };
        const dyMat: Mat = { base, offset: (IN + x.length) * 4, width: g.width };
        const refMat: Mat = { base, offset: REF * 4, width: g.width };
        if (g.add) {
          const share: Mat = { base, offset: SHARE * 4, width: g.width };
          denseGradWeights(c, batch, xMat, dyMat, share);
          addFloats(c, size, share, refMat);
        } else denseGradWeights(c, batch, xMat, dyMat, refMat);
        tiledGradWeights(c, batch, xMat, dyMat, { base, offset: OUT * 4, width: g.width }, g.add);
      });
      expect(bits(out)).toEqual(bits(ref));
    });
  }
});

describe('the column sums added to a total', () => {
  for (const [batch, width] of [[5, 10], [32, 37]]) {
    it(`are columnSums's then addFloats's bit for bit: batch ${batch}, width ${width}`, () => {
      const dy = values(batch * width, 17 + width);
      const [ref, out] = run(batch, dy, [values(width, 19), width], (c, base, rows) => {
        const dyMat: Mat = { base, offset: IN * 4, width };
        const share: Mat = { base, offset: SHARE * 4, width };
        columnSums(c, rows, dyMat, share);
        addFloats(c, width, share, { base, offset: REF * 4, width });
        addColumnSums(c, rows, dyMat, { base, offset: OUT * 4, width });
      });
      expect(bits(out)).toEqual(bits(ref));
    });
  }
});
