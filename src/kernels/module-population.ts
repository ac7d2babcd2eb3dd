// The population as a compiled module's step sees it: fused TF.js variables by name and the few numbers
// the step reads. netc's runtime Population hands its own variables over in this form (so `netc train`
// can run a compiled module's step), and a compiled module's createPopulation() builds one on its own.
import type { TF, Tensor, Variable } from './tf.js';
import { Rng } from '../util/rng.js';
import { initMember } from './init.js';
import { blockMask, fuse } from './fused.js';
import { optimizerSlots } from '../vocabulary/optimizers.js';
import { registerWasmKernels } from './wasm-kernels.js';
import { fusedShape, type ParamLayout } from '../core/layout.js';
import type { Initializer } from '../vocabulary/initializers.js';
import { kernel } from './kernel.js';

export interface ModulePopulation {
  tf: TF;
  /** the members' ids, in population order: they name each member's random streams */
  memberIds: number[];
  seed: number;
  /** optimizer steps taken */
  step: number;
  /** the fused parameters by name (`dense_1/kernel`); under the loop lowering one per member, `dense_1/kernel#2` */
  params: Record<string, Variable>;
  /** the 0/1 masks that keep block-diagonal kernels block-diagonal, by parameter name */
  masks: Record<string, Tensor>;
  /** the optimizer's slots by `parameter:slot` (`dense_1/kernel:m`) */
  slots: Record<string, Variable>;
  /** Adam's beta1^t and beta2^t per member, and a shared layer's (the file's betas) */
  state: { accBeta1: number[]; accBeta2: number[]; sharedAccBeta1: number; sharedAccBeta2: number };
  /** the members' values of a hyperparameter (`lr`, `dropout_1.rate`), in population order; lr as the next step applies it */
  hyper(key: string): number[];
}

/** What forward() needs beyond the parameters: the mode, random draws, and where running statistics go. */
export interface StepInputs {
  training: boolean;
  /** batchnorm's new running statistics, by parameter name, applied after the optimizer step */
  updates: [string, Tensor][];
}

/** The inputs of one forward pass. */
export function stepInputs(training: boolean): StepInputs {
  return { training, updates: [] };
}

/**
 * Dropout's uniform [0, 1) draws for op `op` at the population's step, member-first [N, ...shape] (or
 * the members at `positions` only): member id's from the stream (seed, 'dropout', op, id, step), so a
 * member draws the same numbers in a population of any size.
 */
function memberDrawsKernel(tf: TF, pop: Pick<ModulePopulation, 'seed' | 'memberIds' | 'step'>, op: string, shape: number[], positions?: number[]): Tensor {
  const ids = positions ? positions.map((m) => pop.memberIds[m]) : pop.memberIds;
  const size = shape.reduce((a, b) => a * b, 1);
  const all = new Float32Array(ids.length * size);
  ids.forEach((id, i) => {
    const rng = Rng.of(pop.seed, 'dropout', op, id, pop.step);
    for (let j = 0; j < size; j++) all[i * size + j] = rng.uniform();
  });
  return tf.tensor(all, [ids.length, ...shape]);
}

export const memberDraws = kernel('memberDraws', memberDrawsKernel);

/**
 * Puts batchnorm's new running statistics in place, by parameter name. A shared layer's variable may get
 * one update per member (the loop lowering runs it member by member): it takes their mean, as the
 * widened rules do.
 */
export function applyUpdates(pop: Pick<ModulePopulation, 'tf' | 'params'>, updates: [string, Tensor][]): void {
  const { tf } = pop;
  const byName = new Map<string, Tensor[]>();
  for (const [name, t] of updates) byName.set(name, [...(byName.get(name) ?? []), t]);
  for (const [name, ts] of byName) pop.params[name].assign(ts.length === 1 ? ts[0] : tf.mean(tf.stack(ts), 0));
}

/** One parameter of one member, and how the members' copies are fused (a compiled module lists them). */
export interface ModuleParam {
  name: string;
  /** one member's shape */
  shape: number[];
  layout: ParamLayout;
  init: Initializer;
  trainable: boolean;
}

export interface ModulePopulationSpec {
  params: ModuleParam[];
  memberIds: number[];
  seed: number;
  /** the optimizer's name: which slots each trainable parameter gets (adam: m and v) */
  optimizer: string;
  /** member id's value of a hyperparameter */
  hyper(key: string, member: number): number;
}

let created = 0;

/**
 * A population of fresh members: each member's initial weights drawn as netc train draws them (stream
 * (seed, 'init', id)), fused by each parameter's layout into TF.js variables, and zeroed optimizer slots.
 * Dispose it with disposePopulation().
 */
export function createPopulation(tf: TF, spec: ModulePopulationSpec): ModulePopulation {
  if (tf.getBackend() === 'wasm') registerWasmKernels(tf);
  const uid = created++;
  const n = spec.memberIds.length;
  const model = { params: spec.params.map((p) => ({ ...p, ...(p.layout === 'shared' ? { shared: true as const } : {}) })) };
  const initial = spec.memberIds.map((id) => initMember(model, spec.seed, id));
  const params: Record<string, Variable> = {};
  const masks: Record<string, Tensor> = {};
  const slots: Record<string, Variable> = {};
  const variable = (key: string, values: Float32Array, shape: number[], trainable: boolean) =>
    tf.tidy(() => tf.variable(tf.tensor(values, shape), trainable, `netc-module${uid}/${key}`));
  for (const p of spec.params) {
    const own = initial.map((m) => m.get(p.name)!);
    const keys = p.layout === 'separate' ? spec.memberIds.map((_, m) => `${p.name}#${m}`) : [p.name];
    keys.forEach((key, m) => {
      if (p.layout === 'separate') params[key] = variable(key, own[m], p.shape, p.trainable);
      else if (p.layout === 'shared') params[key] = variable(key, own[0], p.shape, p.trainable);
      else params[key] = variable(key, fuse(p.layout, p.shape, own), fusedShape(p.layout, p.shape, n), p.trainable);
      if (!p.trainable) return;
      for (const slot of optimizerSlots[spec.optimizer]) slots[`${key}:${slot}`] = tf.variable(tf.zerosLike(params[key]), false, `netc-module${uid}/${key}:${slot}`);
    });
    if (p.layout === 'blockdiag') masks[p.name] = tf.tensor(blockMask(p.shape, n), fusedShape(p.layout, p.shape, n));
  }
  return {
    tf,
    memberIds: spec.memberIds,
    seed: spec.seed,
    step: 0,
    params,
    masks,
    slots,
    state: { accBeta1: new Array(n).fill(1), accBeta2: new Array(n).fill(1), sharedAccBeta1: 1, sharedAccBeta2: 1 },
    hyper: (key) => spec.memberIds.map((id) => spec.hyper(key, id)),
  };
}

/** Frees a population's tensors. */
export function disposePopulation(pop: ModulePopulation): void {
  pop.tf.dispose([...Object.values(pop.params), ...Object.values(pop.masks), ...Object.values(pop.slots)]);
}

/** Member i's parameter values as plain arrays, by name (for comparing and saving). */
export async function memberValues(pop: ModulePopulation, extract: (pop: ModulePopulation, i: number) => Record<string, Tensor>, i: number): Promise<Record<string, Float32Array>> {
  const tensors = extract(pop, i);
  const out: Record<string, Float32Array> = {};
  for (const [name, t] of Object.entries(tensors)) out[name] = (await t.data()) as Float32Array;
  pop.tf.dispose(Object.values(tensors));
  return out;
}

/**
 * In a browser: WebGPU where `navigator.gpu` gives an adapter (and the page imported
 * @tensorflow/tfjs-backend-webgpu), else wasm (where @tensorflow/tfjs-backend-wasm is imported), else
 * cpu. Sets it as TF.js's backend and returns its name.
 */
export async function pickBackend(tf: TF): Promise<string> {
  const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(): Promise<unknown> } } }).navigator?.gpu;
  const webgpu = !!gpu && !!tf.findBackendFactory('webgpu') && !!(await gpu.requestAdapter().catch(() => null));
  for (const name of [...(webgpu ? ['webgpu'] : []), 'wasm', 'cpu']) {
    if (tf.findBackendFactory(name) && (await tf.setBackend(name))) return name;
  }
  throw new Error('no TF.js backend could be set (cpu, wasm or webgpu)');
}
