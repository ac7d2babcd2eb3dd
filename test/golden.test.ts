// Golden files: the diagnostics of every examples/errors/*.net file, and the IR of every example.
// Regenerate deliberately with `npm run test:update`, then read the diff.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '../src/pipeline.js';
import { formatDiagnostics } from '../src/diagnostics/format.js';
import { printModelIR } from '../src/ir/print.js';
import { printEnsembleIR } from '../src/ensemble/print.js';
import { printFusedStep } from '../src/step/print.js';
import { printWgslStep } from '../src/step/wgsl-print.js';
import type { Lowering } from '../src/layers/forward.js';
import { fileHost } from '../src/cli/host.js';

const root = new URL('../', import.meta.url);
const read = (rel: string) => readFileSync(new URL(rel, root), 'utf8');
const list = (dir: string) => readdirSync(new URL(dir, root)).filter((f) => f.endsWith('.net')).sort();

describe('error baselines', () => {
  const files = list('examples/errors/');
  it('there are at least 8', () => expect(files.length).toBeGreaterThanOrEqual(8));
  for (const file of files) {
    it(file, async () => {
      const path = `examples/errors/${file}`;
      const source = read(path);
      const { diagnostics } = compile(source, path, { host: fileHost(path) });
      expect(diagnostics.some((d) => d.category === 'error')).toBe(true);
      await expect(formatDiagnostics(diagnostics, source) + '\n').toMatchFileSnapshot(`../examples/errors/${file.replace(/\.net$/, '.errors.txt')}`);
    });
  }
});

describe('ensemble IR of the examples', () => {
  const cases: [string, Lowering][] = [...list('examples/').map((f): [string, Lowering] => [f, 'grouped']), ['lenet.net', 'blockdiag'], ['residual.net', 'loop']];
  for (const [file, lowering] of cases) {
    it(`${file} (${lowering})`, async () => {
      const path = `examples/${file}`;
      // three members, or under kfold(k) one setting's k (its members come in whole settings)
      const k = compile(read(path), path, { host: fileHost(path), after: 'check' }).program?.ensemble.split;
      const state = compile(read(path), path, { host: fileHost(path), lowering, members: k?.kind === 'kfold' ? k.k : 3 });
      expect(state.diagnostics.filter((d) => d.category === 'error')).toEqual([]);
      await expect(printEnsembleIR(state.ensemble!)).toMatchFileSnapshot(`golden/ensemble/${file.replace(/\.net$/, '')}.${lowering}.txt`);
    });
  }
});

describe('the generated training step of the examples (netc ir --after fuse)', () => {
  for (const file of list('examples/')) {
    it(file, async () => {
      const path = `examples/${file}`;
      const state = compile(read(path), path, { host: fileHost(path), after: 'fuse' });
      expect(state.fused).toBeDefined();
      await expect(printFusedStep(state.fused!)).toMatchFileSnapshot(`golden/fuse/${file.replace(/\.net$/, '.fuse.txt')}`);
    });
  }
});

describe('the WGSL kernels of the examples (netc ir --after wgsl)', () => {
  for (const file of list('examples/')) {
    it(file, async () => {
      const path = `examples/${file}`;
      const state = compile(read(path), path, { host: fileHost(path), after: 'wgsl' });
      expect(state.wgsl).toBeDefined();
      await expect(printWgslStep(state.wgsl!)).toMatchFileSnapshot(`golden/wgsl/${file.replace(/\.net$/, '.wgsl.txt')}`);
    });
  }
});

describe('the WGSL kernels of the vocabulary no example uses (netc ir --after wgsl)', () => {
  // gelu and swish (their pre-activations kept), activation layers (leaky_relu's alpha per member), huber, rmsprop and adamw, clipnorm (three kernels a parameter); the same on convs; layernorm, dropout and batchnorm (of flat values and of a conv's images); a concat of images; concat, add, from: and a shared layer on members' values under clipnorm; a shared conv trunk, a pool computed once on it, a member's conv on it, a shared conv on members' values, a member's layernorm on the pool's flattened value, under clipnorm; shared layernorms on the input, on a shared trunk's value (read by a member's dense and leaky_relu) and on members' values, under clipnorm
  const files: [string, string, string, number[]?][] = [
    ['vocabulary-rmsprop-clipnorm', 'dense(6, activation: gelu)\n  act = leaky_relu(0.1)\n  dense(3, activation: swish)\n  dense(2)', 'loss: huber(delta: 0.5)\n  optimizer: rmsprop(lr: 0.01, momentum: 0.5, clipnorm: 0.1)\n  metrics: [mse]'],
    ['vocabulary-adamw', 'dense(4, activation: leaky_relu)\n  gelu()\n  swish()\n  dense(3)\n  softmax()', 'loss: categorical_crossentropy\n  optimizer: adamw(lr: 0.01)\n  metrics: [accuracy]'],
    ['vocabulary-norm-dropout', 'layernorm()\n  dense(5, activation: relu)\n  ln = layernorm(epsilon: 0.01)\n  drop = dropout(0.2)\n  batchnorm(momentum: 0.9)\n  dense(2)', 'loss: mse\n  optimizer: adam(lr: 0.01, clipnorm: 1)\n  metrics: [mae]'],
    ['vocabulary-branches-shared', 'h = dense(4, activation: relu)\n  s = shared dense(3, activation: tanh)\n  c = concat(s, h, input)\n  r = dense(4, from: h)\n  a = add(r, h)\n  concat(c, a)\n  dense(2)', 'loss: mse\n  optimizer: sgd(lr: 0.1, momentum: 0.9, clipnorm: 1)\n  metrics: [mae]'],
    ['vocabulary-conv-clipnorm', 'conv2d(2, kernel: 3, activation: gelu)\n  act = leaky_relu(0.1)\n  maxpool2d(2)\n  conv2d(2, kernel: 2, padding: same, activation: swish)\n  flatten()\n  dense(2)', 'loss: huber\n  optimizer: adamw(lr: 0.01, clipnorm: 0.1)\n  metrics: [mae]', [6, 6, 1]],
    ['vocabulary-shared-conv', 's = shared conv2d(2, kernel: 3, activation: relu)\n  c = conv2d(2, kernel: 2, activation: tanh)\n  shared conv2d(2, kernel: 1)\n  g = flatten()\n  p = maxpool2d(2, stride: 1, from: s)\n  f = flatten()\n  ln = layernorm()\n  concat(g, ln)\n  dense(2)', 'loss: mse\n  optimizer: sgd(lr: 0.1, momentum: 0.9, clipnorm: 1)\n  metrics: [mae]', [7, 7, 1]],
    ['vocabulary-shared-layernorm', 'shared layernorm()\n  shared dense(4, activation: tanh)\n  s = shared layernorm(epsilon: 0.01)\n  a = dense(3, activation: elu)\n  act = leaky_relu(0.1, from: s)\n  concat(a, act)\n  shared layernorm()\n  dense(2)', 'loss: mse\n  optimizer: adam(lr: 0.01, clipnorm: 1)\n  metrics: [mae]'],
    ['vocabulary-conv-batchnorm-concat', 'conv2d(2, kernel: 3, activation: relu)\n  bn = batchnorm(momentum: 0.9)\n  c = conv2d(2, kernel: 1)\n  concat(c, bn)\n  maxpool2d(2)\n  flatten()\n  dense(2)', 'loss: mse\n  optimizer: sgd(lr: 0.1, momentum: 0.9)\n  metrics: [mae]', [6, 6, 1]],
  ];
  for (const [name, model, train, input = [3]] of files) {
    it(name, async () => {
      const source = `model m(input: [${input.join(', ')}]) {\n  ${model}\n}\nensemble {\n  members: 2\n  vary lr: [0.01, 0.02]\n}\ntrain {\n  data: csv("none.csv")\n  ${train}\n  batch: 4\n  epochs: 1\n}\n`;
      const state = compile(source, `${name}.net`, { after: 'wgsl' });
      expect(state.diagnostics.filter((d) => d.category === 'error')).toEqual([]);
      expect('step' in state.wgsl!, 'why' in state.wgsl! ? state.wgsl.why : '').toBe(true);
      await expect(printWgslStep(state.wgsl!)).toMatchFileSnapshot(`golden/wgsl/${name}.wgsl.txt`);
    });
  }
});

describe('IR of the examples', () => {
  for (const file of list('examples/')) {
    it(file, async () => {
      const path = `examples/${file}`;
      const state = compile(read(path), path, { host: fileHost(path) });
      expect(state.diagnostics).toEqual([]);
      await expect(printModelIR(state.ir!)).toMatchFileSnapshot(`golden/ir/${file.replace(/\.net$/, '.ir.txt')}`);
    });
  }
});
