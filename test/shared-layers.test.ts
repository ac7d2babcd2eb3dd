// Shared layers beyond the equivalence of training (test/equivalence/shared.test.ts): the syntax, the
// slicing map, checkpoints and resume, extraction, import, what schedules do to a population with shared
// layers, and what is refused (sharded training, a run on after a member diverged).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { compile } from '../src/pipeline.js';
import { lowerings } from '../src/layers/forward.js';
import { memberParamSlice, slicingMap } from '../src/ensemble/slicing-map.js';
import { openRun, readCheckpoint } from '../src/cli/run-dir.js';
import { decodeTensors, encodeCheckpoint, restore } from '../src/train/checkpoint.js';
import { registerFileScheme } from '../src/serve/file-io.js';
import { train } from '../src/train/trainer.js';
import { Population } from '../src/runtime/population.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { makeSchedules } from '../src/train/schedules.js';
import { loadDataset } from '../src/data/load.js';
import { splitValidation } from '../src/data/split.js';
import type { TF, Tensor } from '../src/kernels/tf.js';
import { disposePopulation, type ModulePopulation } from '../src/kernels/module-population.js';
import { build, expectClose, randomBatch, tf, useBackend } from './equivalence/harness.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-shared-'));

// 8 steps an epoch (200 moons, 40 held out, batches of 20)
const MODEL = (extra = '') => `model multihead(input: [2]) {
  trunk = shared dense(8, activation: relu)
  shared layernorm()
  dense(1, activation: sigmoid)
}
ensemble { members: 4 seed: 2 vary lr: [0.01, 0.03, 0.1, 0.003] }
train { data: moons(n: 200) validation: 0.2 loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 20 epochs: 3 }
${extra}
`;

function file(source: string): string {
  const path = join(tmp(), 'multihead.net');
  writeFileSync(path, source);
  return path;
}

beforeAll(() => useBackend('cpu'));

describe('the syntax', () => {
  it('shared before a layer call marks its parameters shared, and is still a name elsewhere', () => {
    const state = compile('model m(input: [2]) {\n  shared = shared dense(3)\n  drop = dropout(0.1, from: shared)\n  dense(1)\n}\nensemble { vary drop.rate: [0.1, 0.2] }\n', 'x.net');
    expect(state.diagnostics).toEqual([]);
    expect(state.ir!.params.map((p) => `${p.name}${p.shared ? ' shared' : ''}`)).toEqual(['dense_1/kernel shared', 'dense_1/bias shared', 'dense_2/kernel', 'dense_2/bias']);
    expect(state.ir!.ops[1].label).toBe('shared');
  });

  it("shared(...) is a call of an unknown layer, not the keyword", () => {
    const state = compile('model m(input: [2]) {\n  shared(3)\n}\n', 'x.net');
    expect(state.diagnostics.map((d) => d.code)).toEqual([2001]);
  });
});

describe('the ensemble IR and the slicing map', () => {
  it.each(lowerings)('%s: a shared parameter is one tensor of its own shape, the same slice for every member', (lowering) => {
    const e = compile(MODEL(), 'x.net', { lowering })!.ensemble!;
    const map = slicingMap(e);
    const kernel = map.params.find((p) => p.name === 'dense_1/kernel')!;
    expect(kernel).toMatchObject({ layout: 'shared', fused_shape: [2, 8], member_axes: [], step: [0, 0], tensor: 'dense_1/kernel' });
    expect(memberParamSlice(kernel, 3)).toEqual(memberParamSlice(kernel, 0));
    // the head's parameters are each member's own
    const head = map.params.find((p) => p.name === 'dense_2/kernel')!;
    if (lowering === 'loop') expect(head.layout).toBe('separate');
    else expect(head.member_axes.length).toBeGreaterThan(0);
    // a trunk on the shared input is computed once under the widened lowerings
    expect(e.ops.map((op) => op.shared)).toEqual(lowering === 'loop' ? [true, false, false, false] : [true, true, true, false]);
  });
});

describe('checkpoints', () => {
  it.each(lowerings)('%s: 3 steps, checkpoint, 3 more == 6 straight (adam, shared beta powers included)', async (lowering) => {
    const batches = Array.from({ length: 6 }, (_, s) => ({ x: randomBatch(40 + s, [5, 2]), y: randomBatch(50 + s, [5, 1]) }));
    const straight = build(MODEL(), lowering, 4);
    for (const { x, y } of batches) straight.pop.step({ kind: 'tensors', x, y }).dispose();
    const first = build(MODEL(), lowering, 4);
    for (const { x, y } of batches.slice(0, 3)) first.pop.step({ kind: 'tensors', x, y }).dispose();
    const { manifest, bytes } = await encodeCheckpoint(first.pop, { step: 3, epoch: 0, batch: 3 }, { fingerprint: 'f', seed: 2, hyperKeys: [], data: 'x.bin' });
    // shared tensors and their slots have no member axis
    expect(manifest.tensors.filter((t) => t.shared).map((t) => [t.name, t.shape])).toContainEqual(['dense_1/kernel:v', [2, 8]]);
    expect(manifest.acc_beta_shared).toEqual([first.pop.state.sharedAccBeta1, first.pop.state.sharedAccBeta2]);
    const second = build(MODEL(), lowering, 4);
    restore(second.pop, manifest, decodeTensors(manifest, bytes));
    for (const { x, y } of batches.slice(3)) second.pop.step({ kind: 'tensors', x, y }).dispose();
    const [a, b] = [await straight.pop.exportState(), await second.pop.exportState()];
    for (const [name, values] of a) expect(Array.from(b.get(name)!), name).toEqual(Array.from(values));
    [straight, first, second].forEach((x) => x.pop.dispose());
  });

  it('a run stopped mid-epoch and resumed ends byte-identical to a straight run', async () => {
    const net = file(MODEL());
    const [straight, resumed] = [tmp(), tmp()];
    expect((await netc('train', net, '--backend', 'cpu', '--checkpoint-every', '5', '--out', straight)).code).toBe(0);
    expect((await netc('train', net, '--steps', '13', '--backend', 'cpu', '--checkpoint-every', '5', '--out', resumed)).code).toBe(0);
    // a run started with --steps keeps that budget: the file's own is asked for again
    const r = await netc('train', net, '--backend', 'cpu', '--checkpoint-every', '5', '--resume', resumed, '--epochs', '3');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('resuming at step 13');
    const [a, b] = [readCheckpoint(straight), readCheckpoint(resumed)];
    expect(b.manifest.position.step).toBe(24);
    expect(b.manifest.acc_beta_shared).toEqual(a.manifest.acc_beta_shared);
    for (const [name, values] of a.tensors) expect(Buffer.from(b.tensors.get(name)!.buffer).equals(Buffer.from(values.buffer)), name).toBe(true);
    expect(readFileSync(join(resumed, 'metrics.jsonl'), 'utf8')).toBe(readFileSync(join(straight, 'metrics.jsonl'), 'utf8'));
  });
});

describe('extraction and import', () => {
  it('member K extracted (the shared layers and its own) predicts what the fused member K predicts', async () => {
    const run = tmp();
    expect((await netc('train', file(MODEL()), '--steps', '10', '--backend', 'cpu', '--out', run)).code).toBe(0);
    const out = tmp();
    const r = await netc('extract', run, '--all', '--out', out, '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    registerFileScheme(tf as unknown as TF);
    const x = randomBatch(7, [9, 2]);
    const { population } = openRun(run, tf as unknown as TF);
    const fused = population.forward(x, false);
    for (let m = 0; m < 4; m++) {
      const model = await tf.loadLayersModel(pathToFileURL(join(out, `member-${m}`, 'model.json')).href);
      expect(model.getLayer('dense_1').getWeights()[0].shape).toEqual([2, 8]);
      expectClose((model.predict(x) as tf.Tensor).dataSync(), tf.squeeze(tf.slice(fused, m, 1), [0]).dataSync(), `member ${m}`);
      model.dispose();
    }
    population.dispose();
  });

  it("import replaces member K's own weights; other shared weights are refused unless --shared", async () => {
    const [net, run] = [file(MODEL()), tmp()];
    expect((await netc('train', net, '--steps', '10', '--backend', 'cpu', '--out', run)).code).toBe(0);
    const models = tmp();
    expect((await netc('extract', run, '--all', '--out', models, '--backend', 'cpu')).code).toBe(0);
    const before = readCheckpoint(run);
    // member 0's model into member 2: the same shared weights, so only member 2's head changes
    expect((await netc('import', join(models, 'member-0'), '--into', run, '--member', '2')).code).toBe(0);
    const after = readCheckpoint(run);
    for (const t of before.manifest.tensors.filter((t) => t.shared)) expect(Array.from(after.tensors.get(t.name)!), t.name).toEqual(Array.from(before.tensors.get(t.name)!));
    const head = (c: typeof before, m: number) => Array.from(c.tensors.get('dense_2/kernel')!.slice(m * 8, (m + 1) * 8));
    expect(head(after, 2)).toEqual(head(before, 0));
    // a model whose trunk differs from the run's: refused, nothing written
    const weights = join(models, 'member-1', 'weights.bin');
    const changed = readFileSync(weights);
    changed.writeFloatLE(changed.readFloatLE(0) + 1, 0);
    writeFileSync(weights, changed);
    const refused = await netc('import', join(models, 'member-1'), '--into', run, '--member', '1');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/shared layers \(dense_1\/kernel\) differ from the run's.*add --shared/);
    expect(Array.from(readCheckpoint(run).tensors.get('dense_1/kernel')!)).toEqual(Array.from(after.tensors.get('dense_1/kernel')!));
    // with --shared: every member's trunk is the model's, its optimizer state and beta powers afresh
    const asked = await netc('import', join(models, 'member-1'), '--into', run, '--member', '1', '--shared');
    expect(asked.code, asked.err).toBe(0);
    const replaced = readCheckpoint(run);
    expect(replaced.tensors.get('dense_1/kernel')![0]).toBe(changed.readFloatLE(0));
    expect(Array.from(replaced.tensors.get('dense_1/kernel:m')!).every((v) => v === 0)).toBe(true);
    expect(replaced.manifest.acc_beta_shared).toEqual([1, 1]);
    // and the run trains on from there
    const resumed = await netc('train', net, '--backend', 'cpu', '--resume', run);
    expect(resumed.code, resumed.err).toBe(0);
  });
});

describe('schedules act on per-member parameters only', () => {
  it.each(lowerings)('%s: gather (PBT copies, compaction) leaves the shared tensors and their slots as they are', async (lowering) => {
    const b = build(MODEL(), lowering, 4);
    for (let s = 0; s < 2; s++) b.pop.step({ kind: 'tensors', x: randomBatch(s, [5, 2]), y: randomBatch(9 + s, [5, 1]) }).dispose();
    const before = await b.pop.exportState();
    for (const positions of [[0, 0, 2, 0], [1, 3]]) {
      const next = b.pop.gather(positions);
      const after = await next.exportState();
      for (const [name, values] of before) {
        if (b.pop.sharedParams.has(name.split(':')[0])) expect(Array.from(after.get(name)!), name).toEqual(Array.from(values));
      }
      // a member's own parameters come from the member it copies
      const size = values(before, 'dense_2/kernel').length / 4;
      positions.forEach((p, m) => expect(values(after, 'dense_2/kernel').slice(m * size, (m + 1) * size)).toEqual(values(before, 'dense_2/kernel').slice(p * size, (p + 1) * size)));
      expect([next.state.sharedAccBeta1, next.state.sharedAccBeta2]).toEqual([b.pop.state.sharedAccBeta1, b.pop.state.sharedAccBeta2]);
      next.dispose();
    }
    b.pop.dispose();
  });

  /** Trains a source with train() for `steps`, its schedules acting; `callbacks` as train() takes them. */
  const run = async (text: string, steps: number, callbacks: Parameters<typeof train>[1] = {}, checkpointEvery = 0) => {
    const state = compile(text, 'x.net');
    const program = state.program!;
    const data = splitValidation(await loadDataset(program.train!.data, { baseDir: '.', seed: 2 }), program.train!.validation);
    const table = hyperTable(program, state.ir!);
    const schedules = makeSchedules(program.schedules, program.ensemble.vary, (path) => [...table.varied].find(([, p]) => p === path)![0], 2);
    return train({ tf: tf as unknown as TF, program, model: state.ir!, ensemble: state.ensemble!, hyper: table, data, steps, seed: 2, schedules, checkpointEvery }, callbacks);
  };

  it('PBT copies members\' own weights at step 8 and leaves the shared ones as a run without PBT has them there', async () => {
    /** The population's state at step 8, after the schedules acted there. */
    const at8 = async (text: string) => {
      let state: Map<string, Float32Array> | undefined;
      const events: string[] = [];
      const r = await run(text, 12, {
        checkpoint: async (source, position) => {
          if (position.step === 8) state = source instanceof Population ? await source.exportState() : new Map(source.state);
        },
        onEvent: (e) => void events.push(e.event),
      }, 4);
      r.population.dispose();
      return { state: state!, events };
    };
    const pbt = await at8(MODEL('schedule pbt { every: 1 epochs, metric: val_loss, quantile: 0.25 }'));
    const plain = await at8(MODEL());
    expect(pbt.events).toContain('exploit');
    for (const name of ['dense_1/kernel', 'dense_1/bias', 'layernorm_1/gamma', 'dense_1/kernel:m', 'dense_1/kernel:v']) expect(values(pbt.state, name), name).toEqual(values(plain.state, name));
    expect(values(pbt.state, 'dense_2/kernel')).not.toEqual(values(plain.state, 'dense_2/kernel'));
  });

  it('a member stopped by halving keeps the shared weights as they were when it stopped; the others train them on', async () => {
    const source = MODEL('schedule halving { every: 1 epochs, keep: 0.5, metric: val_loss }');
    const halved = await run(source, 16);
    const oneEpoch = await run(MODEL(), 8);
    expect(halved.retired.map((r) => r.step)).toEqual([8, 8]);
    const trunkAt8 = await oneEpoch.population.memberWeights(0);
    for (const r of halved.retired) for (const name of ['dense_1/kernel', 'dense_1/bias', 'layernorm_1/gamma']) expect(Array.from(r.params.get(name)!), name).toEqual(Array.from(trunkAt8.get(name)!));
    // the members left trained the trunk on past step 8
    expect(Array.from((await halved.population.memberWeights(0)).get('dense_1/kernel')!)).not.toEqual(Array.from(trunkAt8.get('dense_1/kernel')!));
    halved.population.dispose();
    oneEpoch.population.dispose();
  });
});

describe('netc compile', () => {
  it("the module's population trains its shared layers with the file's hyperparameters, as netc's own does", async () => {
    // in a folder inside the repository, so that the module's import('netc') finds this package (dist/)
    const dir = join(fileURLToPath(new URL('../.emit-tmp/', import.meta.url)), `shared-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const net = file(MODEL());
      const out = join(dir, 'multihead.ts');
      expect((await netc('compile', net, '-o', out)).code).toBe(0);
      const module = (await import(pathToFileURL(out).href)) as {
        createPopulation(tf: TF): ModulePopulation;
        step(pop: ModulePopulation, x: Tensor, y: Tensor): { losses: Tensor; metrics: Record<string, Tensor> };
      };
      const batches = Array.from({ length: 3 }, (_, s) => [randomBatch(60 + s, [5, 2]), randomBatch(70 + s, [5, 1])]);
      // the module's core alone: its own population, its own step
      const compiled = module.createPopulation(tf as unknown as TF);
      for (const [x, y] of batches) module.step(compiled, x, y).losses.dispose();
      const own = build(MODEL(), 'grouped', 4);
      for (const [x, y] of batches) own.pop.step({ kind: 'tensors', x, y }).dispose();
      const values = async (vars: Record<string, Tensor>) => Object.fromEntries(await Promise.all(Object.entries(vars).map(async ([k, v]) => [k, Array.from(await v.data())])));
      const [a, b] = [await values({ ...compiled.params, ...compiled.slots }), await values({ ...own.pop.module.params, ...own.pop.module.slots })];
      disposePopulation(compiled);
      own.pop.dispose();
      expect(Object.keys(a)).toEqual(Object.keys(b));
      for (const [name, v] of Object.entries(b)) expect(a[name], name).toEqual(v);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('refused', () => {
  it.each([['--resident', '2'], ['--workers', '2'], ['--queue', 'redis://127.0.0.1:1']])('netc train %s with shared layers: NET4022 at the first shared layer, exit 1', async (flag, value) => {
    const r = await netc('train', file(MODEL()), flag, value, '--backend', 'cpu', '--out', tmp());
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`multihead\\.net\\(2,18\\): error NET4022: ${flag} is refused: a population with shared layers trains in one process`));
  });

  it('a member that diverges stops the run: its NaN reached the shared layers, which every member reads', async () => {
    // a linear head under mse, whose learning rate makes it overflow
    const source = MODEL()
      .replace('dense(1, activation: sigmoid)', 'dense(1)')
      .replace('binary_crossentropy', 'mse')
      .replace('vary lr: [0.01, 0.03, 0.1, 0.003]', 'vary lr: [0.01, 1e30, 0.01, 0.01]')
      .replace('adam(lr: 0.02)', 'sgd(lr: 0.02)');
    const r = await netc('train', file(source), '--backend', 'cpu', '--out', tmp());
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/member 1 diverged .*; its gradient reached the shared layers/);
  });
});

function values(state: Map<string, Float32Array>, name: string): number[] {
  return Array.from(state.get(name)!);
}
