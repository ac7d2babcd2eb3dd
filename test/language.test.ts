// ../shared/LANGUAGE.md fixes the core syntax: its complete example must check clean, and so must every
// snippet of block syntax it shows, wrapped in a minimal file.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { expectClean } from './helpers.js';

const doc = readFileSync(new URL('../../shared/LANGUAGE.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]);

it('LANGUAGE.md has a complete example', () => expect(blocks.length).toBeGreaterThan(0));

it('the complete example in LANGUAGE.md checks clean', () => {
  const state = expectClean(blocks[0]);
  expect(state.program!.ensemble.members).toBe(30);
  expect(state.ir!.params.length).toBe(10);
});

const model = 'model m(input: [2]) {\n  h = dense(64, activation: relu)\n  drop = dropout(0.1)\n  dense(1, activation: sigmoid)\n}\n';
const train = 'train { data: xor() loss: binary_crossentropy epochs: 4 }\n';

it.each([
  ['one-line ensemble', 'ensemble { members: 3 seed: 11 }'],
  ['the pbt schedule', 'ensemble { members: 4 }\nschedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.25, perturb: [0.8, 1.2] }'],
  ['a layer hyperparameter path', 'ensemble { members: 4 vary drop.rate: [0.1, 0.2] }'],
  ['every space', 'ensemble { members: 4 vary lr: loguniform(1e-4, 1e-2) vary beta1: uniform(0.8, 0.95) vary epsilon: choice(1e-7, 1e-8) }'],
])('%s checks clean', (_, snippet) => {
  expectClean(model + snippet + '\n' + train);
});

it('a train block with steps, shuffle and metrics checks clean', () => {
  expectClean(model + 'train {\n  data: moons(n: 200, noise: 0.1)\n  loss: binary_crossentropy\n  optimizer: sgd(lr: 0.1, momentum: 0.9, nesterov: true)\n  batch: 16\n  steps: 500\n  shuffle: false\n  metrics: [accuracy]\n}\n');
});
