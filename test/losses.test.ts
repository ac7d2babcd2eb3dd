// netc's per-member losses and metrics against TF.js's own (tf.metrics / tf.losses, which follow Keras
// on probabilities): the same values, member by member.
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { memberAccuracy, memberError, memberLosses, memberMetric } from '../src/kernels/losses.js';
import type { TF } from '../src/kernels/tf.js';
import { Rng } from '../src/util/rng.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

const t = tf as unknown as TF;
const N = 3;
const B = 6;

function uniform(seed: number, shape: number[], low = 0, high = 1) {
  const rng = Rng.of(seed, 'loss-test');
  return tf.tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.range(low, high)), shape);
}

/** The reference per member: TF.js's function on member m's predictions, averaged over the batch. */
function perMember(pred: tf.Tensor, reference: (m: tf.Tensor) => tf.Tensor): number[] {
  return [...Array(N).keys()].map((m) => tf.mean(reference(tf.squeeze(tf.slice(pred, m, 1), [0]))).dataSync()[0]);
}

function expectEach(actual: tf.Tensor, expected: number[]) {
  const a = Array.from(actual.dataSync());
  a.forEach((v, i) => expect(v).toBeCloseTo(expected[i], 5));
}

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('losses', () => {
  it('binary cross-entropy on probabilities is tf.metrics.binaryCrossentropy', () => {
    const p = uniform(1, [N, B, 1], 0.001, 0.999);
    const y = tf.tensor([1, 0, 1, 1, 0, 0], [B, 1]);
    expectEach(memberLosses(t, 'binary_crossentropy', {}, p, y), perMember(p, (m) => tf.metrics.binaryCrossentropy(y, m)));
  });

  it('binary cross-entropy clips probabilities of exactly 0 and 1 as Keras does', () => {
    const p = tf.tensor([0, 1, 0.5, 1, 0, 0.5], [1, B, 1]);
    const y = tf.tensor([1, 0, 1, 1, 0, 0], [B, 1]);
    const loss = memberLosses(t, 'binary_crossentropy', {}, p, y).dataSync()[0];
    expect(Number.isFinite(loss)).toBe(true);
    expect(loss).toBeCloseTo(tf.mean(tf.metrics.binaryCrossentropy(y, tf.squeeze(p, [0]))).dataSync()[0], 4);
  });

  it('categorical cross-entropy is tf.metrics.categoricalCrossentropy', () => {
    const p = tf.softmax(uniform(2, [N, B, 4], -2, 2));
    const y = tf.oneHot(tf.tensor1d([0, 1, 2, 3, 1, 0], 'int32'), 4).toFloat();
    expectEach(memberLosses(t, 'categorical_crossentropy', {}, p, y), perMember(p, (m) => tf.metrics.categoricalCrossentropy(y, m)));
  });

  it('sparse categorical cross-entropy equals categorical on one-hot labels', () => {
    const p = tf.softmax(uniform(3, [N, B, 4], -2, 2));
    const index = tf.tensor([0, 1, 2, 3, 1, 0], [B, 1]);
    const onehot = tf.oneHot(tf.tensor1d([0, 1, 2, 3, 1, 0], 'int32'), 4).toFloat();
    expectEach(memberLosses(t, 'sparse_categorical_crossentropy', {}, p, index), Array.from(memberLosses(t, 'categorical_crossentropy', {}, p, onehot).dataSync()));
  });

  it('mse and mae are tf.metrics.meanSquaredError and meanAbsoluteError', () => {
    const p = uniform(4, [N, B, 2], -1, 1);
    const y = uniform(5, [B, 2], -1, 1);
    expectEach(memberLosses(t, 'mse', {}, p, y), perMember(p, (m) => tf.metrics.meanSquaredError(y, m)));
    expectEach(memberLosses(t, 'mae', {}, p, y), perMember(p, (m) => tf.metrics.meanAbsoluteError(y, m)));
  });

  it('huber is tf.losses.huberLoss with the same delta', () => {
    const p = uniform(6, [N, B, 1], -3, 3);
    const y = uniform(7, [B, 1], -3, 3);
    expectEach(memberLosses(t, 'huber', { delta: 0.7 }, p, y), perMember(p, (m) => tf.losses.huberLoss(y, m, undefined, 0.7, tf.Reduction.NONE)));
  });
});

describe('metrics', () => {
  it('accuracy thresholds one output at 0.5 and takes the argmax of several', () => {
    const binary = tf.tensor([0.9, 0.2, 0.6, 0.4, 0.1, 0.7], [1, B, 1]);
    expect(memberAccuracy(t, 'binary_crossentropy', binary, tf.tensor([1, 0, 0, 0, 0, 1], [B, 1])).dataSync()[0]).toBeCloseTo(5 / 6);
    const p = tf.tensor([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4], [0.1, 0.9], [0.5, 0.4], [0.3, 0.7]], [B, 2]).expandDims(0);
    const onehot = tf.oneHot(tf.tensor1d([0, 1, 1, 1, 0, 0], 'int32'), 2).toFloat();
    expect(memberAccuracy(t, 'categorical_crossentropy', p, onehot).dataSync()[0]).toBeCloseTo(4 / 6);
    const index = tf.tensor([0, 1, 1, 1, 0, 0], [B, 1]);
    expect(memberAccuracy(t, 'sparse_categorical_crossentropy', p, index).dataSync()[0]).toBeCloseTo(4 / 6);
  });

  it('mse and mae as metrics, per member', () => {
    const p = uniform(8, [N, B, 2]);
    const y = uniform(9, [B, 2]);
    expectEach(memberError(t, 'mse', p, y), perMember(p, (m) => tf.metrics.meanSquaredError(y, m)));
  });

  it('memberMetric: mse and mae are tf.metrics.meanSquaredError and meanAbsoluteError, per member', () => {
    const p = uniform(10, [N, B, 3], -2, 2);
    const y = uniform(11, [B, 3], -2, 2);
    expectEach(memberMetric(t, 'mse', 'huber', p, y), perMember(p, (m) => tf.metrics.meanSquaredError(y, m)));
    expectEach(memberMetric(t, 'mae', 'mse', p, y), perMember(p, (m) => tf.metrics.meanAbsoluteError(y, m)));
  });

  it('memberMetric: with class indices (sparse), mse and mae compare the outputs with the one-hot labels', () => {
    const p = uniform(12, [N, B, 3]);
    const index = tf.tensor([0, 2, 1, 1, 0, 2], [B, 1]);
    const onehot = tf.oneHot(tf.tensor1d([0, 2, 1, 1, 0, 2], 'int32'), 3).toFloat();
    expectEach(memberMetric(t, 'mse', 'sparse_categorical_crossentropy', p, index), perMember(p, (m) => tf.metrics.meanSquaredError(onehot, m)));
    expectEach(memberMetric(t, 'mae', 'sparse_categorical_crossentropy', p, index), perMember(p, (m) => tf.metrics.meanAbsoluteError(onehot, m)));
    expectEach(memberMetric(t, 'accuracy', 'sparse_categorical_crossentropy', p, index), Array.from(memberAccuracy(t, 'sparse_categorical_crossentropy', p, index).dataSync()));
  });
});
