// The layer cases of the equivalence tests: every layer kind, and the widening cases (shared input,
// per-member input) that matter for it.
import { activations } from '../../src/vocabulary/activations.js';

export const layerCases: Record<string, { input: number[]; layers: string }> = {
  dense: { input: [3], layers: 'dense(4, activation: tanh)\ndense(2, activation: softmax)' },
  'dense without bias': { input: [3], layers: 'dense(4, bias: false, activation: relu)\ndense(2)' },
  'conv2d valid': { input: [6, 6, 2], layers: 'conv2d(3, kernel: 3, activation: relu)\nflatten()\ndense(2)' },
  'conv2d same and strided': { input: [7, 7, 2], layers: 'conv2d(3, kernel: 3, stride: 2, padding: same)\nconv2d(2, kernel: 2, stride: 2)\nflatten()\ndense(2)' },
  'conv2d rectangular': { input: [6, 5, 1], layers: 'conv2d(2, kernel: [3, 2], stride: [1, 2], padding: same, activation: sigmoid)\nflatten()\ndense(1)' },
  maxpool2d: { input: [6, 6, 2], layers: 'conv2d(2, kernel: 3, padding: same)\nmaxpool2d(2)\nflatten()\ndense(2)' },
  avgpool2d: { input: [6, 6, 2], layers: 'conv2d(2, kernel: 3, padding: same)\navgpool2d(2, stride: 1)\nflatten()\ndense(2)' },
  'pooling a shared input': { input: [6, 6, 1], layers: 'maxpool2d(2)\nconv2d(2, kernel: 2)\navgpool2d(2, padding: same)\nflatten()\ndense(2)' },
  // both, on a member's own conv and on the shared input
  global_avg_pool: { input: [5, 4, 2], layers: 'conv2d(3, kernel: 3, padding: same, activation: relu)\nglobal_avg_pool()\ndense(2)' },
  global_max_pool: { input: [5, 4, 2], layers: 'conv2d(3, kernel: 3, padding: same)\nglobal_max_pool()\ndense(2)' },
  'global pools of a shared input and of a conv': { input: [4, 4, 2], layers: 'a = global_max_pool()\nc = conv2d(3, kernel: 2, from: input)\nm = global_avg_pool()\nconcat(a, m)\ndense(2)' },
  flatten: { input: [2, 3, 2], layers: 'flatten()\ndense(3, activation: elu)' },
  dropout: { input: [4], layers: 'dense(5)\ndropout(0.5)\ndense(2)' },
  'batchnorm on features': { input: [4], layers: 'dense(5, bias: false)\nbatchnorm(momentum: 0.9)\nrelu()\ndense(2)' },
  'batchnorm on images': { input: [5, 5, 1], layers: 'conv2d(2, kernel: 3, bias: false)\nbatchnorm()\nflatten()\ndense(2)' },
  'batchnorm on the input': { input: [3], layers: 'batchnorm()\ndense(2)' },
  layernorm: { input: [4], layers: 'dense(5)\nlayernorm(epsilon: 0.01)\ndense(2)' },
  'layernorm on images': { input: [3, 3, 2], layers: 'conv2d(4, kernel: 2)\nlayernorm()\nflatten()\ndense(2)' },
  add: { input: [4], layers: 'h = dense(4, activation: relu)\nr = dense(4)\nadd(h, r)\ndense(2)' },
  'add with the input': { input: [3], layers: 'h = dense(3, activation: tanh)\nadd(h, input)\ndense(2)' },
  concat: { input: [4], layers: 'a = dense(3)\nb = dense(2, activation: sigmoid, from: input)\nconcat(a, b)\ndense(2)' },
  'concat of images': { input: [4, 4, 1], layers: 'a = conv2d(2, kernel: 3, padding: same)\nb = conv2d(3, kernel: 3, padding: same, from: input)\nconcat(a, b)\nflatten()\ndense(1)' },
};
for (const a of activations.filter((x) => x !== 'linear')) {
  layerCases[`${a}()`] = { input: [3], layers: `dense(4)\n${a === 'leaky_relu' ? 'leaky_relu(0.1)' : `${a}()`}\ndense(2)` };
  layerCases[`dense(activation: ${a})`] = { input: [3], layers: `dense(4, activation: ${a})\ndense(2)` };
}
// tfjs-layers has no leaky_relu activation argument: the reference writes a linear layer and a LeakyReLU layer
layerCases['conv2d(activation: leaky_relu)'] = { input: [4, 4, 1], layers: 'conv2d(2, kernel: 3, padding: same, activation: leaky_relu)\nflatten()\ndense(2)' };

export const source = (c: { input: number[]; layers: string }) => `model m(input: [${c.input.join(', ')}]) {\n${c.layers}\n}\nensemble { seed: 5 }\n`;
