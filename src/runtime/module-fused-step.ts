// k.fusedStep: a compiled module's step() on the generated step where it covers the model: one WebAssembly
// call on wasm, one compute pass of WGSL kernels on webgpu (a browser's too); elsewhere it answers undefined
// and the module runs its TF.js code.
import type { ModulePopulation } from '../kernels/module-population.js';
import type { Tensor, Variable } from '../kernels/tf.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { optimizerSlots } from '../vocabulary/optimizers.js';
import { planStep, FusedStep, type Engine, type FusedHost } from './fused-step.js';
import { StepCode } from '../step/step-code.js';
import { GpuFusedStep } from './gpu-fused-step.js';

/** What a module tells the fused step about itself: its ensemble IR and the train block's loss and optimizer. */
export interface ModuleStepSpec {
  ensemble: EnsembleIR;
  loss: { name: string; args: Record<string, unknown> };
  optimizer: string;
  /** `ops` keeps the module's TF.js step (default: NETC_ENGINE, else `auto`) */
  engine?: Engine;
  /** the file's hyperparameters (the module's baseHyperparameters): what shared layers step with */
  base?: Record<string, number>;
}

const steps = new WeakMap<ModulePopulation, FusedStep | GpuFusedStep | null>();

/**
 * One training step of every member as one generated WebAssembly call: the members' losses [N] and each
 * metric [N], as the module's own step() returns them; undefined where the fused step does not run
 * (another backend, a model it does not cover), and the module's step() goes on with its TF.js code.
 */
export function fusedStep(pop: ModulePopulation, x: Tensor, y: Tensor, metrics: readonly string[], spec: ModuleStepSpec): { losses: Tensor; metrics: Record<string, Tensor> } | undefined {
  let step = steps.get(pop);
  if (step === undefined) {
    step = fusedFor(pop, spec);
    steps.set(pop, step);
  }
  if (!step) return undefined;
  // the WGSL step needs its scratch in one storage binding: else the module's TF.js step
  if (step instanceof GpuFusedStep && !step.runs(x.shape[0] as number, metrics)) return undefined;
  const result = step.run(x, y, metrics);
  pop.step++;
  return result;
}

/** Which generated step a module's population has run its steps on: `webassembly`, `wgsl`, or none (its TF.js code). */
export function fusedEngineOf(pop: ModulePopulation): 'webassembly' | 'wgsl' | undefined {
  const step = steps.get(pop);
  return step instanceof GpuFusedStep ? 'wgsl' : step ? 'webassembly' : undefined;
}

function fusedFor(pop: ModulePopulation, spec: ModuleStepSpec): FusedStep | GpuFusedStep | null {
  const ensemble = { ...spec.ensemble, members: pop.memberIds.length };
  const plan = planStep(pop.tf, spec.engine, new StepCode({ ensemble, optimizer: spec.optimizer, loss: spec.loss, metrics: [] }));
  if (plan.engine !== 'fused') return null;
  // a shared layer steps with the file's hyperparameters: without them, the module's readable TF.js step
  if (!spec.base && ensemble.params.some((p) => p.layout === 'shared')) return null;
  const variables = new Map<string, Variable[]>(ensemble.params.map((p) => [p.name, [pop.params[p.name]]]));
  const host: FusedHost = {
    tf: pop.tf,
    ir: ensemble,
    n: pop.memberIds.length,
    optimizer: spec.optimizer,
    variables,
    slots: (param) => new Map(optimizerSlots[spec.optimizer].map((name) => [name, pop.slots[`${param}:${name}`]])),
    state: pop.state,
    // a module's hyperparameters may move between any two steps (an lr_schedule, a PBT exploit): read them each step
    hyper: (key) => pop.hyper(key),
    base: (key) => spec.base?.[key] ?? pop.hyper(key)[0],
    scheduled: true,
    volatile: true,
    seed: pop.seed,
    memberIds: pop.memberIds,
    step: () => pop.step,
    code: plan.code,
  };
  return plan.target === 'wgsl' ? new GpuFusedStep(host) : new FusedStep(host);
}
