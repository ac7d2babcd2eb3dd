// lstm and gru beyond the equivalence and export tests: their initialisers (Keras' orthogonal recurrent kernel
// and the lstm's forget-gate bias), the gate layouts' inverses that `netc import` relies on, the mistake of a
// flat input, and the TF.js model that cannot hold gru(reset_after: true).
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { initialValues } from '../src/kernels/init.js';
import { Rng } from '../src/util/rng.js';
import { gateKernel, gateVector, gateWeight, netcGateVector } from '../src/interop/layout.js';
import { compile } from '../src/pipeline.js';
import { toLayersModel, UnsupportedLayerError } from '../src/serve/layers-model.js';
import type { TF } from '../src/kernels/tf.js';
import { lowerings } from '../src/layers/forward.js';
import { build, expectClose, randomBatch, useBackend } from './equivalence/harness.js';

beforeAll(() => useBackend('cpu'));

/** The [rows, rows] or [cols, cols] Gram matrix of a row-major [rows, cols] matrix's shorter side. */
function gram(m: Float32Array, rows: number, cols: number): number[][] {
  const byRows = rows <= cols;
  const n = byRows ? rows : cols;
  const at = (i: number, k: number) => (byRows ? m[i * cols + k] : m[k * cols + i]);
  const len = byRows ? cols : rows;
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => Array.from({ length: len }, (_, k) => at(i, k) * at(j, k)).reduce((a, b) => a + b, 0)));
}

describe('recurrent initialisers', () => {
  it.each([
    [3, 12],
    [12, 3],
    [4, 4],
  ])('orthogonal [%i, %i]: the shorter side orthonormal, drawn from the stream', (rows, cols) => {
    const w = initialValues('orthogonal', [rows, cols], Rng.of(1, 'init', 0));
    for (const [i, row] of gram(w, rows, cols).entries()) row.forEach((v, j) => expect(Math.abs(v - (i === j ? 1 : 0))).toBeLessThan(1e-6));
    expect(initialValues('orthogonal', [rows, cols], Rng.of(1, 'init', 0))).toEqual(w);
    expect(initialValues('orthogonal', [rows, cols], Rng.of(2, 'init', 0))).not.toEqual(w);
  });

  it("unit_forget_bias: the lstm's bias [4u] is ones in the forget gate's block (i, f, c, o) and zeros elsewhere", () => {
    expect(Array.from(initialValues('unit_forget_bias', [8], Rng.of(1, 'init', 0)))).toEqual([0, 0, 1, 1, 0, 0, 0, 0]);
  });
});

describe('gate layouts', () => {
  it("PyTorch's and ONNX's weights and biases go back to netc's exactly", () => {
    const [inputs, units, order] = [3, 2, [0, 3, 1, 2]];
    const kernel = Float32Array.from({ length: inputs * 4 * units }, (_, i) => i);
    const w = gateWeight(kernel, inputs, units, order);
    // ONNX's row block 1 (o) is netc's column block 3: row 2 (o's first unit) reads column 6 of each input row
    expect(Array.from(w.subarray(2 * inputs, 3 * inputs))).toEqual([6, 14, 22]);
    expect(gateKernel(w, inputs, units, order)).toEqual(kernel);
    const bias = Float32Array.from({ length: 4 * units }, (_, i) => i);
    expect(Array.from(gateVector(bias, units, order))).toEqual([0, 1, 6, 7, 2, 3, 4, 5]);
    expect(netcGateVector(gateVector(bias, units, order), units, order)).toEqual(bias);
  });
});

const model = (input: string, layers: string) => `model m(input: ${input}) {\n${layers}\n}\n`;

describe('recurrent layers in a .net file', () => {
  it.each(['lstm(3)', 'gru(3)'])('%s on a flat value is NET2014 at the layer, with a hint', (layer) => {
    const source = model('[6]', `  dense(4)\n  ${layer}\n  dense(2)`);
    const [d, ...rest] = compile(source, 'flat.net', {}).diagnostics;
    expect(rest).toEqual([]);
    expect(d.code).toBe(2014);
    expect(source.slice(d.start, d.start + d.length)).toBe(layer);
    expect(d.message).toContain('got shape [4]; a sequence is [time, features]; add embedding(...) before it, or give input: [T, F]');
  });

  it('gru(reset_after: true) has no TF.js model: the refusal names the formats that can hold it', () => {
    const state = compile(model('[4, 3]', '  gru(3)\n  dense(2)'), 'g.net', {});
    expect(() => toLayersModel(tf as unknown as TF, state.ir!, {})).toThrow(UnsupportedLayerError);
    expect(() => toLayersModel(tf as unknown as TF, state.ir!, {})).toThrow(/gru_1: TF\.js cannot load a gru with reset_after: true.*--format pytorch or --format onnx/);
    const before = compile(model('[4, 3]', '  gru(3, reset_after: false)\n  dense(2)'), 'g.net', {});
    toLayersModel(tf as unknown as TF, before.ir!, {}).dispose();
  });

  it('an lstm gives [units], or [steps, units] with sequences: true', () => {
    const shapes = (layers: string) => compile(model('[5, 3]', layers), 's.net', {}).ir!.ops.map((op) => op.shape);
    expect(shapes('  lstm(4, sequences: true)\n  gru(2)')).toEqual([[5, 3], [5, 4], [2]]);
  });
});

// TF.js has no reset_after GRU to hold it to (test/export.test.ts holds it to PyTorch's nn.GRU and ONNX's GRU):
// here every lowering must compute what the loop lowering (each member alone) computes, and train alike
describe('gru(reset_after: true) under every lowering', () => {
  it('computes and trains as each member alone', async () => {
    const source = 'model m(input: [3, 2]) {\n  gru(3, sequences: true)\n  gru(2)\n  dense(2)\n}\nensemble { seed: 4 vary lr: [0.1, 0.3] }\n';
    const x = randomBatch(1, [4, 3, 2]);
    const y = randomBatch(2, [4, 2]);
    const results = [];
    for (const lowering of lowerings) {
      const b = build(source, lowering, 2, { optimizer: { name: 'sgd', args: {} }, loss: 'mse' });
      const out = b.pop.forward(x as never, false) as unknown as tf.Tensor;
      const before = out.dataSync().slice();
      out.dispose();
      b.pop.step({ kind: 'tensors', x: x as never, y: y as never }).dispose();
      results.push({ lowering, before, weights: await b.pop.memberWeights(1) });
      b.pop.dispose();
    }
    const loop = results.find((r) => r.lowering === 'loop')!;
    for (const r of results) {
      expectClose(r.before, loop.before, `${r.lowering} forward`);
      for (const [name, w] of loop.weights) expectClose(r.weights.get(name)!, w, `${r.lowering} ${name}`);
    }
  });
});
