// The cases of the equivalence tests: every layer kind, and the widening cases (shared input, per-member
// input) that matter for it; every optimizer; every loss. test/conformance.test.ts reads which layer
// kinds, activations, losses and optimizers these cover from the cases themselves.
import type * as tfjs from '@tensorflow/tfjs';
import { activations } from '../../src/vocabulary/activations.js';

export const layerCases: Record<string, { input: number[]; layers: string }> = {
  dense: { input: [3], layers: 'dense(4, activation: tanh)\ndense(2, activation: softmax)' },
  'dense without bias': { input: [3], layers: 'dense(4, bias: false, activation: relu)\ndense(2)' },
  'conv2d valid': { input: [6, 6, 2], layers: 'conv2d(3, kernel: 3, activation: relu)\nflatten()\ndense(2)' },
  'conv2d same and strided': { input: [7, 7, 2], layers: 'conv2d(3, kernel: 3, stride: 2, padding: same)\nconv2d(2, kernel: 2, stride: 2)\nflatten()\ndense(2)' },
  'conv2d rectangular': { input: [6, 5, 1], layers: 'conv2d(2, kernel: [3, 2], stride: [1, 2], padding: same, activation: sigmoid)\nflatten()\ndense(1)' },
  // the sequence kinds, as their 2-D kinds on one row: valid and strided same, and after a per-member conv
  conv1d: { input: [7, 2], layers: 'conv1d(3, kernel: 3, activation: relu)\nconv1d(2, kernel: 2, stride: 2, padding: same)\nflatten()\ndense(2)' },
  maxpool1d: { input: [8, 2], layers: 'conv1d(3, kernel: 2, padding: same)\nmaxpool1d(2)\nmaxpool1d(3, stride: 2, padding: same)\nflatten()\ndense(2)' },
  avgpool1d: { input: [8, 2], layers: 'avgpool1d(3, stride: 1)\nconv1d(2, kernel: 2)\navgpool1d(2, padding: same)\nflatten()\ndense(2)' },
  maxpool2d: { input: [6, 6, 2], layers: 'conv2d(2, kernel: 3, padding: same)\nmaxpool2d(2)\nflatten()\ndense(2)' },
  avgpool2d: { input: [6, 6, 2], layers: 'conv2d(2, kernel: 3, padding: same)\navgpool2d(2, stride: 1)\nflatten()\ndense(2)' },
  'pooling a shared input': { input: [6, 6, 1], layers: 'maxpool2d(2)\nconv2d(2, kernel: 2)\navgpool2d(2, padding: same)\nflatten()\ndense(2)' },
  // both, on a member's own conv and on the shared input
  global_avg_pool: { input: [5, 4, 2], layers: 'conv2d(3, kernel: 3, padding: same, activation: relu)\nglobal_avg_pool()\ndense(2)' },
  global_max_pool: { input: [5, 4, 2], layers: 'conv2d(3, kernel: 3, padding: same)\nglobal_max_pool()\ndense(2)' },
  'global pools of a shared input and of a conv': { input: [4, 4, 2], layers: 'a = global_max_pool()\nc = conv2d(3, kernel: 2, from: input)\nm = global_avg_pool()\nconcat(a, m)\ndense(2)' },
  // each member's table read at the shared ids (a shared table: test/equivalence/shared.test.ts)
  embedding: { input: [5], layers: 'embedding(7, 3)\nflatten()\ndense(2)' },
  'global pools over steps': { input: [5, 3], layers: 'a = global_max_pool()\nc = conv1d(4, kernel: 2, from: input, activation: relu)\nm = global_avg_pool()\nconcat(a, m)\ndense(2)' },
  flatten: { input: [2, 3, 2], layers: 'flatten()\ndense(3, activation: elu)' },
  dropout: { input: [4], layers: 'dense(5)\ndropout(0.5)\ndense(2)' },
  'batchnorm on features': { input: [4], layers: 'dense(5, bias: false)\nbatchnorm(momentum: 0.9)\nrelu()\ndense(2)' },
  'batchnorm on images': { input: [5, 5, 1], layers: 'conv2d(2, kernel: 3, bias: false)\nbatchnorm()\nflatten()\ndense(2)' },
  'batchnorm on the input': { input: [3], layers: 'batchnorm()\ndense(2)' },
  layernorm: { input: [4], layers: 'dense(5)\nlayernorm(epsilon: 0.01)\ndense(2)' },
  'layernorm on images': { input: [3, 3, 2], layers: 'conv2d(4, kernel: 2)\nlayernorm()\nflatten()\ndense(2)' },
  // a sequence [T, F]: dense and layernorm on its last axis, on the shared input and on members' own values
  'dense and layernorm on a sequence': { input: [3, 4], layers: 'dense(5, activation: tanh)\nlayernorm(epsilon: 0.01)\ndense(3)\nflatten()\ndense(2)' },
  // attention has no tfjs-layers reference: these compare each member with a run of it alone (the `single` rule
  // under the loop lowering), and test/export.test.ts holds that to PyTorch and onnxruntime
  // (a causal one on the shared input, another on members' own values)
  attention: { input: [3, 4], layers: 'attention(heads: 2, causal: true)\ndense(6)\nattention(3)\nflatten()\ndense(2)' },
  add: { input: [4], layers: 'h = dense(4, activation: relu)\nr = dense(4)\nadd(h, r)\ndense(2)' },
  'add with the input': { input: [3], layers: 'h = dense(3, activation: tanh)\nadd(h, input)\ndense(2)' },
  concat: { input: [4], layers: 'a = dense(3)\nb = dense(2, activation: sigmoid, from: input)\nconcat(a, b)\ndense(2)' },
  // recurrent layers on the shared input and on a member's own sequence; gru in tfjs-layers' form (reset_after: false)
  lstm: { input: [4, 3], layers: 'lstm(5)\ndense(2)' },
  'lstm sequences into gru': { input: [4, 3], layers: 'lstm(4, sequences: true)\ngru(3, reset_after: false)\ndense(2)' },
  'gru sequences': { input: [4, 3], layers: 'gru(4, sequences: true, reset_after: false)\nflatten()\ndense(2)' },
  'concat of images': { input: [4, 4, 1], layers: 'a = conv2d(2, kernel: 3, padding: same)\nb = conv2d(3, kernel: 3, padding: same, from: input)\nconcat(a, b)\nflatten()\ndense(1)' },
};
for (const a of activations.filter((x) => x !== 'linear')) {
  layerCases[`${a}()`] = { input: [3], layers: `dense(4)\n${a === 'leaky_relu' ? 'leaky_relu(0.1)' : `${a}()`}\ndense(2)` };
  layerCases[`dense(activation: ${a})`] = { input: [3], layers: `dense(4, activation: ${a})\ndense(2)` };
}
// tfjs-layers has no leaky_relu activation argument: the reference writes a linear layer and a LeakyReLU layer
layerCases['conv2d(activation: leaky_relu)'] = { input: [4, 4, 1], layers: 'conv2d(2, kernel: 3, padding: same, activation: leaky_relu)\nflatten()\ndense(2)' };

export const source = (c: { input: number[]; layers: string }) => `model m(input: [${c.input.join(', ')}]) {\n${c.layers}\n}\nensemble { seed: 5 }\n`;

// ---------------------------------------------------------------------------------------------------
// Every optimizer against TF.js's own (tf.train.*), or against the formula written out in
// training.test.ts where TF.js has none (adamw, decoupled weight decay), on a dense model and on a small
// conv net.

type TFModule = typeof tfjs;
type Hyper = (key: string) => number;

export const OPT_STEPS = 5;
export const optimizerModels: Record<string, { input: number[]; layers: string }> = {
  dense: { input: [2], layers: 'dense(4, activation: tanh)\ndense(2, activation: softmax)' },
  conv: { input: [8, 8, 1], layers: 'conv2d(3, kernel: 3, activation: relu)\nmaxpool2d(2)\nflatten()\ndense(2, activation: softmax)' },
};

export interface OptimizerCase {
  optimizer: string;
  vary: string;
  /** tf.train optimizer for member m, or undefined to use the hand-written reference */
  tfjs?: (tf: TFModule, h: Hyper) => tfjs.Optimizer;
  /** the tf.train optimizer is fed gradients clipped per variable (Keras' clipnorm) */
  clip?: boolean;
  manual?: 'adamw' | 'sgd-decay-clip';
}

const adam = (tf: TFModule, h: Hyper) => tf.train.adam(h('lr'), h('beta1'), h('beta2'), h('epsilon'));
const rmsprop = (tf: TFModule, h: Hyper) => tf.train.rmsprop(h('lr'), h('rho'), h('momentum'), h('epsilon'));

export const optimizerCases: Record<string, OptimizerCase> = {
  sgd: { optimizer: 'sgd', vary: 'vary lr: [0.5, 0.1, 0.02]', tfjs: (tf, h) => tf.train.sgd(h('lr')) },
  momentum: { optimizer: 'sgd(momentum: 0.9)', vary: 'vary lr: [0.1, 0.05, 0.2]\nvary momentum: [0.9, 0.5, 0.0]', tfjs: (tf, h) => tf.train.momentum(h('lr'), h('momentum')) },
  nesterov: { optimizer: 'sgd(lr: 0.1, momentum: 0.8, nesterov: true)', vary: 'vary lr: [0.1, 0.05, 0.2]', tfjs: (tf, h) => tf.train.momentum(h('lr'), h('momentum'), true) },
  adam: { optimizer: 'adam', vary: 'vary lr: [0.01, 0.05, 0.001]\nvary beta1: [0.9, 0.8, 0.95]\nvary beta2: [0.999, 0.99, 0.9]', tfjs: adam },
  rmsprop: { optimizer: 'rmsprop(momentum: 0.5)', vary: 'vary lr: [0.01, 0.003, 0.03]\nvary rho: [0.9, 0.8, 0.99]', tfjs: rmsprop },
  adamw: { optimizer: 'adamw', vary: 'vary lr: [0.01, 0.05, 0.001]\nvary weight_decay: [0.1, 0.01, 0.0]', manual: 'adamw' },
  'sgd with weight decay and clipnorm': { optimizer: 'sgd(lr: 0.5, momentum: 0.9, weight_decay: 0.05)', vary: 'vary clipnorm: [0.0, 0.1, 0.01]', manual: 'sgd-decay-clip' },
  'adam with clipnorm': { optimizer: 'adam', vary: 'vary lr: [0.01, 0.05, 0.02]\nvary clipnorm: [0.0, 0.1, 0.01]', tfjs: adam, clip: true },
  'rmsprop with clipnorm': { optimizer: 'rmsprop(momentum: 0.5)', vary: 'vary lr: [0.01, 0.003, 0.03]\nvary clipnorm: [0.02, 0.0, 0.2]', tfjs: rmsprop, clip: true },
};

export const optimizerSource = (model: { input: number[]; layers: string }, c: OptimizerCase): string =>
  `model m(input: [${model.input.join(', ')}]) {\n${model.layers}\n}\nensemble {\n  seed: 2\n  ${c.vary}\n}\ntrain { data: csv("none.csv") loss: categorical_crossentropy optimizer: ${c.optimizer} steps: ${OPT_STEPS} }\n`;

// ---------------------------------------------------------------------------------------------------
// Every loss against tfjs-layers' own (Keras'), or tf.losses' where tfjs-layers has it under no name
// (huber): members trained by sgd on it, with labels of the kind it expects.

export interface LossCase {
  /** the train block's `loss:` */
  loss: string;
  /** the model's layers on a [3] input */
  layers: string;
  /** the labels: regression targets of the output's shape, one-hot rows, class indices [B, 1], or 0/1 */
  labels: 'regression' | 'onehot' | 'index' | 'binary';
  /** the loss tfjs-layers' compile() is given */
  reference: (tf: TFModule) => string | ((y: tfjs.Tensor, p: tfjs.Tensor) => tfjs.Tensor);
}

export const lossCases: Record<string, LossCase> = {
  mse: { loss: 'mse', layers: 'dense(4, activation: tanh)\ndense(2)', labels: 'regression', reference: () => 'meanSquaredError' },
  mae: { loss: 'mae', layers: 'dense(4, activation: tanh)\ndense(2)', labels: 'regression', reference: () => 'meanAbsoluteError' },
  huber: { loss: 'huber(0.5)', layers: 'dense(4, activation: tanh)\ndense(2)', labels: 'regression', reference: (tf) => (y, p) => tf.losses.huberLoss(y, p, undefined, 0.5) },
  binary_crossentropy: { loss: 'binary_crossentropy', layers: 'dense(4, activation: tanh)\ndense(1, activation: sigmoid)', labels: 'binary', reference: () => 'binaryCrossentropy' },
  categorical_crossentropy: { loss: 'categorical_crossentropy', layers: 'dense(4, activation: tanh)\ndense(3, activation: softmax)', labels: 'onehot', reference: () => 'categoricalCrossentropy' },
  sparse_categorical_crossentropy: { loss: 'sparse_categorical_crossentropy', layers: 'dense(4, activation: tanh)\ndense(3, activation: softmax)', labels: 'index', reference: () => 'sparseCategoricalCrossentropy' },
};

export const lossSource = (c: LossCase, lrs: number[]): string =>
  `model m(input: [3]) {\n${c.layers}\n}\nensemble { seed: 6 vary lr: [${lrs.join(', ')}] }\ntrain { data: csv("none.csv") loss: ${c.loss} optimizer: sgd steps: 3 }\n`;
