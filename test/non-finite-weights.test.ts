// Non-finite weights are seen by the divergence guard whatever the loss clips (issue 24, item 6): binary
// cross-entropy clips its predictions to [eps, 1 - eps], so a member whose weights went NaN or infinite
// kept a finite loss (8.06) and trained on. The guard looks at each member's parameters at every
// interval's end (Population.nonFiniteMembers on the backend, HostStore.nonFiniteMembers for waves and
// workers), and the generated step's loss is NaN where a prediction is not finite.
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { populationOf, tf, useBackend } from './equivalence/harness.js';
import { netc } from './helpers.js';
import { compile } from '../src/pipeline.js';
import { Population, type Engine } from '../src/runtime/population.js';
import { readCheckpoint } from '../src/cli/run-dir.js';
import { nonFiniteParameter } from '../src/train/checkpoint.js';
import { nonFiniteRows } from '../src/kernels/fused.js';
import type { Lowering } from '../src/layers/forward.js';
import type { TF } from '../src/kernels/tf.js';

beforeAll(() => useBackend('wasm'));

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-nonfinite-'));

function population(source: string, lowering: Lowering, engine: Engine = 'ops'): Population {
  return populationOf(compile(source, 'nan.net', { lowering }), engine);
}

/** Member `m`'s float `at` of parameter `name` set to `value`, through the canonical state. */
async function plant(pop: Population, name: string, m: number, at: number, value: number): Promise<void> {
  const state = await pop.exportState();
  const all = state.get(name)!;
  all[(all.length / pop.n) * m + at] = value;
  pop.importState(state);
}

const MLP = `model m(input: [3]) {
  dense(5, activation: relu)
  dense(4, activation: tanh)
  dense(1, activation: sigmoid)
}
ensemble { members: 4 seed: 2 }
train { data: xor(n: 32) loss: binary_crossentropy optimizer: adam(lr: 0.01) batch: 8 epochs: 1 }
`;

describe('Population.nonFiniteMembers', () => {
  it.each(['grouped', 'blockdiag', 'loop'] as Lowering[])('finds the member with a NaN or an infinity in any parameter (%s)', async (lowering) => {
    for (const [name, m, value] of [['dense_1/kernel', 2, NaN], ['dense_2/bias', 1, Infinity], ['dense_3/kernel', 3, -Infinity]] as const) {
      const pop = population(MLP.replace('input: [3]', 'input: [2]'), lowering);
      expect(await pop.nonFiniteMembers()).toEqual([]);
      await plant(pop, name, m, 1, value);
      expect(await pop.nonFiniteMembers(), `${name} of member ${m}`).toEqual([m]);
      pop.dispose();
    }
  });

  it("finds it by the generated module's scan once the fused step has run, in each parameter layout", async () => {
    const x = Float32Array.from({ length: 16 }, (_, i) => (i % 3) - 1);
    const y = Float32Array.from({ length: 8 }, (_, i) => i % 2);
    // dense_1/kernel and bias lie in columns, dense_3's [4, 1] kernel stacked; 5 and 4 floats leave scalar tails
    for (const [name, m, at, value] of [['dense_1/kernel', 2, 7, NaN], ['dense_1/bias', 0, 4, Infinity], ['dense_2/kernel', 3, 19, -Infinity], ['dense_3/kernel', 1, 3, NaN]] as const) {
      const pop = population(MLP.replace('input: [3]', 'input: [2]'), 'grouped', 'fused');
      pop.step({ kind: 'host', x, y, size: 8, names: [] });
      const scan = () => (pop as unknown as { fused: { nonFiniteMembers(): number[] | undefined } }).fused.nonFiniteMembers();
      expect(scan()).toEqual([]);
      await plant(pop, name, m, at, value);
      expect(scan(), `${name} of member ${m}`).toEqual([m]);
      expect(await pop.nonFiniteMembers()).toEqual([m]);
      pop.dispose();
    }
  });

  it('nonFiniteRows, the host store and checkpoint check, finds the same rows', () => {
    const values = new Float32Array(12);
    values[5] = NaN;
    values[10] = -Infinity;
    expect(nonFiniteRows(values, 3)).toEqual([1, 3]);
    expect(nonFiniteRows(new Float32Array([3e38, -3e38, 0, -0]), 2)).toEqual([]);
  });
});

describe('the generated step', () => {
  // a linear output under binary cross-entropy: +Inf is clipped to 1 - eps, a finite loss, unless the step says NaN
  const LINEAR = MLP.replace('dense(1, activation: sigmoid)', 'dense(1)').replace('input: [3]', 'input: [2]');
  it('gives a NaN loss for a member whose prediction is infinite, and the others their own', async () => {
    const pop = population(LINEAR, 'grouped', 'fused');
    expect(pop.hostSteps).toBe(true);
    const clean = population(LINEAR, 'grouped', 'fused');
    await plant(pop, 'dense_3/bias', 1, 0, Infinity);
    const x = Float32Array.from({ length: 16 }, (_, i) => (i % 3) - 1);
    const y = Float32Array.from({ length: 8 }, (_, i) => i % 2);
    const [poisoned, reference] = [pop, clean].map((p) => Array.from(p.step({ kind: 'host', x, y, size: 8, names: [] }).loss));
    expect(Number.isNaN(poisoned[1])).toBe(true);
    for (const m of [0, 2, 3]) expect(poisoned[m]).toBe(reference[m]);
    pop.dispose();
    clean.dispose();
  });
});

// member 1's lr of 3e38 drives its Adam step past float32's range: its weights become infinite, then NaN,
// while its clipped cross-entropy stays at -log(eps) / 2 = 8.06
const DIVERGING = `model m(input: [2]) {
  dense(8, activation: tanh)
  dense(1, activation: sigmoid)
}
ensemble { members: 2 seed: 1 vary lr: [0.1, 3e38] }
train { data: xor(n: 64, noise: 0.1) loss: binary_crossentropy optimizer: adam(lr: 0.01) batch: 16 epochs: 3 }
`;

describe('netc train', () => {
  it.each([
    ['wasm, TF.js ops', ['--backend', 'wasm', '--engine', 'ops']],
    ['wasm, the generated step', ['--backend', 'wasm', '--engine', 'fused']],
    ['wasm, TF.js ops, in waves', ['--backend', 'wasm', '--engine', 'ops', '--resident', '1']],
    ['cpu', ['--backend', 'cpu']],
  ])('stops a member whose weights went non-finite under a clipped loss (%s)', async (_, options) => {
    const dir = tmp();
    const file = join(dir, 'nan.net');
    writeFileSync(file, DIVERGING);
    const out = join(dir, 'run');
    const r = await netc('train', file, ...options, '--out', out);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/netc: member 1 diverged: (a non-finite loss|non-finite weights) at step \d+; it is stopped, the others go on/);
    const { manifest, tensors } = readCheckpoint(out);
    expect(manifest.member_ids).toEqual([0]);
    expect(manifest.retired?.map((m) => m.member)).toEqual([1]);
    expect(nonFiniteParameter(manifest, tensors)).toBeUndefined();
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.per_member.find((m: { member: number }) => m.member === 0).metrics.loss).toBeLessThan(1);
  });
});
