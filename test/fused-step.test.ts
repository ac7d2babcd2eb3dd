// The generated training step (src/step/, engine `fused`) against the TF.js op path (engine `ops`, the
// reference): the same population trained 100 steps both ways ends within 1e-6 (relative, on the scale
// of each tensor) in every parameter and optimizer slot, and the losses and metrics agree step by step;
// for every layer kind the step covers, every loss and every optimizer. Also: what it does not cover
// runs on ops, and says why.
import { beforeAll, describe, expect, it } from 'vitest';
import { maxRelDiff, populationOf, tf, useBackend } from './equivalence/harness.js';
import { compile } from '../src/pipeline.js';
import { Population, type Engine } from '../src/runtime/population.js';
import { planStep } from '../src/runtime/fused-step.js';
import { StepCode } from '../src/step/step-code.js';
import { Rng } from '../src/util/rng.js';
import type { TF, Tensor } from '../src/kernels/tf.js';

beforeAll(() => useBackend('wasm'));

function populations(source: string, engines: Engine[], lrFactor?: (member: number, step: number) => number): Population[] {
  const state = compile(source, 'fused.net', {});
  return engines.map((engine) => populationOf(state, engine, { lrFactor }));
}

/** Reproducible batches for a loss: x [B, ...input] (token ids in [0, ids) where given), labels as the loss reads them. */
function batchFor(step: number, input: number[], loss: string, k: number, b = 6, ids?: number): { x: Tensor; y: Tensor } {
  const rng = Rng.of(step, 'fused-step');
  const x = tf.tensor(Float32Array.from({ length: b * input.reduce((a, d) => a * d, 1) }, () => (ids ? Math.floor(rng.uniform() * ids) : rng.normal())), [b, ...input]);
  let y: Float32Array;
  if (loss === 'binary_crossentropy') y = Float32Array.from({ length: b * k }, () => (rng.uniform() < 0.5 ? 0 : 1));
  else if (loss === 'sparse_categorical_crossentropy') y = Float32Array.from({ length: b }, () => Math.floor(rng.uniform() * k));
  else if (loss === 'categorical_crossentropy') y = Float32Array.from({ length: b * k }, (_, i) => (i % k === Math.floor((i / k) * 7) % k ? 1 : 0));
  else y = Float32Array.from({ length: b * k }, () => rng.normal());
  return { x: x as unknown as Tensor, y: tf.tensor(y, [b, loss === 'sparse_categorical_crossentropy' ? 1 : k]) as unknown as Tensor };
}

interface Case {
  name: string;
  model: string;
  input: number[];
  k: number;
  loss: string;
  optimizer: string;
  metrics?: string;
  vary?: string;
  data?: string;
  /** the input is token ids in [0, ids) */
  ids?: number;
  /**
   * a looser bound after 100 steps, with the reason: the op path's softmax is XNNPACK's, whose exp is
   * its own approximation; one step differs by ~1e-7, and 100 steps of a fast optimizer grow it
   */
  tolerance?: number;
  /** a learning-rate schedule: member id's factor at step t (the trainer's lrPlan gives one) */
  lrFactor?: (member: number, step: number) => number;
}

const mlp = (act: string, k: number) => `dense(7, activation: ${act})\n  dense(${k}, activation: ${k > 1 ? 'softmax' : 'sigmoid'})`;
const cases: Case[] = [
  ...['linear', 'relu', 'sigmoid', 'tanh', 'elu', 'swish', 'leaky_relu', 'softmax', 'gelu'].map((act) => ({
    name: `dense with ${act}`,
    model: `dense(9, activation: ${act})\n  dense(1)`,
    input: [2],
    k: 1,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01)',
  })),
  ...['relu', 'sigmoid', 'tanh', 'elu', 'swish', 'softmax', 'gelu'].map((layer) => ({ name: `the ${layer} layer`, model: `dense(6)\n  ${layer}()\n  dense(1)`, input: [2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05)' })),
  { name: 'leaky_relu(alpha) varied per member', model: 'dense(6)\n  slope = leaky_relu(0.1)\n  dense(1)', input: [2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05)', vary: 'vary slope.alpha: [0.05, 0.1, 0.3]' },
  { name: 'layernorm, its epsilon varied per member', model: 'dense(8, activation: relu)\n  norm = layernorm()\n  dense(1, activation: sigmoid)', input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', vary: 'vary norm.epsilon: [0.001, 0.01, 0.1]' },
  { name: 'layernorm on the shared input', model: 'layernorm()\n  dense(6, activation: tanh)\n  dense(3, activation: softmax)', input: [4], k: 3, loss: 'categorical_crossentropy', optimizer: 'sgd(lr: 0.05)', data: 'iris()', tolerance: 1e-5 },
  { name: 'batchnorm, its momentum and epsilon varied per member', model: 'dense(8, activation: relu)\n  norm = batchnorm()\n  dense(1)', input: [2], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', vary: 'vary norm.momentum: [0.5, 0.9, 0.99]\n  vary norm.epsilon: [0.001, 0.01, 0.1]' },
  // the sigmoid's and the cross-entropy's polynomials differ from TF.js's in the last bit now and then, and
  // the normalisation divides the difference by each column's spread: 100 Adam steps end ~2e-6 apart
  { name: 'batchnorm under a sigmoid and cross-entropy', model: 'dense(8, activation: relu)\n  batchnorm()\n  dense(1, activation: sigmoid)', input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', tolerance: 1e-5 },
  { name: 'batchnorm on the shared input', model: 'batchnorm()\n  dense(6, activation: tanh)\n  dense(3, activation: softmax)', input: [4], k: 3, loss: 'categorical_crossentropy', optimizer: 'sgd(lr: 0.05, momentum: 0.9)', data: 'iris()', tolerance: 1e-5 },
  { name: 'flatten', model: `flatten()\n  ${mlp('tanh', 10)}`, input: [28, 28, 1], k: 10, loss: 'sparse_categorical_crossentropy', optimizer: 'adam(lr: 0.005)', metrics: '[accuracy]', data: 'mnist(limit: 20)', tolerance: 1e-5 },
  { name: 'no bias', model: 'dense(5, activation: relu, bias: false)\n  dense(1, bias: false)', input: [2], k: 1, loss: 'mae', optimizer: 'rmsprop(lr: 0.01, momentum: 0.5)', metrics: '[mae, mse]' },
  { name: 'binary cross-entropy', model: mlp('sigmoid', 1), input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: '[accuracy]' },
  { name: 'categorical cross-entropy', model: mlp('relu', 4), input: [2], k: 4, loss: 'categorical_crossentropy', optimizer: 'adam(lr: 0.01)', metrics: '[accuracy]', data: 'spirals(n: 60, classes: 4)' },
  { name: 'sparse categorical cross-entropy', model: mlp('tanh', 3), input: [2], k: 3, loss: 'sparse_categorical_crossentropy', optimizer: 'sgd(lr: 0.1, momentum: 0.9, nesterov: true)', metrics: '[accuracy, mse]', data: 'spirals(n: 60, classes: 3)', tolerance: 1e-5 },
  { name: 'mae', model: mlp('elu', 1).replace('sigmoid', 'linear'), input: [2], k: 1, loss: 'mae', optimizer: 'sgd(lr: 0.05, momentum: 0.5)' },
  { name: 'huber', model: 'dense(8, activation: tanh)\n  dense(1)', input: [2], k: 1, loss: 'huber(delta: 0.5)', optimizer: 'adam(lr: 0.01)' },
  { name: 'adamw', model: mlp('relu', 1), input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adamw(lr: 0.01, weight_decay: 0.01)' },
  { name: 'sgd with weight decay', model: mlp('relu', 1), input: [2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05, weight_decay: 0.01)' },
  { name: 'rmsprop', model: mlp('sigmoid', 1), input: [2], k: 1, loss: 'mse', optimizer: 'rmsprop(lr: 0.005)' },
  { name: 'clipnorm', model: mlp('relu', 1), input: [2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.5, clipnorm: 0.05)' },
  { name: 'per-member learning rates and betas', model: mlp('sigmoid', 1), input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam', vary: 'vary lr: [0.001, 0.01, 0.05]\n  vary beta1: [0.8, 0.9, 0.95]' },
  { name: 'dropout, its rate varied per member', model: 'dense(12, activation: relu)\n  drop = dropout(0.3)\n  dense(1, activation: sigmoid)', input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', vary: 'vary drop.rate: [0.1, 0.3, 0.5]' },
  {
    name: 'add, concat and from: branches',
    model: 'h = dense(6, activation: relu)\n  r = dense(6, activation: tanh)\n  sum = add(h, r)\n  a = dense(4, activation: relu, from: sum)\n  b = dense(3, activation: tanh, from: input)\n  concat(a, b, sum)\n  dense(1, activation: sigmoid)',
    input: [2],
    k: 1,
    loss: 'binary_crossentropy',
    optimizer: 'adam(lr: 0.01)',
    metrics: '[accuracy]',
  },
  // a shared layer's gradient is the sum of the members'. After per-member layers the op path sums it over
  // all members' rows in one product, in the order the generated step adds member after member: to the bit
  // (bit for bit under mse and relu). On the shared input the op path first sums the members' gradients of its
  // value, the generated step each member's own product: they differ in the last bits of that sum
  { name: 'a shared trunk on the input, heads of their own, lr varied per head', model: 'shared dense(8, activation: relu)\n  dense(1, activation: sigmoid)', input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', vary: 'vary lr: [0.005, 0.01, 0.02]', tolerance: 1e-5 },
  { name: 'a shared layer after per-member layers, with sgd and clipnorm', model: 'dense(6, activation: relu)\n  shared dense(4, activation: relu)\n  dense(1)', input: [2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05, momentum: 0.9, clipnorm: 0.5)' },
  // layernorm's rsqrt gradient needs pow(s, 1.5), which the backend's powf gives in its own last bit now and then
  { name: 'a shared layernorm after per-member layers', model: 'dense(6, activation: relu)\n  shared dense(4, activation: relu)\n  shared layernorm()\n  dense(1)', input: [2], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', tolerance: 1e-5 },
  { name: 'a residual block (add with the shared input)', model: 'h = dense(2, activation: relu)\n  s = add(h, input)\n  relu()\n  dense(1, activation: sigmoid)', input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adamw(lr: 0.01)' },
  { name: 'a learning-rate schedule', model: mlp('tanh', 1), input: [2], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.02)', lrFactor: (m, t) => 1 / (1 + 0.03 * t * (m + 1)) },
  // lstm backpropagating through time: each step's products in the op path's order, its parameters' shares
  // added step by step from the last, as autodiff adds them. The sigmoid's and tanh's polynomials differ from
  // TF.js's in the last bit now and then, five of them per unit and step: one step's gradients are ~2e-7
  // apart already (dense_1's too, from the lstm's value alone), and through two lstms 100 steps end ~2e-6
  // apart (under sgd, sgd with momentum or adam alike)
  { name: 'lstm, its last state', model: 'lstm(5)\n  dense(1, activation: sigmoid)', input: [4, 3], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")' },
  // an embedding's gradient is the output's scattered onto the rows read, added in order where ids repeat, as
  // the op path's ScatterNd adds them; its positions' the output's column sums: bit for bit under a linear
  // dense and mse. Under an lstm its table takes the lstm's last-bit differences (above): 1.4e-6 after 100 steps
  { name: 'an embedding into an lstm', model: 'embedding(7, 3)\n  lstm(4)\n  dense(1, activation: sigmoid)', input: [5], ids: 7, k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")', tolerance: 1e-5 },
  { name: 'an embedding with positions', model: 'embedding(6, 3, positions: 4)\n  flatten()\n  dense(1)', input: [4], ids: 6, k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05)', data: 'csv("images.csv")', tolerance: 0 },
  { name: 'lstm of every step into an lstm', model: 'lstm(6, sequences: true)\n  lstm(3)\n  dense(1)', input: [5, 2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05, momentum: 0.9)', data: 'csv("images.csv")', tolerance: 1e-5 },
  // gru as lstm: both forms of the candidate, each step's operations in the op path's cell's order
  ...[true, false].map((after) => ({ name: `gru(reset_after: ${after}), its last state`, model: `gru(5, reset_after: ${after})\n  dense(1, activation: sigmoid)`, input: [4, 3], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")' })),
  { name: 'gru of every step into a gru', model: 'gru(6, sequences: true, reset_after: false)\n  gru(3)\n  dense(1)', input: [5, 2], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05, momentum: 0.9)', data: 'csv("images.csv")', tolerance: 1e-5 },
  { name: 'gru of every step into a global pool', model: 'gru(4, sequences: true)\n  global_avg_pool()\n  dense(1)', input: [5, 3], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")' },
  // dense and layernorm on a sequence [T, F]: B*T rows of F; 9 steps of batch 6 are 54 rows, so the second
  // kernel's gradient sums them in TF.js's blocks of 48 (the first's, on the shared input, in one run): bit for
  // bit (summed in one run, 100 steps end 2.6e-7 apart). Layernorm's pow(s, 1.5) (above): 1.4e-6
  { name: 'dense on a sequence', model: 'dense(5, activation: relu)\n  dense(4)\n  flatten()\n  dense(1)', input: [9, 3], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")', tolerance: 0 },
  { name: 'layernorm on a sequence', model: 'dense(6, activation: relu)\n  layernorm()\n  flatten()\n  dense(1)', input: [9, 3], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")', tolerance: 1e-5 },
  // attention: its projections as dense layers on the B*T rows, per example and head the scores, scale, mask,
  // softmax and products in the op path's order. Of one step its softmax is exactly 1 on both paths: bit for
  // bit. Over more steps the softmax is XNNPACK's own exp (above): one step's gradients are ~5e-7 apart and
  // 100 sgd steps end within 5.6e-6 (the transformer block, input [9, 3]). The key projection's bias has a
  // gradient of exactly 0 but for rounding (a softmax is blind to adding one value to every score of a row):
  // under sgd it stays within the 1e-2 floor of maxRelDiff, but Adam steps it by ~lr on either path's own
  // rounding noise, so these cases run sgd (under Adam every other parameter and slot ends within 5.4e-7)
  { name: 'attention of one step', model: 'dense(4)\n  attention(2)\n  flatten()\n  dense(1)', input: [1, 4], k: 1, loss: 'mse', optimizer: 'adam(lr: 0.01)', data: 'csv("images.csv")', tolerance: 0 },
  { name: 'attention on the shared input', model: 'attention(2)\n  flatten()\n  dense(1)', input: [9, 8], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.01, momentum: 0.9)', data: 'csv("images.csv")', tolerance: 1e-5 },
  { name: 'causal attention after a dense layer', model: 'dense(6)\n  attention(3, causal: true)\n  flatten()\n  dense(1)', input: [9, 3], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05)', data: 'csv("images.csv")', tolerance: 1e-5 },
  { name: "examples/transformer.net's encoder block", model: 'x = dense(8)\n  a = attention(2)\n  r = add(x, a)\n  n = layernorm()\n  dense(16, activation: relu)\n  f = dense(8)\n  add(n, f)\n  layernorm()\n  flatten()\n  dense(1)', input: [9, 3], k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.02)', data: 'csv("images.csv")', tolerance: 1e-5 },
  // conv models: XNNPACK's conv sums over the window's (row, column, channel) in order, and the generated
  // step in the same order (src/wasm/conv.ts)
  ...convCases(),
];

function convCases(): Case[] {
  const conv = (name: string, model: string, optimizer = 'adam(lr: 0.01)', extra: Partial<Case> = {}): Case => ({ name, model, input: [7, 7, 2], k: 1, loss: 'mse', optimizer, data: 'csv("images.csv")', ...extra });
  return [
    conv('conv2d valid, relu', 'conv2d(3, kernel: 3, activation: relu)\n  conv2d(4, kernel: 2, activation: relu)\n  flatten()\n  dense(1)'),
    conv('conv2d same, tanh', 'conv2d(3, kernel: 3, padding: same, activation: tanh)\n  conv2d(2, kernel: 3, padding: same, activation: tanh)\n  flatten()\n  dense(1)', 'adam(lr: 0.005)'),
    // the same under sgd with momentum: tanh's polynomial differs from TF.js's in the last bit now and then,
    // and each conv's dbias and dkernel add those differences up over every (example, cell): 100 steps end
    // ~2e-6 apart (with relu, as above, bit for bit)
    conv('conv2d same, tanh, sgd', 'conv2d(3, kernel: 3, padding: same, activation: tanh)\n  conv2d(2, kernel: 3, padding: same, activation: tanh)\n  flatten()\n  dense(1)', 'sgd(lr: 0.005, momentum: 0.9)', { tolerance: 1e-5 }),
    conv('conv2d stride 2, valid and same', 'conv2d(4, kernel: 3, stride: 2, activation: relu)\n  conv2d(3, kernel: 2, stride: 2, padding: same, activation: relu, bias: false)\n  flatten()\n  dense(1)'),
    conv('maxpool2d, valid and same, overlapping', 'conv2d(3, kernel: 2, activation: relu)\n  maxpool2d(2)\n  conv2d(2, kernel: 1)\n  maxpool2d(3, stride: 2, padding: same)\n  flatten()\n  dense(1)'),
    conv('avgpool2d, valid and same, overlapping', 'conv2d(3, kernel: 2, activation: relu)\n  avgpool2d(2)\n  conv2d(2, kernel: 1)\n  avgpool2d(3, stride: 2, padding: same)\n  flatten()\n  dense(1)', 'sgd(lr: 0.05)', { tolerance: 0 }),
    // global pooling: the mean as TF.js's wasm Mean sums it (each channel's cells in row-major order, then
    // divided by the count), the maximum as its Max keeps it; channels as vectors of 4 and a scalar tail.
    // Bit for bit (under relu: tanh's polynomial would differ in a last bit now and then, as above)
    conv('global_avg_pool', 'conv2d(6, kernel: 3, padding: same, activation: relu)\n  global_avg_pool()\n  dense(1)', 'sgd(lr: 0.05)', { tolerance: 0 }),
    conv('global_max_pool', 'conv2d(5, kernel: 2, activation: relu)\n  global_max_pool()\n  dense(1)', 'adam(lr: 0.01)', { tolerance: 0 }),
    conv('global pools of the shared input and of a conv, concatenated', 'a = global_max_pool()\n  c = conv2d(4, kernel: 3, from: input, activation: relu)\n  m = global_avg_pool()\n  concat(a, m)\n  dense(1)', 'adam(lr: 0.01)', { tolerance: 0 }),
    // the sequence kinds: conv1d and the 1-D pools as their 2-D rules on an image of one row, the global pools
    // over a sequence's steps as over an image's cells
    conv('conv1d, the 1-D pools and the global pools over steps', 'conv1d(4, kernel: 3, padding: same, activation: relu)\n  maxpool1d(2)\n  c = conv1d(3, kernel: 2, stride: 2, activation: relu)\n  avgpool1d(2, stride: 1, padding: same)\n  a = global_avg_pool()\n  m = global_max_pool(from: c)\n  concat(a, m)\n  dense(1)', 'adam(lr: 0.01)', { input: [9, 3] }),
    // batchnorm of images: statistics per channel over (example, row, column), in that order, as TF.js's
    // moments sum them (src/layers/channels.ts): bit for bit
    conv('batchnorm after conv2d, its momentum and epsilon varied', 'conv2d(3, kernel: 3, padding: same, bias: false)\n  norm = batchnorm()\n  relu()\n  conv2d(2, kernel: 3)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', { vary: 'vary norm.momentum: [0.5, 0.9, 0.99]\n  vary norm.epsilon: [0.001, 0.01, 0.1]' }),
    conv('batchnorm of the input image, then pooled', 'batchnorm()\n  conv2d(3, kernel: 2, activation: relu)\n  batchnorm(momentum: 0.8)\n  maxpool2d(2)\n  flatten()\n  dense(1)', 'sgd(lr: 0.01, momentum: 0.9)'),
    // a shared conv2d's dkernel is the members' sum: after per-member layers the op path takes it from all
    // members' folded rows by patches, (example, row, column) in order, member after member, as the
    // generated step adds each member's on: bit for bit. On the shared input the op path runs it once, on
    // the members' gradients of its value summed first, the generated step on each member's own: 20 steps
    // end within 4e-7, 100 within 4e-7 (adam)
    conv('a shared conv2d after per-member layers', 'conv2d(3, kernel: 2, padding: same, activation: relu)\n  shared conv2d(4, kernel: 3, activation: relu)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', { vary: 'vary lr: [0.005, 0.01, 0.02]' }),
    conv('a shared conv trunk on the input, heads of their own', 'shared conv2d(3, kernel: 3, padding: same, activation: relu)\n  maxpool2d(2)\n  conv2d(2, kernel: 2, activation: relu)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)'),
    // one filter on more than one channel: XNNPACK's own conv, summed as any other (bit for bit here). On one
    // channel it convolves depthwise, in an order of its own (not covered), and so does its filter gradient
    // of a one-example batch: 100 steps at batch 1 end 1.3e-7 apart
    conv('conv2d with one filter', 'conv2d(1, kernel: 3, padding: same, activation: relu)\n  conv2d(3, kernel: 3, activation: relu)\n  conv2d(1, kernel: 2, activation: relu)\n  flatten()\n  dense(1)'),
    // the softmax's op path is XNNPACK's own exp (see above): under adam 100 steps end ~1.5e-6 apart, under sgd ~6e-7
    ...['adam(lr: 0.005)', 'sgd(lr: 0.05)'].map((optimizer) => ({
      name: `a LeNet-like stack, ${optimizer.replace(/\(.*/, '')}`,
      model: 'conv2d(6, kernel: 5, padding: same, activation: relu)\n  maxpool2d(2)\n  conv2d(16, kernel: 5, activation: relu)\n  avgpool2d(2)\n  flatten()\n  dense(10, activation: softmax)',
      input: [12, 12, 1],
      k: 10,
      loss: 'sparse_categorical_crossentropy',
      optimizer,
      metrics: '[accuracy]',
      data: 'csv("digits.csv")',
      ...(optimizer.startsWith('adam') ? { tolerance: 1e-5 } : {}),
    })),
  ];
}

function source(c: Case): string {
  const [lossName, lossArgs] = c.loss.includes('(') ? [c.loss.slice(0, c.loss.indexOf('(')), c.loss] : [c.loss, c.loss];
  void lossName;
  return `model m(input: [${c.input.join(', ')}]) {\n  ${c.model}\n}\nensemble {\n  members: 3\n  seed: 4\n  ${c.vary ?? ''}\n}\ntrain {\n  data: ${c.data ?? 'xor(n: 60)'}\n  loss: ${lossArgs}\n  optimizer: ${c.optimizer}\n  batch: 6\n  epochs: 1\n${c.metrics ? `  metrics: ${c.metrics}\n` : ''}}\n`;
}

describe('what the generated step does not cover trains on ops, and says why', () => {
  const uncovered: [string, string, number[], string][] = [
    ['layernorm of an image', 'conv2d(3, kernel: 3, activation: relu)\n  layernorm()\n  flatten()\n  dense(1)', [6, 6, 2], 'layernorm of an input with more than one axis (layernorm_1)'],
    ['one filter on one channel', 'conv2d(1, kernel: 3, activation: relu)\n  conv2d(1, kernel: 2)\n  flatten()\n  dense(1)', [6, 6, 1], 'conv2d with one filter on one channel (conv2d_1)'],
    ['a shared gru', 'shared gru(3)\n  dense(1)', [4, 2], "a shared gru (the op path sums each step's gradient over every member's rows before the next step's) (gru_1)"],
    ['a shared lstm', 'shared lstm(3)\n  dense(1)', [4, 2], "a shared lstm (the op path sums each step's gradient over every member's rows before the next step's) (lstm_1)"],
    ['a shared attention layer', 'shared attention(2)\n  flatten()\n  dense(1)', [3, 4], "a shared attention layer (the op path sums its projections' gradients over every member's rows at once) (attention_1)"],
  ];
  for (const [name, model, input, why] of uncovered) {
    it(name, () => {
      const [p] = populations(source({ name, model, input, k: 1, loss: 'mse', optimizer: 'sgd', data: 'csv("images.csv")' }), ['auto']);
      expect(p.engine).toBe('ops');
      expect(p.engineNote).toBe(why);
      p.dispose();
    });
  }
});

describe('members on data of their own (split: x [N, B, ...], labels [N, B, K])', () => {
  it('kfold(3): 100 steps end within 1e-6 of the op path', async () => {
    const text = source({ name: 'kfold', model: mlp('tanh', 1), input: [2], k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: '[accuracy]', vary: 'split: kfold(3)' });
    const [ops, fused] = populations(text, ['ops', 'fused']);
    expect(fused.engine, fused.engineNote).toBe('fused');
    for (let step = 0; step < 100; step++) {
      const parts = [0, 1, 2].map((m) => batchFor(step * 3 + m, [2], 'binary_crossentropy', 1));
      const x = tf.stack(parts.map((p) => p.x as never)) as unknown as Tensor;
      const y = tf.stack(parts.map((p) => p.y as never)) as unknown as Tensor;
      const seen = [ops, fused].map((p) => {
        let metrics: Record<string, Tensor> = {};
        const losses = p.step({ kind: 'tensors', x, y, metrics: { names: ['accuracy'], take: (v) => (metrics = v) } });
        const out = [losses.dataSync(), metrics.accuracy.dataSync()];
        tf.dispose([losses as never, metrics.accuracy as never]);
        return out;
      });
      expect(maxRelDiff(seen[1][0], seen[0][0]), `step ${step} loss`).toBeLessThanOrEqual(1e-5);
      expect(Array.from(seen[1][1])).toEqual(Array.from(seen[0][1]));
      tf.dispose([x as never, y as never, ...parts.flatMap((p) => [p.x as never, p.y as never])]);
    }
    const [a, b] = [await ops.exportState(), await fused.exportState()];
    for (const [name, values] of a) expect(maxRelDiff(b.get(name)!, values), name).toBeLessThanOrEqual(1e-6);
  });
});

describe('the generated step against the op path', () => {
  for (const c of cases) {
    it(`${c.name}: 100 steps end within ${c.tolerance ?? 1e-6} in every parameter and slot`, async () => {
      const [ops, fused] = populations(source(c), ['ops', 'fused'], c.lrFactor);
      expect(ops.engine).toBe('ops');
      expect(fused.engine, fused.engineNote).toBe('fused');
      const lossName = c.loss.replace(/\(.*$/, '');
      const names = c.metrics ? c.metrics.slice(1, -1).split(',').map((s) => s.trim()) : [];
      for (let step = 0; step < 100; step++) {
        const { x, y } = batchFor(step, c.input, lossName, c.k, 6, c.ids);
        const seen = [ops, fused].map((p) => {
          let metrics: Record<string, Tensor> = {};
          const losses = p.step({ kind: 'tensors', x, y, metrics: { names, take: (v) => (metrics = v) } });
          const out = { loss: losses.dataSync(), ...Object.fromEntries(names.map((m) => [m, metrics[m].dataSync()])) };
          tf.dispose([losses as never, ...(Object.values(metrics) as never[])]);
          return out;
        });
        for (const key of Object.keys(seen[0])) {
          const d = maxRelDiff(seen[1][key as 'loss'], seen[0][key as 'loss']);
          expect(d, `step ${step} ${key}`).toBeLessThanOrEqual(1e-5);
        }
        tf.dispose([x as never, y as never]);
      }
      const [a, b] = [await ops.exportState(), await fused.exportState()];
      for (const [name, values] of a) expect(maxRelDiff(b.get(name)!, values), name).toBeLessThanOrEqual(c.tolerance ?? 1e-6);
      ops.dispose();
      fused.dispose();
    });
  }
});

describe('a batch from the host (step() with `host`, what netc train runs)', () => {
  const hostCases = cases.filter((c) => ['binary cross-entropy', 'dropout, its rate varied per member', 'sparse categorical cross-entropy', 'batchnorm, its momentum and epsilon varied per member'].includes(c.name));
  for (const c of hostCases) {
    it(`${c.name}: the same losses, metrics, parameters and slots, bit for bit, as a batch in tensors`, async () => {
      const [tensors, host] = populations(source(c), ['fused', 'fused']);
      expect(host.hostSteps).toBe(true);
      const lossName = c.loss.replace(/\(.*$/, '');
      const names = c.metrics ? c.metrics.slice(1, -1).split(',').map((s) => s.trim()) : [];
      for (let step = 0; step < 30; step++) {
        // a short last batch now and then: the module is generated for the largest
        const { x, y } = batchFor(step, c.input, lossName, c.k, step % 7 === 6 ? 4 : 6, c.ids);
        let metrics: Record<string, Tensor> = {};
        const losses = tensors.step({ kind: 'tensors', x, y, metrics: { names, take: (v) => (metrics = v) } });
        const fromHost = host.step({ kind: 'host', x: x.dataSync() as Float32Array, y: y.dataSync() as Float32Array, size: x.shape[0], names: names });
        expect(Array.from(fromHost.loss), `step ${step}`).toEqual(Array.from(losses.dataSync()));
        for (const m of names) expect(Array.from(fromHost[m]), `step ${step} ${m}`).toEqual(Array.from(metrics[m].dataSync()));
        tf.dispose([x as never, y as never, losses as never, ...(Object.values(metrics) as never[])]);
      }
      const [a, b] = [await tensors.exportState(), await host.exportState()];
      for (const [name, values] of a) expect(Array.from(b.get(name)!), name).toEqual(Array.from(values));
      tensors.dispose();
      host.dispose();
    });
  }
});

describe('the step plan, made once per run', () => {
  it('names the engine, its target and why; a population takes a given plan as is and hands it to gather()', () => {
    const c = cases.find((k) => k.name === 'binary cross-entropy')!;
    const state = compile(source(c), 'case.net', { lowering: 'grouped' });
    const own = populationOf(state, 'auto');
    expect(own.plan).toMatchObject({ requested: 'auto', engine: 'fused', target: 'webassembly' });
    expect(own.plan.why).toBeUndefined();
    // a plan on ops, given where the fused step would run: the population runs what the plan says
    const train = state.program!.train!;
    const plan = planStep(tf as unknown as TF, 'ops', new StepCode({ ensemble: state.ensemble!, optimizer: train.optimizer.name, loss: train.loss, metrics: [] }));
    const given = new Population({ ...own.spec, plan });
    expect([given.engine, given.hostSteps]).toEqual(['ops', false]);
    const gathered = given.gather([0]);
    expect(gathered.plan).toBe(plan);
    for (const p of [own, given, gathered]) p.dispose();
  });

  it("holds the run's generated code: populations of one plan generate and compile each step once between them", () => {
    const c = cases.find((k) => k.name === 'binary cross-entropy')!;
    const state = compile(source(c), 'case.net', { lowering: 'grouped' });
    const first = populationOf(state, 'fused');
    const { plan } = first;
    expect(plan.code.made).toBe(0);
    const second = new Population({ ...first.spec, plan });
    const survivors = first.gather([0, 1]);
    const { x, y } = batchFor(0, c.input, 'binary_crossentropy', c.k);
    for (const p of [first, second, survivors]) p.step({ kind: 'tensors', x, y }).dispose();
    // one training step for batches of 6 and no metrics, whichever population asked first
    expect(plan.code.made).toBe(1);
    // an evaluation is another step (inference mode), made once too
    for (const p of [first, second]) tf.dispose(Object.values(p.evaluate(x, y)) as never);
    expect(plan.code.made).toBe(2);
    tf.dispose([x as never, y as never]);
    for (const p of [first, second, survivors]) p.dispose();
  });
});

describe('the generated evaluation (forward in inference mode, loss and metrics)', () => {
  const evalCases = cases.filter((c) => ['dropout, its rate varied per member', 'batchnorm, its momentum and epsilon varied per member', 'batchnorm after conv2d, its momentum and epsilon varied', 'categorical cross-entropy', 'a shared trunk on the input, heads of their own, lr varied per head', 'no bias', 'lstm of every step into an lstm', 'an embedding into an lstm', 'gru of every step into a gru'].includes(c.name));
  for (const c of evalCases) {
    it(`${c.name}: the op path's values after 20 steps, on batches of 64 and a short one`, async () => {
      const [ops, fused] = populations(source(c), ['ops', 'fused']);
      const lossName = c.loss.replace(/\(.*$/, '');
      const names = c.metrics ? c.metrics.slice(1, -1).split(',').map((s) => s.trim()) : [];
      for (let step = 0; step < 20; step++) {
        const { x, y } = batchFor(step, c.input, lossName, c.k, 6, c.ids);
        for (const p of [ops, fused]) p.step({ kind: 'tensors', x, y }).dispose();
        tf.dispose([x as never, y as never]);
      }
      for (const size of [64, 10]) {
        const { x, y } = batchFor(1000 + size, c.input, lossName, c.k, size, c.ids);
        const [a, b] = [ops.evaluate(x, y, names), fused.evaluate(x, y, names)];
        for (const key of ['loss', ...names]) expect(maxRelDiff(b[key].dataSync(), a[key].dataSync()), `${key} on ${size}`).toBeLessThanOrEqual(1e-5);
        tf.dispose([x as never, y as never, ...(Object.values(a) as never[]), ...(Object.values(b) as never[])]);
      }
      ops.dispose();
      fused.dispose();
    });
  }
});
