// Shape inference for every layer kind, and the parameters each kind creates.
import { describe, expect, it } from 'vitest';
import { expectError, expectClean, modelSource, shapeOf } from './helpers.js';
import { layerKinds } from '../src/layers/registry.js';
import { activations } from '../src/vocabulary/activations.js';

const paramShapes = (input: number[], layers: string) =>
  expectClean(modelSource(input, layers)).ir!.params.map((p) => `${p.name} [${p.shape.join(',')}]`);

describe('dense', () => {
  it('maps [in] to [units]', () => expect(shapeOf([2], 'dense(20)')).toEqual([20]));
  it('has a kernel and a bias', () => expect(paramShapes([2], 'dense(20)')).toEqual(['dense_1/kernel [2,20]', 'dense_1/bias [20]']));
  it('can drop the bias', () => expect(paramShapes([2], 'dense(3, bias: false)')).toEqual(['dense_1/kernel [2,3]']));
  it('needs a flat input', () => expectError(modelSource([4, 4, 1], 'dense(2)'), 2014, 'dense expects a flat [features] or a sequence [steps, features] input, got shape [4, 4, 1]; add flatten() before it'));
});

describe('conv2d', () => {
  it('valid padding', () => expect(shapeOf([28, 28, 1], 'conv2d(6, kernel: 5)')).toEqual([24, 24, 6]));
  it('same padding', () => expect(shapeOf([28, 28, 1], 'conv2d(6, kernel: 5, padding: same)')).toEqual([28, 28, 6]));
  it('stride with valid padding', () => expect(shapeOf([28, 28, 3], 'conv2d(4, kernel: 3, stride: 2)')).toEqual([13, 13, 4]));
  it('stride with same padding', () => expect(shapeOf([7, 7, 3], 'conv2d(4, kernel: 3, stride: 2, padding: same)')).toEqual([4, 4, 4]));
  it('rectangular kernels and strides', () => expect(shapeOf([10, 12, 1], 'conv2d(2, kernel: [3, 5], stride: [1, 2])')).toEqual([8, 4, 2]));
  it('kernel [kh, kw, in, out]', () => expect(paramShapes([8, 8, 3], 'conv2d(5, kernel: 3)')).toEqual(['conv2d_1/kernel [3,3,3,5]', 'conv2d_1/bias [5]']));
  it('a kernel larger than its input', () => expectError(modelSource([4, 4, 1], 'conv2d(2, kernel: 5)'), 2015, 'conv2d window 5x5 is larger than its input 4x4'));
  it('a kernel exactly the size of its input', () => expect(shapeOf([5, 5, 1], 'conv2d(2, kernel: 5)')).toEqual([1, 1, 2]));
  it('needs a spatial input', () => expectError(modelSource([16], 'conv2d(2)'), 2014, 'conv2d expects a spatial [height, width, channels] input, got shape [16]'));
});

describe('sequences', () => {
  it('dense acts on the last axis of [steps, features]', () => expect(paramShapes([5, 3], 'dense(4)\nflatten()\ndense(1)')).toEqual(['dense_1/kernel [3,4]', 'dense_1/bias [4]', 'dense_2/kernel [20,1]', 'dense_2/bias [1]']));
  it('lstm: its last state, or every step', () => {
    expect(shapeOf([6, 3], 'lstm(4)')).toEqual([4]);
    expect(shapeOf([6, 3], 'lstm(4, sequences: true)')).toEqual([6, 4]);
  });
  it("lstm's kernels in Keras' layout", () => expect(paramShapes([6, 3], 'lstm(4)')).toEqual(['lstm_1/kernel [3,16]', 'lstm_1/recurrent_kernel [4,16]', 'lstm_1/bias [16]']));
  it("gru's bias: two rows with reset_after, one without", () => {
    expect(paramShapes([6, 3], 'gru(2)')).toEqual(['gru_1/kernel [3,6]', 'gru_1/recurrent_kernel [2,6]', 'gru_1/bias [2,6]']);
    expect(paramShapes([6, 3], 'gru(2, sequences: true, reset_after: false)')).toEqual(['gru_1/kernel [3,6]', 'gru_1/recurrent_kernel [2,6]', 'gru_1/bias [6]']);
  });
  it('lstm on a flat value', () => expectError(modelSource([6], 'lstm(4)'), 2014, 'lstm expects'));
  it('attention keeps [steps, features]', () => expect(shapeOf([5, 8], 'attention(heads: 2, causal: true)')).toEqual([5, 8]));
  it("attention's width must divide by its heads", () => expectError(modelSource([5, 6], 'attention(heads: 4)'), 2021, 'heads'));
});

describe('pooling', () => {
  it('maxpool2d halves', () => expect(shapeOf([28, 28, 6], 'maxpool2d(2)')).toEqual([14, 14, 6]));
  it('avgpool2d floors odd sizes', () => expect(shapeOf([5, 5, 2], 'avgpool2d(2)')).toEqual([2, 2, 2]));
  it('an explicit stride', () => expect(shapeOf([6, 6, 1], 'maxpool2d(3, stride: 1)')).toEqual([4, 4, 1]));
  it('same padding', () => expect(shapeOf([5, 5, 2], 'maxpool2d(2, padding: same)')).toEqual([3, 3, 2]));
  it('pooling on a non-spatial input', () => expectError(modelSource([16], 'maxpool2d(2)'), 2014, 'maxpool2d expects a spatial'));
  it('a window larger than its input', () => expectError(modelSource([1, 1, 4], 'avgpool2d(2)'), 2015, 'avgpool2d window 2x2 is larger than its input 1x1'));
  it('has no parameters', () => expect(paramShapes([4, 4, 1], 'maxpool2d(2)\nflatten()\ndense(1)')).toEqual(['dense_1/kernel [4,1]', 'dense_1/bias [1]']));
});

describe('global pooling', () => {
  it('conv1d: [steps, channels] to [steps, filters]', () => expect(paramShapes([7, 2], 'conv1d(4, kernel: 3, stride: 2, padding: same)')).toEqual(['conv1d_1/kernel [3,2,4]', 'conv1d_1/bias [4]']));
  it('conv1d and the pools over steps', () => expect(shapeOf([9, 2], 'conv1d(4, kernel: 3)\nmaxpool1d(2)\navgpool1d(2, stride: 1, padding: same)')).toEqual([3, 4]));
  it('conv1d on an image', () => expectError(modelSource([4, 4, 1], 'conv1d(2)'), 2014, 'conv1d expects a sequence [steps, channels] input, got shape [4, 4, 1]; an image takes conv2d'));
  it('maxpool1d window larger than the sequence', () => expectError(modelSource([3, 2], 'maxpool1d(4)'), 2015, 'maxpool1d window 4 is larger than its input 3 (padding: valid)'));
  it('embedding: [steps] ids to [steps, dim]', () => expect(paramShapes([5], 'embedding(7, 3, positions: 5)\nflatten()\ndense(2)')).toEqual(['embedding_1/embeddings [7,3]', 'embedding_1/positions [5,3]', 'dense_1/kernel [15,2]', 'dense_1/bias [2]']));
  it('embedding on a [steps, features] input', () => expectError(modelSource([5, 2], 'embedding(7, 3)'), 2014, 'embedding expects a [steps] token-id input, got shape [5, 2]; it reads one sequence of token ids per example'));
  it('embedding positions: not the input length', () => expectError(modelSource([5], 'embedding(7, 3, positions: 4)'), 2005, "positions must be the input's length, 5, got 4"));
  it('global_avg_pool keeps the channels', () => expect(shapeOf([5, 4, 3], 'global_avg_pool()')).toEqual([3]));
  it('global_max_pool keeps the channels', () => expect(shapeOf([1, 1, 7], 'global_max_pool()')).toEqual([7]));
  it('feeds a dense layer without flatten', () => expect(paramShapes([6, 6, 1], 'conv2d(4, kernel: 3)\nglobal_avg_pool()\ndense(2)')).toEqual(['conv2d_1/kernel [3,3,1,4]', 'conv2d_1/bias [4]', 'dense_1/kernel [4,2]', 'dense_1/bias [2]']));
  it('on flat features', () => expectError(modelSource([16], 'global_max_pool()'), 2014, 'global_max_pool expects a spatial [height, width, channels] input, got shape [16]; it only applies to images, not flat features'));
  it('over the steps of a sequence', () => expect(shapeOf([5, 3], 'global_max_pool()')).toEqual([3]));
  it('cannot be shared', () => expectError(modelSource([4, 4, 1], 'shared global_avg_pool()'), 2019, "'shared' goes before a layer with weights"));
});

describe('shape-preserving layers', () => {
  it('flatten', () => expect(shapeOf([5, 5, 16], 'flatten()')).toEqual([400]));
  it('flatten of flat', () => expect(shapeOf([7], 'flatten()')).toEqual([7]));
  it('dropout', () => expect(shapeOf([3, 3, 2], 'dropout(0.5)')).toEqual([3, 3, 2]));
  it('batchnorm', () => expect(shapeOf([3, 3, 2], 'batchnorm()')).toEqual([3, 3, 2]));
  it('batchnorm keeps statistics on the last axis', () =>
    expect(paramShapes([3, 3, 2], 'batchnorm()')).toEqual(['batchnorm_1/gamma [2]', 'batchnorm_1/beta [2]', 'batchnorm_1/moving_mean [2]', 'batchnorm_1/moving_variance [2]']));
  it('layernorm', () => expect(paramShapes([6], 'layernorm()')).toEqual(['layernorm_1/gamma [6]', 'layernorm_1/beta [6]']));
  for (const a of activations.filter((x) => x !== 'linear')) {
    it(`${a}()`, () => expect(shapeOf([3, 4], `${a}()`)).toEqual([3, 4]));
  }
});

describe('merging', () => {
  it('add', () => expect(shapeOf([4], 'a = dense(3)\nb = dense(3)\nadd(a, b)')).toEqual([3]));
  it('add of three', () => expect(shapeOf([4], 'a = dense(3)\nb = dense(3)\nadd(a, b, a)')).toEqual([3]));
  it('add of mismatched shapes', () => expectError(modelSource([4], 'a = dense(3)\nb = dense(2)\nadd(a, b)'), 2016, 'add: shapes [3] and [2] do not match'));
  it('concat', () => expect(shapeOf([4], 'a = dense(3)\nb = dense(2)\nconcat(a, b)')).toEqual([5]));
  it('concat of images on channels', () => expect(shapeOf([4, 4, 1], 'a = conv2d(2, padding: same)\nb = conv2d(3, padding: same)\nconcat(a, b)')).toEqual([4, 4, 5]));
  it('concat of mismatched shapes', () =>
    expectError(modelSource([4, 4, 1], 'a = conv2d(2)\nb = conv2d(3, padding: same, from: input)\nconcat(a, b)'), 2016, 'concat (all but the last axis): shapes [2, 2, 2] and [4, 4, 3] do not match'));
  it('from: reads a labelled output, so branches can be written', () =>
    expect(shapeOf([4], 'a = dense(3)\nb = dense(5, from: input)\nc = dense(2, from: a)\nconcat(b, c)')).toEqual([7]));
  it('from: must name an earlier label', () => expectError(modelSource([4], 'a = dense(3, from: b)\nb = dense(2)'), 2010, "label 'b' is used before it is defined"));
  it('a layer after a merge reads the merge', () => expect(shapeOf([4], 'a = dense(3)\nb = dense(3)\nadd(a, b)\ndense(7)')).toEqual([7]));
});

it('every layer kind is covered by a shape test in this file', async () => {
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(new URL(import.meta.url), 'utf8');
  for (const kind of layerKinds) {
    const mentioned = text.includes(`${kind.name}(`) || (activations as readonly string[]).includes(kind.name);
    expect(mentioned, kind.name).toBe(true);
  }
});

it('names layers per kind, Keras-style', () =>
  expect(paramShapes([4], 'dense(3)\ndense(2)')).toEqual(['dense_1/kernel [4,3]', 'dense_1/bias [3]', 'dense_2/kernel [3,2]', 'dense_2/bias [2]']));
