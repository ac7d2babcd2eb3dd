// The generated WGSL step (src/step/wgsl.ts, src/runtime/gpu-fused-step.ts) on TF.js's WebGPU backend
// (Dawn on Mesa's lavapipe here), against the webgpu op path on the same adapter: 100 steps end within
// 1e-5 (relative, on the scale of each tensor) in every parameter and optimizer slot, for each activation,
// loss and optimizer it covers, for dropout (its rate per member, on dense and conv values), layernorm and batchnorm (its running statistics; with adam; both of images too), shared layernorms (on the input, a shared layer's value and members' values), and for small conv models (with a concat of images among them) (conv2d, pooling, flatten; leaky_relu on conv
// values and a conv's clipnorm against the cpu op path, which the webgpu op path cannot train), for sequences [T, F] (conv1d,
// pool1d and global pools, dense and layernorm on B*T rows, an embedding of token ids), and evaluation by the WGSL kernels; a member's numbers are the same bit for bit whoever trains beside it
// (N = 1, 3, 7); what it does not cover runs on ops and says why. Never a silent pass: without an adapter
// the tests are skipped with the reason printed, and NETC_REQUIRE_WEBGPU=1 makes a missing adapter fail.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { compile } from '../src/pipeline.js';
import { Population, type Engine } from '../src/runtime/population.js';
import { GpuFusedStep } from '../src/runtime/gpu-fused-step.js';
import { selectBackend } from '../src/runtime/backend.js';
import { Rng } from '../src/util/rng.js';
import type { TF, Tensor } from '../src/kernels/tf.js';
import { maxRelDiff, populationOf } from './equivalence/harness.js';
import { webgpuUnavailable } from './helpers.js';

/**
 * A run's limit: a second on a quiet machine, but lavapipe shares the two cores with the suite's other files
 * (and with Chromium's); under that load a member check once took more than a minute.
 */
const WEBGPU_TEST_MS = 180_000;

/**
 * Steps each case trains on both engines before its parameters and slots are compared (losses and metrics every
 * tenth step). Not fewer: at 50 the batchnorm case's momentum slot ends 1.28e-5 from the op path's (it is within
 * 1e-5 at 100), so the bound holds at 100 steps, not at every step.
 */
const STEPS = 100;

const missing = await webgpuUnavailable();
const required = process.env['NETC_REQUIRE_WEBGPU'] === '1';
const skip = missing != null && !required;
if (skip) console.warn(`SKIPPED: the WGSL fused-step tests did not run: ${missing}`);

beforeAll(async () => {
  if (missing) {
    if (required) throw new Error(`NETC_REQUIRE_WEBGPU=1 but ${missing}`);
    return;
  }
  await selectBackend('webgpu', { log: () => {} });
});

function populations(source: string, engines: Engine[], ids?: number[], lrFactor?: (member: number, step: number) => number): Population[] {
  const state = compile(source, 'wgsl.net', ids ? { members: ids.length } : {});
  return engines.map((engine) => populationOf(state, engine, { memberIds: ids, lrFactor }));
}

/** A reproducible batch: x [B, in] (or [B, ...shape]), labels as the loss reads them (0/1, one-hot rows, class indices [B, 1], or normal). */
function batchFor(step: number, inWidth: number, k: number, loss: string, b = 6, shape = [inWidth], vocab?: number): { x: Tensor; y: Tensor } {
  const rng = Rng.of(step, 'wgsl-step');
  // token ids in [0, vocab) where an embedding reads them
  const x = tf.tensor(Float32Array.from({ length: b * inWidth }, () => (vocab ? Math.floor(rng.uniform() * vocab) : rng.normal())), [b, ...shape]);
  const classes = Array.from({ length: b }, () => Math.floor(rng.uniform() * k));
  let y: tf.Tensor;
  if (loss === 'sparse_categorical_crossentropy') y = tf.tensor(Float32Array.from(classes), [b, 1]);
  else if (loss === 'categorical_crossentropy') y = tf.tensor(Float32Array.from({ length: b * k }, (_, i) => (classes[Math.floor(i / k)] === i % k ? 1 : 0)), [b, k]);
  else y = tf.tensor(Float32Array.from({ length: b * k }, () => (loss === 'binary_crossentropy' ? (rng.uniform() < 0.5 ? 0 : 1) : rng.normal())), [b, k]);
  return { x: x as unknown as Tensor, y: y as unknown as Tensor };
}

/**
 * One step; the members' losses and metrics, read back where `read` (each read waits for the device: on
 * lavapipe a read costs more than a step, so the tests read every tenth step).
 */
async function step(p: Population, x: Tensor, y: Tensor, names: string[], read = true): Promise<Record<string, Float32Array>> {
  let metrics: Record<string, Tensor> = {};
  const losses = p.step({ kind: 'tensors', x, y, metrics: { names, take: (v) => (metrics = v) } });
  const out: Record<string, Float32Array> = {};
  if (read) {
    out.loss = (await losses.data()) as Float32Array;
    for (const m of names) out[m] = (await metrics[m].data()) as Float32Array;
  }
  tf.dispose([losses as never, ...(Object.values(metrics) as never[])]);
  return out;
}

interface Case {
  name: string;
  model: string;
  inWidth: number;
  /** an image input [H, W, C] (inWidth its size) */
  input?: number[];
  /** token ids in [0, vocab) as the input (an embedding's) */
  vocab?: number;
  k: number;
  loss: string;
  optimizer: string;
  metrics: string[];
  vary: string;
  /** a learning-rate schedule: member id's factor at step t (the trainer's lrPlan gives one) */
  lrFactor?: (member: number, step: number) => number;
  /** parameters the member check leaves out: a shared layer's that even the lr of 1e-30 moves, by the members' sum (a shared layernorm's beta, which starts at 0) */
  moved?: string[];
}

const cases: Case[] = [
  { name: 'sigmoid, binary cross-entropy, adam, lr per member (the forum model)', model: 'dense(20, activation: sigmoid)\n  dense(1, activation: sigmoid)', inWidth: 2, k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: ['accuracy'], vary: 'vary lr: [0.005, 0.02, 0.05]' },
  { name: 'relu and linear, mse, sgd with nesterov momentum, lr per member and a schedule', model: 'dense(8, activation: relu)\n  dense(1)', inWidth: 2, k: 1, loss: 'mse', optimizer: 'sgd(lr: 0.05, momentum: 0.9, nesterov: true)', metrics: ['mse', 'mae'], vary: 'vary lr: [0.01, 0.03, 0.05]', lrFactor: (m, t) => 1 / (1 + 0.03 * t * (m + 1)) },
  { name: 'tanh and elu, mae, adam, no bias, betas per member', model: 'dense(6, activation: tanh, bias: false)\n  dense(4, activation: elu)\n  dense(2)', inWidth: 3, k: 2, loss: 'mae', optimizer: 'adam(lr: 0.01)', metrics: ['mae'], vary: 'vary beta1: [0.8, 0.9, 0.95]' },
  { name: 'sgd with weight decay, binary cross-entropy of 3 outputs, accuracy by argmax', model: 'dense(5, activation: relu)\n  dense(3, activation: sigmoid)', inWidth: 4, k: 3, loss: 'binary_crossentropy', optimizer: 'sgd(lr: 0.1, weight_decay: 0.01)', metrics: ['accuracy'], vary: 'vary lr: [0.05, 0.1, 0.2]' },
  { name: 'softmax and categorical cross-entropy, adam, accuracy by argmax', model: 'dense(6, activation: tanh)\n  dense(4, activation: softmax)', inWidth: 3, k: 4, loss: 'categorical_crossentropy', optimizer: 'adam(lr: 0.01)', metrics: ['accuracy', 'mse'], vary: 'vary lr: [0.005, 0.01, 0.03]' },
  { name: 'a softmax inside, sparse categorical cross-entropy, sgd with momentum', model: 'dense(5, activation: softmax)\n  dense(3, activation: softmax)', inWidth: 2, k: 3, loss: 'sparse_categorical_crossentropy', optimizer: 'sgd(lr: 0.1, momentum: 0.9)', metrics: ['accuracy', 'mae'], vary: 'vary momentum: [0.5, 0.8, 0.9]' },
  { name: 'gelu, huber (both sides of delta), rmsprop with momentum, rho per member', model: 'dense(6, activation: gelu)\n  dense(2)', inWidth: 3, k: 2, loss: 'huber(delta: 0.5)', optimizer: 'rmsprop(lr: 0.01, momentum: 0.5)', metrics: ['mse'], vary: 'vary rho: [0.8, 0.9, 0.95]' },
  { name: 'swish and leaky_relu, mse, adamw, weight decay per member', model: 'dense(6, activation: swish)\n  dense(4, activation: leaky_relu)\n  dense(1)', inWidth: 2, k: 1, loss: 'mse', optimizer: 'adamw(lr: 0.02)', metrics: ['mae'], vary: 'vary weight_decay: [0, 0.01, 0.1]' },
  {
    name: 'activation layers (leaky_relu with alpha per member, gelu, swish, elu, softmax), categorical cross-entropy, sgd',
    model: 'dense(6)\n  act = leaky_relu(0.1)\n  dense(5)\n  gelu()\n  swish()\n  dense(4)\n  elu()\n  dense(3)\n  softmax()',
    inWidth: 3,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'sgd(lr: 0.1, momentum: 0.5)',
    metrics: ['accuracy'],
    vary: 'vary act.alpha: [0, 0.1, 0.3]',
  },
  { name: 'clipnorm per member (one never clips, one always), adam, relu(), sigmoid() and tanh() layers', model: 'dense(6)\n  relu()\n  dense(4)\n  tanh()\n  dense(1)\n  sigmoid()', inWidth: 2, k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: ['accuracy'], vary: 'vary clipnorm: [0, 0.02, 1]' },
  { name: 'dropout on the input and after layers, its rate per member (one never drops), adam', model: 'dropout(0.25)\n  dense(8, activation: relu)\n  drop = dropout(0.3)\n  dense(4, activation: tanh)\n  dropout(0.2)\n  dense(1, activation: sigmoid)', inWidth: 3, k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: ['accuracy'], vary: 'vary drop.rate: [0, 0.3, 0.6]' },
  { name: 'layernorm with its epsilon per member, after a dense and on the input, categorical cross-entropy, rmsprop', model: 'layernorm()\n  dense(6, activation: tanh)\n  ln = layernorm()\n  dense(3, activation: softmax)', inWidth: 4, k: 3, loss: 'categorical_crossentropy', optimizer: 'rmsprop(lr: 0.01)', metrics: ['accuracy'], vary: 'vary ln.epsilon: [0.001, 0.01, 0.5]' },
  { name: 'dropout and layernorm with clipnorm per member (one never clips, one always), adamw', model: 'dense(8, activation: relu)\n  layernorm(epsilon: 0.01)\n  dropout(0.3)\n  dense(2)', inWidth: 3, k: 2, loss: 'huber', optimizer: 'adamw(lr: 0.02)', metrics: ['mae'], vary: 'vary clipnorm: [0, 0.02, 1]' },
  { name: 'batchnorm with its momentum and epsilon per member, on the input and after dense layers, running statistics, clipnorm per member, sgd with momentum', model: 'batchnorm()\n  dense(6, activation: relu)\n  bn = batchnorm()\n  dense(4, activation: tanh)\n  batchnorm(momentum: 0.9, epsilon: 0.01)\n  dense(1, activation: sigmoid)', inWidth: 3, k: 1, loss: 'binary_crossentropy', optimizer: 'sgd(lr: 0.1, momentum: 0.9)', metrics: ['accuracy'], vary: 'vary bn.momentum: [0.5, 0.9, 0.99]\n  vary bn.epsilon: [0.001, 0.01, 0.1]\n  vary clipnorm: [0, 0.02, 1]' },
  // no bias on the dense layers a batchnorm reads (its mean subtraction cancels one): such a bias's gradient nearly vanishes, rounding noise that Adam divides by its own size (docs/step.md, the WGSL step's Exactness)
  { name: 'batchnorm with adam, its momentum and epsilon per member, on the input and after dense layers without bias, running statistics', model: 'batchnorm()\n  dense(6, activation: relu, bias: false)\n  bn = batchnorm()\n  dense(4, activation: tanh, bias: false)\n  batchnorm(momentum: 0.9, epsilon: 0.01)\n  dense(1, activation: sigmoid)', inWidth: 3, k: 1, loss: 'binary_crossentropy', optimizer: 'adam(lr: 0.02)', metrics: ['accuracy'], vary: 'vary bn.momentum: [0.5, 0.9, 0.99]\n  vary bn.epsilon: [0.001, 0.01, 0.1]' },
  {
    name: 'add, concat and from: branches (values read twice), binary cross-entropy, adam, lr per member',
    model: 'h = dense(6, activation: relu)\n  r = dense(6, activation: tanh)\n  sum = add(h, r)\n  a = dense(4, activation: relu, from: sum)\n  b = dense(3, activation: tanh, from: input)\n  concat(a, b, sum)\n  dense(1, activation: sigmoid)',
    inWidth: 2,
    k: 1,
    loss: 'binary_crossentropy',
    optimizer: 'adam(lr: 0.02)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.02, 0.05]',
  },
  {
    name: 'a shared trunk on the input (two shared dense layers), per-member heads, adam with the file\'s clipnorm, lr per member',
    model: 'trunk = shared dense(6, activation: relu)\n  shared dense(5, activation: tanh)\n  dense(1, activation: sigmoid)',
    inWidth: 3,
    k: 1,
    loss: 'binary_crossentropy',
    optimizer: 'adam(lr: 0.01, clipnorm: 0.05)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'an add of four (one value twice, the shared input), a shared dense layer on it, a value read four times, dropout of a concat, adamw, clipnorm per member (one never clips, one always)',
    model: 'h = dense(4, activation: elu)\n  r = dense(4, activation: tanh)\n  s = add(h, r, input, h)\n  t = shared dense(4, activation: relu)\n  c = concat(t, h)\n  dropout(0.2)\n  dense(2)',
    inWidth: 4,
    k: 2,
    loss: 'mse',
    optimizer: 'adamw(lr: 0.02)',
    metrics: ['mae'],
    vary: 'vary clipnorm: [0, 0.02, 1]',
  },
  {
    name: "shared layernorms: on the input, on a shared dense trunk's value (read by a member's dense and a member's leaky_relu(alpha)) and on members' values (a concat); mse, adam with the file's clipnorm, lr and alpha per member",
    model: 'shared layernorm()\n  shared dense(6, activation: tanh)\n  s = shared layernorm(epsilon: 0.01)\n  a = dense(4, activation: elu)\n  act = leaky_relu(0.1, from: s)\n  concat(a, act)\n  shared layernorm()\n  dense(2)',
    inWidth: 5,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01, clipnorm: 0.05)',
    metrics: ['mae'],
    vary: 'vary lr: [0.005, 0.01, 0.03]\n  vary act.alpha: [0, 0.1, 0.3]',
  },
  { name: 'clipnorm on sgd with nesterov momentum, huber of its default delta, a layer without bias', model: 'dense(5, activation: elu, bias: false)\n  dense(2)', inWidth: 3, k: 2, loss: 'huber', optimizer: 'sgd(lr: 0.05, momentum: 0.9, nesterov: true, clipnorm: 0.05)', metrics: ['mae'], vary: 'vary lr: [0.02, 0.05, 0.1]' },
];

/**
 * Conv models (small: lavapipe runs on the CPU): same and valid padding, strides, overlapping and padded
 * pools, both kernel layouts. No nesterov with a member's own conv: the op path's nesterov step on its
 * [N, kh, kw, C, F] kernel is a Select of rank 5, which TF.js's webgpu backend does not have.
 */
const convCases: Case[] = [
  {
    name: 'conv same relu, dropout on its values (rate per member), maxpool, conv valid tanh, flatten, softmax dense; categorical cross-entropy, adam',
    model: 'conv2d(3, kernel: 3, padding: same, activation: relu)\n  drop = dropout(0.3)\n  maxpool2d(2)\n  conv2d(4, kernel: 2, activation: tanh)\n  flatten()\n  dense(3, activation: softmax)',
    input: [6, 6, 2],
    inWidth: 72,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]\n  vary drop.rate: [0, 0.3, 0.6]',
  },
  {
    name: 'conv stride 2 sigmoid, avgpool same stride 1, conv [2, 3] stride [1, 2] same elu without bias, maxpool same stride 1; mse, sgd with momentum',
    model:
      'conv2d(3, kernel: 3, stride: 2, activation: sigmoid)\n  avgpool2d(2, stride: 1, padding: same)\n  conv2d(2, kernel: [2, 3], stride: [1, 2], padding: same, activation: elu, bias: false)\n  maxpool2d(2, stride: 1, padding: same)\n  flatten()\n  dense(1)',
    input: [7, 7, 1],
    inWidth: 49,
    k: 1,
    loss: 'mse',
    optimizer: 'sgd(lr: 0.05, momentum: 0.9)',
    metrics: ['mae'],
    vary: 'vary momentum: [0.5, 0.8, 0.9]',
  },
  {
    name: 'conv same gelu, maxpool, conv valid swish, flatten, leaky_relu(alpha) layer per member; huber, adamw',
    model: 'conv2d(3, kernel: 3, padding: same, activation: gelu)\n  maxpool2d(2)\n  conv2d(2, kernel: 2, activation: swish)\n  flatten()\n  dense(3)\n  act = leaky_relu(0.1)\n  dense(1)',
    input: [6, 6, 2],
    inWidth: 72,
    k: 1,
    loss: 'huber(delta: 0.5)',
    optimizer: 'adamw(lr: 0.01)',
    metrics: ['mae'],
    vary: 'vary act.alpha: [0, 0.1, 0.3]',
  },
  {
    name: 'conv elu, avgpool stride 1, swish() layer, conv gelu without bias, gelu() layer, flatten, softmax dense; categorical cross-entropy, rmsprop',
    model: 'conv2d(2, kernel: 3, activation: elu)\n  avgpool2d(2, stride: 1)\n  swish()\n  conv2d(2, kernel: 2, activation: gelu, bias: false)\n  gelu()\n  flatten()\n  dense(2, activation: softmax)',
    input: [6, 6, 1],
    inWidth: 36,
    k: 2,
    loss: 'categorical_crossentropy',
    optimizer: 'rmsprop(lr: 0.01)',
    metrics: ['accuracy'],
    vary: 'vary rho: [0.8, 0.9, 0.95]',
  },
  {
    name: 'a residual conv block: add of two convs\' values (one read twice), maxpool, flatten, softmax dense; categorical cross-entropy, adam, lr per member',
    model: 'c1 = conv2d(2, kernel: 3, padding: same, activation: relu)\n  c2 = conv2d(2, kernel: 3, padding: same, activation: tanh)\n  add(c1, c2)\n  maxpool2d(2)\n  flatten()\n  dense(3, activation: softmax)',
    input: [6, 6, 1],
    inWidth: 36,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'batchnorm of images (per member and channel over example, row and column; momentum and epsilon per member; running statistics), read twice: by a conv and by a concat of images along channels; a conv, batchnorm and pool on the concat; categorical cross-entropy, sgd with momentum',
    model: 'conv2d(2, kernel: 3, padding: same, activation: relu)\n  bn = batchnorm()\n  c2 = conv2d(3, kernel: 3, padding: same, activation: tanh)\n  concat(c2, bn)\n  conv2d(2, kernel: 2, activation: elu)\n  batchnorm(momentum: 0.9, epsilon: 0.01)\n  maxpool2d(2)\n  flatten()\n  dense(3, activation: softmax)',
    input: [6, 6, 2],
    inWidth: 72,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'sgd(lr: 0.05, momentum: 0.9)',
    metrics: ['accuracy'],
    vary: 'vary bn.momentum: [0.5, 0.9, 0.99]\n  vary bn.epsilon: [0.001, 0.01, 0.5]',
  },

  {
    name: "a shared conv trunk on the input (same padding, relu), flattened, per-member dense heads; binary cross-entropy, adam with the file's clipnorm, lr per member",
    model: 'trunk = shared conv2d(3, kernel: 3, padding: same, activation: relu)\n  flatten()\n  dense(1, activation: sigmoid)',
    input: [5, 5, 2],
    inWidth: 50,
    k: 1,
    loss: 'binary_crossentropy',
    optimizer: 'adam(lr: 0.01, clipnorm: 0.05)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: "a shared conv trunk (stride 2, no bias), a maxpool and relu() on its value (computed once), members' own conv on it, a shared conv on members' values, flatten, dense; mse, sgd with momentum",
    model: 'trunk = shared conv2d(3, kernel: 3, stride: 2, activation: tanh, bias: false)\n  maxpool2d(2, stride: 1)\n  relu()\n  conv2d(2, kernel: 2, padding: same, activation: elu)\n  shared conv2d(2, kernel: 2, activation: sigmoid)\n  flatten()\n  dense(1)',
    input: [9, 9, 1],
    inWidth: 81,
    k: 1,
    loss: 'mse',
    optimizer: 'sgd(lr: 0.05, momentum: 0.9)',
    metrics: ['mae'],
    vary: 'vary momentum: [0.5, 0.8, 0.9]',
  },
  {
    name: "members' layernorm, batchnorm, leaky_relu(alpha) and dropout on a shared conv's flattened value (read four times), concat, dense; mse, adam, their hyperparameters per member",
    model: 't = shared conv2d(2, kernel: 3, activation: relu)\n  f = flatten()\n  ln = layernorm()\n  a = dense(3, activation: tanh)\n  bn = batchnorm(from: f)\n  act = leaky_relu(0.1, from: f)\n  drop = dropout(0.3, from: f)\n  concat(a, bn, act, drop)\n  dense(2)',
    input: [5, 5, 1],
    inWidth: 25,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['mae'],
    vary: 'vary ln.epsilon: [0.001, 0.01, 0.5]\n  vary bn.momentum: [0.5, 0.9, 0.99]\n  vary act.alpha: [0, 0.1, 0.3]\n  vary drop.rate: [0, 0.3, 0.6]',
  },
  {
    name: "shared layernorms of images: on a shared tanh conv trunk's images (computed once) and on members' conv's images, flatten, dense; mse, adam, lr per member",
    model: 'shared conv2d(4, kernel: 3, activation: tanh)\n  shared layernorm()\n  conv2d(3, kernel: 2, activation: elu)\n  shared layernorm(epsilon: 0.1)\n  flatten()\n  dense(2)',
    input: [5, 5, 1],
    inWidth: 25,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.005)',
    metrics: ['mae'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'layernorm of images (per member, example and cell over the channels; epsilon per member), of a conv\'s values and of a pool\'s, a conv between; categorical cross-entropy, adam',
    model: 'conv2d(6, kernel: 3, padding: same, activation: tanh)\n  ln = layernorm()\n  conv2d(4, kernel: 2, activation: elu)\n  maxpool2d(2, stride: 1)\n  layernorm(epsilon: 0.1)\n  flatten()\n  dense(3, activation: softmax)',
    input: [6, 6, 2],
    inWidth: 72,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'adam(lr: 0.005)',
    metrics: ['accuracy'],
    vary: 'vary ln.epsilon: [0.01, 0.1, 0.5]',
  },
  {
    name: "softmax over a conv's channels (per member, example and cell): conv same, then a conv stride 2 without bias on its values, flatten, softmax dense; categorical cross-entropy, adam, lr per member",
    model: 'conv2d(4, kernel: 3, padding: same, activation: softmax)\n  conv2d(3, kernel: 2, stride: 2, activation: softmax, bias: false)\n  flatten()\n  dense(3, activation: softmax)',
    input: [5, 5, 2],
    inWidth: 50,
    k: 3,
    loss: 'categorical_crossentropy',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'conv1d and pooling over a sequence [6, 3] (the 2-D kernels on one row): conv1d same, maxpool1d, conv1d valid without bias, avgpool1d same, flatten, dense; mse, adam, lr per member',
    model: 'conv1d(4, kernel: 3, padding: same, activation: tanh)\n  maxpool1d(2)\n  conv1d(2, kernel: 2, activation: elu, bias: false)\n  avgpool1d(2, stride: 1, padding: same)\n  flatten()\n  dense(2)',
    input: [6, 3],
    inWidth: 18,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['mae'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: "global_avg_pool and global_max_pool over a sequence [6, 3] (one window over its steps) of a conv1d's values, concat, dense; mse, sgd with momentum",
    model: 'c = conv1d(4, kernel: 3, activation: tanh)\n  a = global_avg_pool(from: c)\n  g = global_max_pool(from: c)\n  concat(a, g)\n  dense(2)',
    input: [6, 3],
    inWidth: 18,
    k: 2,
    loss: 'mse',
    optimizer: 'sgd(lr: 0.05, momentum: 0.9)',
    metrics: ['mae'],
    vary: 'vary momentum: [0.5, 0.8, 0.9]',
  },
  {
    name: "global_max_pool of images [4, 4, 2] of a maxpool's with stride 1 (whose overlapping windows tie: TF.js's max gradient goes to each), global_avg_pool of a conv's, concat, dense; binary cross-entropy, adam",
    model: 'c = conv2d(3, kernel: 3, padding: same, activation: tanh)\n  maxpool2d(2, stride: 1)\n  g = global_max_pool()\n  a = global_avg_pool(from: c)\n  concat(g, a)\n  dense(1, activation: sigmoid)',
    input: [4, 4, 2],
    inWidth: 32,
    k: 1,
    loss: 'binary_crossentropy',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['accuracy'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'dense and layernorm on a sequence [6, 3] (B*T rows of F; epsilon per member), the dense on the input, flatten, dense; mse, adam',
    model: 'dense(4, activation: tanh)\n  ln = layernorm()\n  dense(3, activation: elu)\n  flatten()\n  dense(2)',
    input: [6, 3],
    inWidth: 18,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['mae'],
    vary: 'vary ln.epsilon: [0.001, 0.01, 0.5]',
  },
  {
    name: "shared dense layers on a sequence [6, 3]: on the input (computed once), and on members' values after a member's dense on the shared one's; flatten, dense; mse, sgd",
    model: 'shared dense(4, activation: tanh)\n  dense(3, activation: relu)\n  shared dense(3)\n  flatten()\n  dense(2)',
    input: [6, 3],
    inWidth: 18,
    k: 2,
    loss: 'mse',
    optimizer: 'sgd(lr: 0.05)',
    metrics: ['mae'],
    vary: 'vary lr: [0.01, 0.03, 0.05]',
  },
  {
    name: 'embedding with positions on token ids [6] (a gather, its gradient scattered onto the rows read; vocab 5, so ids repeat), dense on the sequence, flatten, dense; mse, adam',
    model: 'embedding(5, 3, positions: 6)\n  dense(2, activation: tanh)\n  flatten()\n  dense(2)',
    inWidth: 6,
    vocab: 5,
    k: 2,
    loss: 'mse',
    optimizer: 'adam(lr: 0.01)',
    metrics: ['mae'],
    vary: 'vary lr: [0.005, 0.01, 0.03]',
  },
  {
    name: 'embedding without positions, clipnorm per member (one never clips, one always), layernorm on the sequence, global_avg_pool, dense; mse, sgd with momentum',
    model: 'embedding(4, 3)\n  layernorm()\n  global_avg_pool()\n  dense(2)',
    inWidth: 6,
    vocab: 4,
    k: 2,
    loss: 'mse',
    optimizer: 'sgd(lr: 0.05, momentum: 0.9)',
    metrics: ['mae'],
    vary: 'vary clipnorm: [0, 0.02, 1]',
  },
];

function source(c: Pick<Case, 'model' | 'inWidth' | 'input' | 'loss' | 'optimizer' | 'vary'>, members = 3): string {
  return `model m(input: [${(c.input ?? [c.inWidth]).join(', ')}]) {\n  ${c.model}\n}\nensemble {\n  members: ${members}\n  seed: 4\n  ${c.vary}\n}\ntrain {\n  data: csv(\"none.csv\")\n  loss: ${c.loss}\n  optimizer: ${c.optimizer}\n  batch: 6\n  epochs: 1\n}\n`;
}

/**
 * The cases whose trained populations are also evaluated (dropout off and batchnorm by its running statistics,
 * of flat values and of images; layernorm of images; shared layernorms): the trained-steps test evaluates the
 * populations it trained rather than training the same two again, since the webgpu op path's steps are most of
 * this file's time on lavapipe.
 */
const evaluated = new Set<Case>([
  cases.find((c) => c.name.startsWith('dropout on the input'))!,
  cases.find((c) => c.name.startsWith('batchnorm with its momentum'))!,
  convCases.find((c) => c.name.startsWith('batchnorm of images'))!,
  convCases.find((c) => c.name.startsWith('layernorm of images'))!,
  cases.find((c) => c.name.startsWith('shared layernorms'))!,
]);

/** The losses and metrics of an evaluation within 1e-5 of the op path's, by the WGSL kernels: batches of 64 and 10 (a short last one). */
async function expectEvaluationsMatch(ops: Population, fused: Population, c: Case): Promise<void> {
  const wgsl = vi.spyOn(GpuFusedStep.prototype, 'run');
  try {
    for (const size of [64, 10]) {
      const { x, y } = batchFor(1000 + size, c.inWidth, c.k, c.loss, size, c.input);
      const [a, b] = [ops.evaluate(x, y, c.metrics), fused.evaluate(x, y, c.metrics)];
      for (const name of ['loss', ...c.metrics]) {
        const [want, got] = [(await a[name].data()) as Float32Array, (await b[name].data()) as Float32Array];
        expect(maxRelDiff(got, want), `batch ${size} ${name}`).toBeLessThanOrEqual(name === 'accuracy' ? 0 : 1e-5);
      }
      tf.dispose([x as never, y as never, ...(Object.values(a) as never[]), ...(Object.values(b) as never[])]);
    }
    // the fused population's two evaluations ran the WGSL kernels, the op path's none
    expect(wgsl).toHaveBeenCalledTimes(2);
  } finally {
    wgsl.mockRestore();
  }
}

describe.skipIf(skip)('the WGSL step against the webgpu op path', () => {
  for (const c of [...cases, ...convCases]) {
    const then = evaluated.has(c) ? ', then an evaluation by the WGSL kernels within 1e-5' : '';
    it(`${c.name}: ${STEPS} steps end within 1e-5 in every parameter and slot${then}`, async () => {
      const [ops, fused] = populations(source(c), ['ops', 'fused'], undefined, c.lrFactor);
      expect(ops.engine).toBe('ops');
      expect(fused.engine, fused.engineNote).toBe('fused');
      for (let s = 0; s < STEPS; s++) {
        const { x, y } = batchFor(s, c.inWidth, c.k, c.loss, 6, c.input, c.vocab);
        const read = s % 10 === 9;
        const a = await step(ops, x, y, c.metrics, read);
        const b = await step(fused, x, y, c.metrics, read);
        if (read) expect(maxRelDiff(b.loss, a.loss), `step ${s} loss`).toBeLessThanOrEqual(1e-5);
        if (read) for (const m of c.metrics) expect(maxRelDiff(b[m], a[m]), `step ${s} ${m}`).toBeLessThanOrEqual(m === 'accuracy' ? 0 : 1e-5);
        tf.dispose([x as never, y as never]);
      }
      const [want, got] = [await ops.exportState(), await fused.exportState()];
      for (const [name, values] of want) expect(maxRelDiff(got.get(name)!, values), name).toBeLessThanOrEqual(1e-5);
      if (evaluated.has(c)) await expectEvaluationsMatch(ops, fused, c);
      ops.dispose();
      fused.dispose();
    }, 120_000);
  }
});

describe.skipIf(skip)('member independence on one adapter', () => {
  // the forum model, a conv model with dropout, and the new vocabulary: activation layers with a per-member alpha, gelu, huber, rmsprop and clipnorm, layernorm and dropout with their epsilon and rate per member
  const vocabulary: Case = { name: 'vocabulary', model: 'dense(6, activation: gelu)\n  act = leaky_relu(0.1)\n  ln = layernorm()\n  drop = dropout(0.3)\n  dense(3, activation: swish)\n  bn = batchnorm()\n  dense(2)', inWidth: 3, k: 2, loss: 'huber(delta: 0.5)', optimizer: 'rmsprop(lr: 0.01, clipnorm: 0.1)', metrics: [], vary: 'vary act.alpha: [0, 0.1, 0.3]\n  vary ln.epsilon: [0.001, 0.01, 0.1]\n  vary drop.rate: [0.1, 0.3, 0.5]\n  vary bn.momentum: [0.5, 0.9, 0.99]' };
  // shared layers' weights step with the file's lr, here 1e-30 (and no bias, which starts at 0): they never
  // move, so member 3's numbers are its own whoever trains beside it, though the shared gradients sum every member's
  const frozen = (name: string, model: string, input: number[], vary: string): Case => ({ name, model, input, inWidth: input.reduce((a, d) => a * d, 1), k: 2, loss: 'mse', optimizer: 'sgd(lr: 1e-30, momentum: 0.9)', metrics: [], vary: `vary lr: [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07]\n  ${vary}` });
  const sharedConv = frozen('shared conv', 'shared conv2d(3, kernel: 3, stride: 2, activation: tanh, bias: false)\n  maxpool2d(2, stride: 1)\n  relu()\n  conv2d(2, kernel: 2, padding: same, activation: elu)\n  shared conv2d(2, kernel: 2, activation: sigmoid, bias: false)\n  flatten()\n  dense(2)', [9, 9, 1], '');
  const onShared = frozen('on shared', 'shared conv2d(2, kernel: 3, activation: relu, bias: false)\n  f = flatten()\n  ln = layernorm()\n  a = dense(3, activation: tanh)\n  act = leaky_relu(0.1, from: f)\n  concat(a, act)\n  dense(2)', [5, 5, 1], 'vary act.alpha: [0, 0.1, 0.3]\n  vary ln.epsilon: [0.001, 0.01, 0.1]');
  // shared layernorms on the input, on a frozen shared trunk's value and on members' values: their beta starts at
  // 0, so even the lr of 1e-30 moves it, by the members' sum (about 1e-30, lost in every value it is added to):
  // compared are the other parameters and the losses
  const sharedNorms: Case = {
    ...frozen('shared layernorms', 'shared layernorm()\n  shared dense(6, activation: tanh, bias: false)\n  s = shared layernorm(epsilon: 0.01)\n  a = dense(4, activation: elu)\n  act = leaky_relu(0.1, from: s)\n  concat(a, act)\n  shared layernorm()\n  dense(2)', [5], 'vary act.alpha: [0, 0.1, 0.3]'),
    moved: ['layernorm_1/beta', 'layernorm_2/beta', 'layernorm_3/beta'],
  };
  it.each<[string, Case]>([
    ['the forum model', cases[0]],
    ['conv with dropout', convCases[0]],
    ['gelu, leaky_relu(alpha), layernorm(epsilon), dropout(rate) and batchnorm(momentum) per member, swish, huber, rmsprop, clipnorm', vocabulary],
    ['conv with gelu, swish, leaky_relu(alpha) per member, huber, adamw', convCases[2]],
    ['add, concat and from: branches', cases.find((c) => c.name.startsWith('add, concat'))!],
    ['batchnorm and concat of images', convCases.find((c) => c.name.startsWith('batchnorm of images'))!],
    ["a frozen shared conv trunk, a pool and relu() computed once, members' conv on it, a shared conv on members' values", sharedConv],
    ["members' layernorm(epsilon) and leaky_relu(alpha) on a frozen shared conv's flattened value, a dense on it", onShared],
    ['layernorm of images', convCases.find((c) => c.name.startsWith('layernorm of images'))!],
    ["softmax over a conv's channels", convCases.find((c) => c.name.startsWith("softmax over a conv's channels"))!],
    ["shared layernorms on the input, on a frozen shared dense trunk's value and on members' values", sharedNorms],
  ])('%s: member 3 trains the same, bit for bit, alone, among 3 and among 7', async (_, c) => {
    const text = source(c, 7);
    const runs: { losses: number[]; weights: Map<string, Float32Array> }[] = [];
    for (const ids of [[3], [1, 3, 5], [0, 1, 2, 3, 4, 5, 6]]) {
      const [pop] = populations(text, ['fused'], ids);
      expect(pop.engine, pop.engineNote).toBe('fused');
      const at = ids.indexOf(3);
      const losses: number[] = [];
      // ten steps: a neighbour's numbers reaching member 3's would change its bits by the first step, and a
      // changed bit stays changed in the weights compared at the end
      for (let s = 0; s < 10; s++) {
        const { x, y } = batchFor(s, c.inWidth, c.k, c.loss, 6, c.input);
        if (s % 10 === 9) losses.push((await step(pop, x, y, []))['loss'][at]);
        else await step(pop, x, y, [], false);
        tf.dispose([x as never, y as never]);
      }
      // the WGSL evaluation (dropout off, batchnorm's running statistics) of member 3, on a batch of 10
      const { x, y } = batchFor(99, c.inWidth, c.k, c.loss, 10, c.input);
      const evaluated = pop.evaluate(x, y);
      losses.push(((await evaluated.loss.data()) as Float32Array)[at]);
      tf.dispose([x as never, y as never, evaluated.loss as never]);
      runs.push({ losses, weights: await pop.memberWeights(at) });
      pop.dispose();
    }
    for (const r of runs.slice(1)) {
      expect(r.losses).toEqual(runs[0].losses);
      // (those it leaves out have moved by about 1e-30 only)
      for (const name of c.moved ?? []) expect(Math.max(...r.weights.get(name)!.map(Math.abs)), name).toBeLessThan(1e-20);
      for (const [name, values] of runs[0].weights) if (!c.moved?.includes(name)) expect(Buffer.from(r.weights.get(name)!.buffer).equals(Buffer.from(values.buffer)), name).toBe(true);
    }
  }, WEBGPU_TEST_MS);
});

describe.skipIf(skip)('what the webgpu op path cannot train, against the cpu op path', () => {
  // leaky_relu's gradient on conv values is a Where of rank 5, and clipnorm of a conv kernel a Tile of
  // rank 5, which TF.js's webgpu backend does not have (in Node it fails; so does the broadcast of the shared
  // input to a concat of members' images): the WGSL step is compared with
  // the op path on TF.js's cpu backend, over 30 steps
  const cpuCases: Case[] = [
    {
      name: 'conv2d(activation: leaky_relu) and a leaky_relu(alpha) layer per member after a conv, adam',
      model: 'conv2d(2, kernel: 3, activation: leaky_relu)\n  act = leaky_relu(0.1)\n  maxpool2d(2, stride: 1)\n  conv2d(2, kernel: 2, activation: leaky_relu)\n  flatten()\n  dense(1)',
      input: [6, 6, 1],
      inWidth: 36,
      k: 1,
      loss: 'mse',
      optimizer: 'adam(lr: 0.01)',
      metrics: [],
      vary: 'vary act.alpha: [0, 0.1, 0.3]',
    },
    {
      name: 'clipnorm per member (one never clips, one always) on both conv layouts, a conv without bias, avgpool, sgd with momentum',
      model: 'conv2d(2, kernel: 3, activation: relu)\n  avgpool2d(2, stride: 1)\n  conv2d(2, kernel: 2, activation: tanh, bias: false)\n  flatten()\n  dense(1)',
      input: [6, 6, 1],
      inWidth: 36,
      k: 1,
      loss: 'mse',
      optimizer: 'sgd(lr: 0.05, momentum: 0.5)',
      metrics: [],
      vary: 'vary clipnorm: [0, 0.02, 1]',
    },
    {
      // the shared input among a concat's operands: the op path broadcasts it to every member (a Tile of rank 5)
      name: 'a concat of images with the shared input among its operands, a conv on it, adam',
      model: 'c1 = conv2d(2, kernel: 3, padding: same, activation: relu)\n  concat(c1, input)\n  conv2d(2, kernel: 2, activation: tanh)\n  flatten()\n  dense(1)',
      input: [5, 5, 2],
      inWidth: 50,
      k: 1,
      loss: 'mse',
      optimizer: 'adam(lr: 0.01)',
      metrics: [],
      vary: 'vary lr: [0.005, 0.01, 0.03]',
    },
  ];
  for (const c of cpuCases) {
    it(`${c.name}: 30 steps end within 1e-5 of the cpu op path`, async () => {
      const run = async (engine: Engine) => {
        const [pop] = populations(source(c), [engine]);
        if (engine === 'fused') expect(pop.engine, pop.engineNote).toBe('fused');
        for (let s = 0; s < 30; s++) {
          const { x, y } = batchFor(s, c.inWidth, c.k, c.loss, 6, c.input);
          await step(pop, x, y, [], s === 29);
          tf.dispose([x as never, y as never]);
        }
        const state = await pop.exportState();
        pop.dispose();
        return state;
      };
      await tf.setBackend('cpu');
      let want: Map<string, Float32Array>;
      try {
        want = await run('ops');
      } finally {
        await tf.setBackend('webgpu');
      }
      const got = await run('fused');
      for (const [name, values] of want) expect(maxRelDiff(got.get(name)!, values), name).toBeLessThanOrEqual(1e-5);
    }, WEBGPU_TEST_MS);
  }
});

describe.skipIf(skip)('clipping that starts mid-run', () => {
  it('a clipnorm set after 10 steps (as PBT sets one) gets the clipping kernels, and still ends within 1e-5 of the op path', async () => {
    const c = cases.find((k) => k.optimizer.startsWith('rmsprop'))!;
    let clips = false;
    const hyper = (key: string, member: number, value: number) => (key === 'clipnorm' && clips && member !== 1 ? 0.05 : value);
    const state = compile(source(c), 'wgsl.net');
    const [ops, fused] = (['ops', 'fused'] as const).map((engine) => populationOf(state, engine, { hyper }));
    // the same members never clipping: that the clip changed something
    const free = populationOf(state, 'fused');
    expect(fused.engine, fused.engineNote).toBe('fused');
    for (let s = 0; s < 30; s++) {
      if (s === 10) {
        clips = true;
        ops.hyperChanged();
        fused.hyperChanged();
      }
      const { x, y } = batchFor(s, c.inWidth, c.k, c.loss);
      await step(ops, x, y, [], false);
      await step(fused, x, y, [], false);
      await step(free, x, y, [], false);
      tf.dispose([x as never, y as never]);
    }
    const [want, got, unclipped] = [await ops.exportState(), await fused.exportState(), await free.exportState()];
    for (const [name, values] of want) expect(maxRelDiff(got.get(name)!, values), name).toBeLessThanOrEqual(1e-5);
    expect(Math.max(...[...want].map(([name, values]) => maxRelDiff(unclipped.get(name)!, values)))).toBeGreaterThan(1e-3);
    for (const p of [ops, fused, free]) p.dispose();
  }, WEBGPU_TEST_MS);
});

describe.skipIf(skip)('labels in an int32 buffer', () => {
  it('one-hot labels cast to float32 (TF.js keeps their int32 buffer) train as float labels do', async () => {
    const c = cases.find((k) => k.loss === 'categorical_crossentropy')!;
    const [a, b] = [populations(source(c), ['fused'])[0], populations(source(c), ['fused'])[0]];
    const { x, y } = batchFor(0, c.inWidth, c.k, c.loss);
    const cast = tf.oneHot(tf.argMax(y as never, -1), c.k).toFloat() as unknown as Tensor;
    expect((tf.backend() as unknown as { tensorMap: { get(id: object): { dtype: string } } }).tensorMap.get(cast.dataId).dtype).toBe('int32');
    const [la, lb] = [await step(a, x, y, []), await step(b, x, cast, [])];
    expect(Array.from(lb.loss)).toEqual(Array.from(la.loss));
    expect(la.loss.every((l) => l > 0)).toBe(true);
    tf.dispose([x as never, y as never, cast as never]);
    a.dispose();
    b.dispose();
  });
});

describe.skipIf(skip)('what the WGSL step does not cover runs on ops and says why', () => {
  const why = (model: string, optimizer = 'adam(lr: 0.01)') => populations(source({ model, inWidth: 2, input: model.includes('2d(') || model.startsWith('global_') ? [4, 4, 1] : undefined, loss: 'mse', optimizer, vary: '' }), ['auto'])[0];
  it.each([
    ['avgpool2d(2)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', "avgpool2d_1 on the input (the WGSL step pools members' own values and shared layers' values)"],
    ['maxpool2d(2)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', "maxpool2d_1 on the input (the WGSL step pools members' own values and shared layers' values)"],
    ['batchnorm()\n  conv2d(2, kernel: 3, activation: relu)\n  flatten()\n  dense(1)', 'rmsprop(lr: 0.01)', 'an input of shape [4, 4, 1]'],
    ['global_avg_pool()\n  dense(1)', 'adam(lr: 0.01)', "global_avg_pool_1 on the input (the WGSL step pools members' own values and shared layers' values)"],
    ['relu()\n  dense(1)', 'adam(lr: 0.01, clipnorm: 1)', 'the relu layer relu_1 on the shared input'],
    ['conv2d(2, kernel: 3)\n  softmax()\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', 'the softmax layer softmax_1 on values of shape [2, 2, 2]'],
    ['h = dense(3)\n  dense(2, from: input)\n  dense(1, from: h)', 'adam(lr: 0.01)', "dense_2's value, which no layer reads"],
    ['concat(input, input)\n  dense(1)', 'adam(lr: 0.01)', 'the concat layer concat_1 of the shared input alone'],
    ['dense(3)\n  shared batchnorm()\n  dense(1)', 'adam(lr: 0.01)', 'the shared batchnorm layer batchnorm_1'],
    ['t = shared conv2d(2, kernel: 3)\n  act = leaky_relu(0.1)\n  flatten()\n  dense(1)', 'adam(lr: 0.01)', "leaky_relu_1 on the shared layer conv2d_1's values of shape [2, 2, 2] (the op path's broadcast of them, a Tile of rank 5, has no gradient in TF.js)"],
    ['t = shared dense(3)\n  h = dense(3)\n  add(t, h)\n  dense(1)', 'adam(lr: 0.01)', "add_1 on the shared layer dense_1's value (the WGSL step merges members' own values and the shared input)"],
  ])('%s with %s', (model, optimizer, reason) => {
    const pop = why(model, optimizer);
    expect(pop.engine).toBe('ops');
    expect(pop.engineNote).toBe(reason);
    pop.dispose();
  });
});
