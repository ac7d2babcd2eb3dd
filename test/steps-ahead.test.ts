// Steps trained several to a call (src/train/steps-ahead.ts, the generated module's steps()) end where
// training them one call a step ends, byte for byte: the checkpoint, metrics.jsonl and events.jsonl of
// `netc train` with NETC_STEPS_PER_CALL=1 and with the default. Each file crosses something a run of
// steps must not run past, or must stop at: epochs of one step, a scheduled lr, short last batches and
// validation, halving, a checkpoint by steps, a member whose weights go non-finite.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { populationOf, useBackend } from './equivalence/harness.js';
import { compile } from '../src/pipeline.js';

const saved = process.env.NETC_STEPS_PER_CALL;
afterEach(() => {
  if (saved === undefined) delete process.env.NETC_STEPS_PER_CALL;
  else process.env.NETC_STEPS_PER_CALL = saved;
});

const FILES: [string, string, string[]][] = [
  [
    'epochs of one step (Seed 000), a cosine lr_schedule',
    `model m(input: [2]) {
  dense(20, activation: sigmoid)
  dense(1, activation: sigmoid)
}
ensemble { members: 15 seed: 0 vary lr: loguniform(0.005, 0.05) }
train { data: xor(n: 5) validation: 0 loss: binary_crossentropy optimizer: adam(lr: 0.02) lr_schedule: cosine(warmup: 10 steps, min: 0.1) batch: 5 epochs: 120 }
`,
    [],
  ],
  [
    'short last batches, shuffled epochs, validation at each epoch, sgd with momentum, a checkpoint every 13 steps',
    `model m(input: [2]) {
  dense(8, activation: tanh)
  dense(2, activation: softmax)
}
ensemble { members: 6 seed: 4 vary momentum: uniform(0.5, 0.95) }
train { data: moons(n: 70, noise: 0.2) validation: 0.2 loss: sparse_categorical_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 9 epochs: 6 metrics: [accuracy] }
`,
    ['--checkpoint-every', '13'],
  ],
  [
    'halving every 2 epochs',
    `model m(input: [2]) {
  dense(12, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 8 seed: 9 vary lr: loguniform(1e-3, 1e-1) }
train { data: moons(n: 40, noise: 0.2) validation: 0 loss: binary_crossentropy optimizer: rmsprop(lr: 0.01) batch: 8 epochs: 8 }
schedule halving { every: 2 epochs keep: 0.5 metric: loss min_members: 2 }
`,
    [],
  ],
  [
    "a member whose Adam step leaves float32's range (its weights go non-finite under a clipped loss)",
    `model m(input: [2]) {
  dense(8, activation: tanh)
  dense(1, activation: sigmoid)
}
ensemble { members: 2 seed: 1 vary lr: [0.1, 3e38] }
train { data: xor(n: 64, noise: 0.1) loss: binary_crossentropy optimizer: adam(lr: 0.01) batch: 16 epochs: 3 }
`,
    [],
  ],
];

/** Every file of a run directory that training writes, but the timings (summary.json) and the report that shows them. */
function runFiles(dir: string): Map<string, Buffer> {
  const files = readdirSync(dir).filter((f) => f !== 'summary.json' && f !== 'report.html' && f !== 'run.json');
  return new Map(files.sort().map((f) => [f, readFileSync(join(dir, f))]));
}

async function trainWith(perCall: string | undefined, file: string, out: string, options: string[]): Promise<string> {
  if (perCall === undefined) delete process.env.NETC_STEPS_PER_CALL;
  else process.env.NETC_STEPS_PER_CALL = perCall;
  const r = await netc('train', file, '--backend', 'wasm', '--engine', 'fused', ...options, '--out', out);
  expect(r.code, r.err).toBe(0);
  return r.err;
}

describe('steps trained several to a call', () => {
  it.each(FILES)('end byte for byte as one call a step: %s', async (_, source, options) => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-ahead-'));
    const file = join(dir, 'm.net');
    writeFileSync(file, source);
    const one = await trainWith('1', file, join(dir, 'one'), options);
    const many = await trainWith(undefined, file, join(dir, 'many'), options);
    const [a, b] = [runFiles(join(dir, 'one')), runFiles(join(dir, 'many'))];
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [name, bytes] of a) expect(b.get(name)!.equals(bytes), name).toBe(true);
    // what each run said of stopped members is the same too
    const stops = (err: string) => err.split('\n').filter((l) => l.includes('diverged'));
    expect(stops(many)).toEqual(stops(one));
  });
});

describe('Population.step, steps ahead', () => {
  // +Infinity in the output's bias: its sigmoid is 1, clipped by the cross-entropy to a finite loss, so only
  // the look at the weights at an interval's end finds it
  const SOURCE = `model m(input: [2]) {
  dense(4, activation: tanh)
  dense(1, activation: sigmoid)
}
ensemble { members: 3 seed: 5 }
train { data: xor(n: 8) loss: binary_crossentropy optimizer: adam(lr: 0.01) batch: 4 epochs: 1 }
`;
  const batch = { x: Float32Array.from([1, 0, 0, 1, 1, 1, 0, 0]), y: Float32Array.from([1, 1, 1, 1]), size: 4 };

  it('runs every step, or stops after the interval end where a member has a non-finite weight', async () => {
    await useBackend('wasm');
    for (const [ends, done] of [[[false, false, false, false], 4], [[false, true, false, false], 2]] as const) {
      const pop = populationOf(compile(SOURCE, 'm.net', { lowering: 'grouped' }), 'fused');
      pop.step({ kind: 'host', x: batch.x, y: batch.y, size: batch.size, names: [] });
      const state = await pop.exportState();
      state.get('dense_2/bias')![1] = Infinity;
      pop.importState(state);
      const r = pop.step({ kind: 'ahead', batches: [batch, batch, batch, batch], ends, names: [] });
      expect(r.done, `ends ${ends}`).toBe(done);
      expect(r.values.every((v) => v.loss.every(Number.isFinite))).toBe(true);
      expect(pop.stepsTaken).toBe(1 + done);
      pop.dispose();
    }
  });
});
