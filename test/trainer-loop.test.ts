// The trainer's loop around the step: a step's values read at once (cpu, wasm) or through data() (webgpu)
// give the same run; onStep comes on a timer, not after every step; checkpoints on the clock land at
// whatever step the clock says, mid-epoch too, and a run resumed from any of them ends byte-identical.
import { describe, expect, it } from 'vitest';
import { compile } from '../src/pipeline.js';
import { train, type EpochReport, type TrainCallbacks, type TrainSetup } from '../src/train/trainer.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { loadDataset } from '../src/data/load.js';
import { splitValidation } from '../src/data/split.js';
import { makeSchedules } from '../src/train/schedules.js';
import { decodeTensors, encodeCheckpoint, type CheckpointManifest } from '../src/train/checkpoint.js';
import type { Progress } from '../src/train/trainer.js';
import type { TF } from '../src/kernels/tf.js';
import { tf, useBackend } from './equivalence/harness.js';

// 60 training examples in batches of 8: 8 steps an epoch (the last one of 4), 40 steps in all
const SOURCE = `model m(input: [2]) {
  dense(8, activation: tanh)
  dense(1, activation: sigmoid)
}
ensemble { members: 5 seed: 3 vary lr: loguniform(0.005, 0.2) }
train { data: moons(n: 80, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: adam batch: 8 epochs: 5 metrics: [accuracy, mae] }
schedule pbt { every: 2 epochs, metric: loss, quantile: 0.25 }
`;

/** train() on SOURCE with these extras (a TF.js namespace of its own, checkpoint options, a resume); callbacks may want the hyperparameter keys. */
async function trainSource(extra: Partial<TrainSetup> = {}, callbacks: TrainCallbacks | ((hyperKeys: string[]) => TrainCallbacks) = {}, source = SOURCE) {
  await useBackend('cpu');
  const state = compile(source, 'loop.net');
  const program = state.program!;
  const data = splitValidation(await loadDataset(program.train!.data, { baseDir: '.', seed: 3 }), program.train!.validation);
  const table = hyperTable(program, state.ir!);
  const schedules = makeSchedules(program.schedules, program.ensemble.vary, (path) => [...table.varied].find(([, p]) => p === path)![0], 3);
  const epochs: EpochReport[] = [];
  const onEpoch = (r: EpochReport) => epochs.push({ ...r, seconds: 0 });
  const setup: TrainSetup = { tf: tf as unknown as TF, program, model: state.ir!, ensemble: state.ensemble!, hyper: table, data, steps: 40, seed: 3, schedules, ...extra };
  const result = await train(setup, { onEpoch, ...(typeof callbacks === 'function' ? callbacks(table.keys) : callbacks) });
  const weights = await result.population.exportState();
  result.population.dispose();
  return { result, weights, epochs };
}

describe('the trainer loop', () => {
  it('reads a step through data() on a backend without a plain dataSync (webgpu) to the same run, bit for bit', async () => {
    const sync = await trainSource();
    // the cpu backend under another name: the trainer takes the asynchronous read
    const asWebgpu = { ...(tf as unknown as TF), getBackend: () => 'webgpu' } as TF;
    const read = await trainSource({ tf: asWebgpu });
    expect(read.epochs).toEqual(sync.epochs);
    expect(read.result.final).toEqual(sync.result.final);
    for (const [name, values] of sync.weights) expect(read.weights.get(name), name).toEqual(values);
    // PBT acted on the metrics summed from those reads
    expect(sync.epochs.length).toBe(5);
  });

  it('calls onStep at most every onStepEveryMs, and after the last step', async () => {
    const every: Progress[] = [];
    await trainSource({}, { onStep: (p) => every.push(p), onStepEveryMs: 0 });
    expect(every.map((p) => p.step)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const timed: Progress[] = [];
    await trainSource({}, { onStep: (p) => timed.push(p), onStepEveryMs: 60_000 });
    // the first step (nothing reported yet) and the last
    expect(timed.map((p) => p.step)).toEqual([1, 40]);
    expect(timed[1]).toMatchObject({ steps: 40, epoch: 5, epochs: 5 });
    expect(timed[1].memberStepsPerSecond).toBeGreaterThan(0);
  });
});

type Taken = { manifest: CheckpointManifest; tensors: Map<string, Float32Array> };

/** Callbacks that keep every checkpoint in memory, as the CLI would write it. */
function keeper(taken: Taken[]) {
  return (hyperKeys: string[]): TrainCallbacks => ({
    checkpoint: async (population, position, retired, extra) => {
      const { manifest, bytes } = await encodeCheckpoint(population, position, { fingerprint: 'f', seed: 3, hyperKeys, retired, extra, data: 'x.bin' });
      taken.push({ manifest, tensors: decodeTensors(manifest, bytes) });
    },
  });
}

describe('checkpoints on the clock', () => {
  it('without checkpointEvery or checkpointSeconds, one checkpoint: at the end', async () => {
    const taken: Taken[] = [];
    await trainSource({}, keeper(taken));
    expect(taken.map((c) => c.manifest.position.step)).toEqual([40]);
  });

  // a clock that moves a second each time it is read: the resident loop reads it after every step, waves at each interval's end
  it.each([
    ['resident', {}, 4],
    ['in waves', { resident: 2 }, 1],
  ])('%s: they land where the clock says, and a run resumed from each ends byte-identical', async (how, extra, seconds) => {
    let now = 0;
    const clock = () => (now += 1000);
    const taken: Taken[] = [];
    const straight = await trainSource({ ...extra, checkpointSeconds: seconds, clock }, keeper(taken));
    const mid = taken.filter((c) => c.manifest.position.step < 40);
    expect(mid.length).toBeGreaterThan(2);
    // the resident loop ends an interval where the clock is noticed, mid-epoch; waves train whole intervals
    const midEpoch = mid.filter((c) => c.manifest.position.batch % 8 !== 0);
    if (how === 'resident') expect(midEpoch.length).toBeGreaterThan(0);
    else expect(midEpoch).toEqual([]);
    const last = taken.at(-1)!;
    expect(last.manifest.position.step).toBe(40);
    for (const from of mid) {
      const at = from.manifest.position.step;
      const after: Taken[] = [];
      const resumed = await trainSource({ ...extra, resume: from }, keeper(after));
      expect(resumed.epochs, `from step ${at}`).toEqual(straight.epochs.filter((r) => r.step > at));
      expect(resumed.result.final, `from step ${at}`).toEqual(straight.result.final);
      expect(JSON.stringify(after.at(-1)!.manifest), `from step ${at}`).toBe(JSON.stringify(last.manifest));
      for (const [name, values] of last.tensors) expect(after.at(-1)!.tensors.get(name), `${name} from step ${at}`).toEqual(values);
    }
  });
});
