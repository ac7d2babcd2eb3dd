// The compiled module's math is netc's own: for every example and every lowering, a population running the
// module's forward() and step() (traced by netc compile from the layer, loss and optimizer rules) ends
// byte-identical to the runtime's population running the rules themselves: weights, optimizer slots,
// losses, metrics and evaluation outputs, on the cpu backend and on wasm, also after every member's
// hyperparameters changed (as PBT changes them), and after the population was compacted to fewer members
// (under grouped and blockdiag; the loop lowering's code, written member by member, refuses with a clear error).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tfjs from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileHost } from '../src/cli/host.js';
import { lowerings } from '../src/layers/forward.js';
import { compile } from '../src/pipeline.js';
import { hasErrors } from '../src/diagnostics/diagnostic.js';
import { selectBackend } from '../src/runtime/backend.js';
import type { Population } from '../src/runtime/population.js';
import type { TF, Tensor } from '../src/kernels/tf.js';
import { importModule, removeModules, runtimePopulation } from './compiled.js';
import { hyperTable } from '../src/runtime/hyper.js';

const tf = tfjs as unknown as TF;
const root = fileURLToPath(new URL('../', import.meta.url));
const examples = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.net')).sort();

beforeAll(async () => {
  await selectBackend('wasm', { log: () => {} });
});
afterAll(removeModules);

// every layer kind, none labelled where it need not be, with the layers' and the optimizer's
// hyperparameters varied (the examples leave out batchnorm, layernorm, avgpool2d, concat, leaky_relu)
const EVERY_KIND = `model every(input: [28, 28, 1]) {
  conv2d(3, kernel: 3, activation: relu)
  dropout(0.2)
  avgpool2d(2)
  bn = batchnorm()
  maxpool2d(2, padding: same)
  flatten()
  drop = dropout(0.3)
  a = dense(6, activation: tanh)
  leak = leaky_relu(0.1)
  b = dense(6, from: a)
  ln = layernorm()
  s = add(a, ln)
  c = concat(s, a)
  dense(10, activation: softmax)
}
ensemble {
  members: 3
  seed: 2
  vary lr: loguniform(1e-3, 1e-1)
  vary beta1: uniform(0.8, 0.95)
  vary drop.rate: [0.1, 0.4]
  vary leak.alpha: uniform(0.05, 0.3)
  vary bn.momentum: uniform(0.5, 0.9)
  vary ln.epsilon: [0.001, 0.01]
}
train {
  data: mnist(limit: 100)
  loss: categorical_crossentropy
  optimizer: adam(lr: 0.01, clipnorm: 1)
  batch: 6
  epochs: 1
  metrics: [accuracy]
}
`;

/**
 * spam-lstm.net's emails cut from 60 words to 12: the module's lstm is traced step by step, and 60 steps under
 * three lowerings were a fifth of this file's time. What is compared does not depend on the length.
 */
function shorter(file: string, source: string): string {
  if (file !== 'spam-lstm.net') return source;
  const cut = source.replace('input: [60]', 'input: [12]').replace('length: 60', 'length: 12');
  expect(cut.match(/input: \[12\]|length: 12/g)).toHaveLength(2);
  return cut;
}

function compiled(file: string, lowering: (typeof lowerings)[number]) {
  const path = join(root, 'examples', file);
  // three members keep it quick; kfold(k) needs its k
  const members = file.startsWith('kfold') ? undefined : 3;
  const source = file === 'every-kind.net' ? EVERY_KIND : shorter(file, readFileSync(path, 'utf8'));
  const state = compile(source, path, { host: fileHost(path), lowering, members });
  expect(hasErrors(state.diagnostics), JSON.stringify(state.diagnostics)).toBe(false);
  return state;
}

/** A batch of the shapes the trainer feeds: inputs in [0, 1), labels as the loss reads them. */
function batch(state: ReturnType<typeof compiled>, seed: number, members = state.ensemble!.members): { x: Tensor; y: Tensor } {
  const e = state.ensemble!;
  const train = state.program!.train!;
  const lead = e.ops[0].shared ? [] : [members];
  const x = tf.randomUniform([...lead, 6, ...e.ops[0].shape], 0, 1, 'float32', seed);
  const out = e.ops[state.ir!.output].shape;
  const labels = train.dataShape?.labels;
  const classes = labels?.kind === 'classes' ? labels.classes : 0;
  const u = tf.randomUniform([...lead, 6], 0, 1, 'float32', seed + 1);
  let y: Tensor;
  if (!classes) y = tf.randomUniform([...lead, 6, out[out.length - 1]], 0, 1, 'float32', seed + 2);
  else if (train.loss.name === 'categorical_crossentropy' || (train.loss.name !== 'binary_crossentropy' && !train.loss.name.startsWith('sparse') && classes > 2)) {
    y = tf.cast(tf.oneHot(tf.cast(tf.floor(tf.mul(u, classes)), 'int32'), classes), 'float32');
  } else y = tf.expandDims(tf.floor(tf.mul(u, train.loss.name.startsWith('sparse') ? classes : 2)), -1);
  return { x, y };
}

async function same(a: Tensor, b: Tensor, what: string): Promise<void> {
  const [p, q] = [await a.data(), await b.data()];
  expect(Buffer.from(p.buffer).equals(Buffer.from(q.buffer)), what).toBe(true);
}

const modules = new Map<string, Promise<{ state: ReturnType<typeof compiled>; module: Awaited<ReturnType<typeof importModule>> }>>();

/** A file's compiled module under a lowering, written and imported once: the cpu and wasm cases share it. */
function compiledModule(file: string, lowering: (typeof lowerings)[number]) {
  const key = `${file}|${lowering}`;
  if (!modules.has(key)) {
    const state = compiled(file, lowering);
    modules.set(key, importModule(tf, state).then((module) => ({ state, module })));
  }
  return modules.get(key)!;
}

async function compare(file: string, lowering: (typeof lowerings)[number], backend: 'cpu' | 'wasm'): Promise<void> {
  await tf.setBackend('cpu');
  const { state, module } = await compiledModule(file, lowering);
  await tf.setBackend(backend);
  // after the first step each member takes the next one's hyperparameters, as PBT's exploit would: the
  // module must read them from the population, never from the values it was compiled with
  const table = hyperTable(state.program!, state.ir!);
  const moving = ['lr', ...table.varied.keys()];
  let shifted = false;
  const hyper = (key: string, m: number) => table.value(key, shifted && moving.includes(key) ? (m + 1) % state.ensemble!.members : m);
  const own = runtimePopulation(tf, state, { hyper });
  const theirs = runtimePopulation(tf, state, { hyper, forward: module.forward, step: module.step });
  const names = ['accuracy', 'mse', 'mae'].filter((m) => state.program!.train!.metrics.includes(m));
  const pops: Population[] = [own, theirs];
  const step = async (s: number, members?: number) => {
    const { x, y } = batch(state, 10 * s + 1, members);
    const got: Record<string, Tensor>[] = [];
    const take = { names, take: (v: Record<string, Tensor>) => void got.push(v) };
    const [la, lb] = [pops[0].step({ kind: 'tensors', x, y, metrics: take }), pops[1].step({ kind: 'tensors', x, y, metrics: take })];
    await same(la, lb, `losses at step ${s}`);
    for (const name of names) await same(got[0][name], got[1][name], `${name} at step ${s}`);
    tf.dispose([x, y, la, lb, ...got.flatMap((g) => Object.values(g))]);
  };
  const expectSameState = async () => {
    const [sa, sb] = [await pops[0].exportState(), await pops[1].exportState()];
    expect([...sb.keys()]).toEqual([...sa.keys()]);
    for (const [key, v] of sa) expect(Buffer.from(sb.get(key)!.buffer).equals(Buffer.from(v.buffer)), key).toBe(true);
  };
  try {
    for (let s = 0; s < 3; s++) {
      await step(s);
      shifted = true;
      for (const p of pops) p.hyperChanged();
    }
    await expectSameState();
    const { x } = batch(state, 99);
    await same(pops[0].forward(x, false), pops[1].forward(x, false), 'evaluation outputs');
    // compacted to two members, in another order (halving, then a PBT copy): the module's N follows
    if (state.ensemble!.members > 2) {
      const smaller = pops.map((p) => p.gather([2, 0]));
      pops.forEach((p) => p.dispose());
      pops.splice(0, 2, ...smaller);
      if (lowering === 'loop') {
        // the loop lowering's code is written member by member: it says so, rather than train the wrong members
        const { x, y } = batch(state, 31, 2);
        expect(() => pops[1].step({ kind: 'tensors', x, y })).toThrow(new RegExp(`compiled with --lowering loop for ${state.ensemble!.members} members, and the population has 2`));
        tf.dispose([x, y]);
        return;
      }
      await step(3, 2);
      await expectSameState();
    }
  } finally {
    for (const p of pops) p.dispose();
  }
}

/**
 * The lowerings a file is compared under on cpu: all three, unless an earlier file has the same model block
 * (pbt-lenet.net's is lenet.net's), whose lowered layers are the same code; then grouped alone, where its
 * schedule still changes the hyperparameters the module reads.
 */
const modelsSeen = new Set<string>();
function loweringsFor(file: string): readonly (typeof lowerings)[number][] {
  if (file === 'every-kind.net') return lowerings;
  const model = /^model[^]*?^}/m.exec(readFileSync(join(root, 'examples', file), 'utf8'))![0];
  if (modelsSeen.has(model)) return ['grouped'];
  modelsSeen.add(model);
  return lowerings;
}

describe("the compiled module's step is netc's, byte for byte", () => {
  for (const file of [...examples, 'every-kind.net']) {
    for (const lowering of loweringsFor(file)) {
      it(`${file}, ${lowering}, cpu`, () => compare(file, lowering, 'cpu'));
    }
    it(`${file}, grouped, wasm`, () => compare(file, 'grouped', 'wasm'));
  }
});
