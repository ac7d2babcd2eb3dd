// Shared pieces of the benchmark: the jobs a worker runs, the models compared and how netc and the naive
// loop build them (the timing rule and memory sampling are in timing.ts, re-exported here). A job runs in a
// process of its own (bench/worker.ts), so that its peak RSS is its own.
import { readFileSync } from 'node:fs';
import type * as tfjs from '@tensorflow/tfjs';
import { compile } from '../src/pipeline.js';
import type { Lowering } from '../src/layers/forward.js';
import { Population } from '../src/runtime/population.js';
import { initMember } from '../src/kernels/init.js';
import { hyperTable } from '../src/runtime/hyper.js';
import type { TF } from '../src/kernels/tf.js';
import { forumBatchValues, lcg, type StepTimes, type Timing } from './timing.js';

export { MemorySampler, mean, median, timedSteps, timeSteps, vmHwm, type StepTimes, type Timing } from './timing.js';

type TFJS = typeof tfjs;

export type ModelName = 'forum' | 'lenet';
/** webgpu: the forum rows of the WGSL step against the webgpu op path (Dawn; on a machine without a GPU, Mesa's lavapipe) */
export type BackendChoice = 'wasm' | 'cpu' | 'webgpu';
export type NaiveMethod = 'trainOnBatch' | 'minimize';
/**
 * How a netc population's step runs (PopulationSpec.engine): `ops`, TF.js ops with autodiff; `fused`, the
 * generated step (WebAssembly on wasm, WGSL on webgpu). The bench asks for one or the other, never `auto`, so that a row says which ran.
 */
export type NetcEngine = 'ops' | 'fused';

/** What a worker prints for a netc job whose engine is not the one asked for (the fused engine not there, or not covering the model). */
export interface Unavailable {
  unavailable: string;
}
/**
 * How bench/torch_bench.py trains N members in PyTorch: forum `bmm` (stacked weights, torch.bmm), `vmap`
 * (functorch.vmap of one functional model) or `loop` (N nn.Modules one after another); lenet `loop` or
 * `grouped` (conv2d with groups=N, bmm for the dense layers).
 */
export type TorchMethod = 'bmm' | 'vmap' | 'loop' | 'grouped';

/** A PyTorch configuration, run by bench/torch_bench.py in a Python process of its own. */
export type TorchJob = { model: ModelName; method: TorchMethod; n: number; members: number } & Timing;

/** What bench/torch_bench.py prints for a TorchJob (times in ms, memory in bytes): StepResult's timing and memory, without TF.js's. */
export interface TorchResult extends Omit<StepResult, 'tfBytes' | 'tfTensors' | 'profile'> {
  threads: number;
  torch: string;
  /** the BLAS libraries the Python process mapped (Debian's torch uses the system libblas.so.3) */
  blas: string[] | null;
}

/** The forum step in jax-js at N members (bench/jax_bench.ts, a process of its own). */
export type JaxJob = { n: number } & Timing;

/** What bench/jax_bench.ts prints for a JaxJob: StepResult's timing and memory, without TF.js's. */
export interface JaxResult extends Omit<StepResult, 'tfBytes' | 'tfTensors' | 'profile'> {
  /** the first step: jit's trace and compile, then the step */
  firstStepMs: number;
  jax: string;
  device: 'wasm';
  /** 1: jax-js's wasm backend starts no worker threads without a global Worker (Node); null where it could */
  threads: 1 | null;
}

/**
 * A configuration of JAX in Python on XLA's CPU backend (bench/jax_xla.py, a Python process of its own):
 * forum, `steps` steps on `data` (a TrainData file: netc's batches), each epoch one lax.scan; lenet, `steps`
 * jitted steps on the bench's LeNet batch. threads: 1, one XLA thread; null, JAX's default (every core).
 */
export type JaxXlaJob = ({ model: 'forum'; data: string } | { model: 'lenet' }) & { n: number; steps: number; threads: 1 | null };

/** What bench/jax_xla.py prints for a JaxXlaJob: the timed run's member-steps/s, XLA's compile outside it. */
export interface JaxXlaResult {
  model: ModelName;
  n: number;
  /** seconds from the first step to the last losses read back (the compile, with one run of each shape, before) */
  seconds: number;
  memberStepsPerSecond: number;
  steps: number;
  /** the process's CPU seconds over those steps (user + system): what other processes' load does not inflate on one thread */
  trainCpuSeconds: number;
  compileSeconds: number;
  lastLoss: number;
  threads: 1 | null;
  xlaFlags: string;
  jax: string;
  /** lenet: the median and least wall ms of a step, and the median CPU ms */
  msMedian?: number;
  msMin?: number;
  cpuMsMedian?: number;
  peakRss: number;
}

/** The .net file each benchmark model comes from, and its batch size. */
export const models: Record<ModelName, { file: string; batch: number }> = {
  forum: { file: 'examples/forum.net', batch: 5 },
  lenet: { file: 'examples/lenet.net', batch: 64 },
};

export type Job =
  | ({ kind: 'netc'; model: ModelName; lowering: Lowering; engine: NetcEngine; n: number; backend: BackendChoice; profile?: boolean } & Timing)
  | ({
      kind: 'naive';
      model: ModelName;
      /** the ensemble size this job stands for */
      n: number;
      /** how many models it really builds and trains (< n: the time is extrapolated by n / members) */
      members: number;
      backend: BackendChoice;
      method: NaiveMethod;
    } & Timing)
  | { kind: 'compile'; files: string[]; runs: number }
  /**
   * `netc train FILE ARGS --out TMP` in the worker's process (dist/cli/main.js); with `cli`, as a user runs it,
   * `node bin/netc.js` in a process of its own whose RSS the worker reads from /proc (the worker's tsx and the
   * bench's modules are not in it)
   */
  | { kind: 'train'; file: string; args: string[]; sampleRss?: boolean; cli?: boolean }
  /** the training split of FILE's data and each epoch's example order, as netc train draws them, written to `out` as JSON (a TrainData) */
  | { kind: 'dataset'; file: string; epochs: number; out: string };

/** What a 'train' job gives: the run's summary.json (the trainer's own time: start-up and compile are outside it). */
export interface TrainRunResult {
  /** summary.json train_seconds: the trainer's time from its first step to its last checkpoint */
  seconds: number;
  memberStepsPerSecond: number;
  steps: number;
  members: number;
  backend: string;
  lowering: string;
  /** summary.json's engine, where the trainer says which ran (null: it does not say; the trainer asks for its default, auto) */
  engine: string | null;
  /** wall-clock ms of the whole main() call: compile, data, backend start, training, files */
  wallMs: number;
  baselineRss: number;
  peakRss: number;
  /** with sampleRss: the largest RSS sampled every 50 ms while the trainer trained (from its first line for train_seconds) */
  trainingPeakRss?: number;
}

/** A 'dataset' job's file: what bench/train_loop.py trains on, so that PyTorch sees netc's batches. */
export interface TrainData {
  count: number;
  /** features, [count, 2] row-major */
  x: number[];
  /** the 0/1 labels, [count] */
  y: number[];
  batch: number;
  /** each epoch's order of the examples (netc's epochOrder): the batches are its consecutive runs of `batch` */
  orders: number[][];
}

export interface StepResult extends StepTimes {
  /** seconds to build the models (and compile, for netc) */
  setupMs: number;
  /** RSS after the backend started, before anything was built */
  baselineRss: number;
  /** tf.memory() between steps, in steady state */
  tfBytes: number;
  tfTensors: number;
  /** the members' mean loss after the last step (a sanity check that training ran) */
  lastLoss: number;
  /** tf.profile of one step: kernel name -> [total ms, calls] (netc jobs with profile) */
  profile?: { kernels: Record<string, [number, number]>; totalKernelMs: number; kernelCount: number };
}

export interface CompileResult {
  files: { file: string; members: number; coldMs: number; medianMs: number; runs: number }[];
}

// ---- the batch ------------------------------------------------------------------------------------

/** A deterministic batch for a model: inputs in [0, 1) and targets of the model's loss. */
export function makeBatch(tf: TFJS, model: ModelName): { x: tfjs.Tensor; y: tfjs.Tensor } {
  const { batch } = models[model];
  if (model === 'forum') {
    const { x, y } = forumBatchValues(batch);
    return { x: tf.tensor(x, [batch, 2]), y: tf.tensor(y, [batch, 1]) };
  }
  const next = lcg();
  const x = Float32Array.from({ length: batch * 28 * 28 }, () => next());
  const y = new Float32Array(batch * 10);
  for (let i = 0; i < batch; i++) y[i * 10 + Math.floor(next() * 10)] = 1;
  return { x: tf.tensor(x, [batch, 28, 28, 1]), y: tf.tensor(y, [batch, 10]) };
}

// ---- netc -----------------------------------------------------------------------------------------

/** A population of n members of a model, built as test/equivalence/harness.ts build() does, asking for `engine`. */
export function buildPopulation(tf: TFJS, model: ModelName, lowering: Lowering, n: number, engine: NetcEngine = 'ops'): Population {
  const source = readFileSync(models[model].file, 'utf8');
  const state = compile(source, models[model].file, { lowering, members: n });
  if (!state.ensemble) throw new Error(state.diagnostics.map((d) => d.message).join('\n'));
  const program = state.program!;
  const table = hyperTable(program, state.ir!);
  const ids = Array.from({ length: n }, (_, i) => i);
  return new Population({
    tf: tf as unknown as TF,
    ensemble: { ...state.ensemble, members: n },
    memberIds: ids,
    seed: program.ensemble.seed,
    optimizer: program.train!.optimizer.name,
    loss: program.train!.loss,
    hyper: (key, m) => table.value(key, m),
    initial: (m) => initMember(state.ir!, program.ensemble.seed, m),
    engine,
  });
}

/**
 * The engine a population runs its steps with: its `engine` property (a readonly 'ops' | 'fused' that the
 * fused engine adds to Population), or undefined where Population has none yet (then every step is ops).
 */
export function populationEngine(pop: Population): string | undefined {
  const engine = (pop as unknown as { engine?: unknown }).engine;
  return typeof engine === 'string' ? engine : undefined;
}

/** Why a population built asking for `asked` does not run that engine, or undefined when it does. */
export function engineMismatch(asked: NetcEngine, pop: Population): string | undefined {
  const actual = populationEngine(pop);
  if (actual === asked) return undefined;
  if (actual === undefined) return asked === 'ops' ? undefined : 'this tree\'s Population has no `engine` property: the fused engine is not here (PopulationSpec.engine is not acted on; every step runs ops)';
  return asked === 'fused' ? `the population fell back to engine '${actual}': the fused engine does not cover this model` : `asked for engine '${asked}', the population runs '${actual}'`;
}

// ---- the naive user -------------------------------------------------------------------------------

/** The model as a naive user writes it with tfjs-layers. */
export function naiveModel(tf: TFJS, model: ModelName): tfjs.Sequential {
  const m = tf.sequential();
  if (model === 'forum') {
    m.add(tf.layers.dense({ units: 20, activation: 'sigmoid', inputShape: [2] }));
    m.add(tf.layers.dense({ units: 1, activation: 'sigmoid' }));
    return m;
  }
  m.add(tf.layers.conv2d({ filters: 6, kernelSize: 5, padding: 'same', activation: 'relu', inputShape: [28, 28, 1] }));
  m.add(tf.layers.maxPooling2d({ poolSize: 2 }));
  m.add(tf.layers.conv2d({ filters: 16, kernelSize: 5, activation: 'relu' }));
  m.add(tf.layers.maxPooling2d({ poolSize: 2 }));
  m.add(tf.layers.flatten());
  m.add(tf.layers.dense({ units: 120, activation: 'relu' }));
  m.add(tf.layers.dense({ units: 84, activation: 'relu' }));
  m.add(tf.layers.dense({ units: 10, activation: 'softmax' }));
  return m;
}

/** The optimizer of the model's .net file: forum adam(lr: 0.02), lenet adam(lr: 0.001). */
export const naiveLearningRate: Record<ModelName, number> = { forum: 0.02, lenet: 0.001 };

/**
 * One "step" of the naive loop: one optimizer step of each model in turn on the same batch, each model's
 * loss read back. Returns the step function and the mean of the last losses.
 */
export function naiveLoop(tf: TFJS, model: ModelName, members: number, method: NaiveMethod, x: tfjs.Tensor, y: tfjs.Tensor): { step: () => Promise<void> | void; lastLoss: () => number } {
  const lossName = model === 'forum' ? 'binaryCrossentropy' : 'categoricalCrossentropy';
  let last = NaN;
  if (method === 'trainOnBatch') {
    const nets = Array.from({ length: members }, () => {
      const m = naiveModel(tf, model);
      m.compile({ optimizer: tf.train.adam(naiveLearningRate[model]), loss: lossName });
      return m;
    });
    return {
      step: async () => {
        let sum = 0;
        for (const m of nets) sum += (await m.trainOnBatch(x, y)) as number;
        last = sum / members;
      },
      lastLoss: () => last,
    };
  }
  const lossFn = (p: tfjs.Tensor) => (model === 'forum' ? tf.metrics.binaryCrossentropy(y, p) : tf.metrics.categoricalCrossentropy(y, p));
  const nets = Array.from({ length: members }, () => ({ m: naiveModel(tf, model), opt: tf.train.adam(naiveLearningRate[model]) }));
  return {
    step: () => {
      let sum = 0;
      for (const { m, opt } of nets) {
        const cost = opt.minimize(() => tf.mean(lossFn(m.apply(x) as tfjs.Tensor)) as tfjs.Scalar, true)!;
        sum += cost.dataSync()[0];
        cost.dispose();
      }
      last = sum / members;
    },
    lastLoss: () => last,
  };
}
