// The equivalence harness (JAX's vmap-test habit): a fused population against each member computed
// alone by plain TF.js — a tfjs-layers model with the member's weights, fed the same batches.
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { expect } from 'vitest';
import { compile } from '../../src/pipeline.js';
import type { Lowering } from '../../src/layers/forward.js';
import { Population, type Engine } from '../../src/runtime/population.js';
import type { CompileState } from '../../src/pipeline.js';
import { initMember } from '../../src/kernels/init.js';
import { hyperTable, memberHyperparameters, type HyperTable } from '../../src/runtime/hyper.js';
import { setWeights, toLayersModel } from '../../src/serve/layers-model.js';
import type { TF } from '../../src/kernels/tf.js';
import { Rng } from '../../src/util/rng.js';
import { registerWasmKernels } from '../../src/kernels/wasm-kernels.js';
import type { ModelIR } from '../../src/ir/model-ir.js';
import { layerKind } from '../../src/layers/registry.js';
import type { Program } from '../../src/check/program.js';
import { hasRule } from '../../src/layers/layer-kind.js';

export { tf };

/**
 * A population of a compiled file on the current backend, trained by `engine`: every member of the file
 * (or `memberIds`), its hyperparameter table, its initial weights.
 */
/** `hyper`: a hyperparameter's value in place of the file's (key, member id, the file's value); PBT's changes, say. */
export function populationOf(state: CompileState, engine: Engine, options: { memberIds?: number[]; lrFactor?: (member: number, step: number) => number; hyper?: (key: string, member: number, value: number) => number } = {}): Population {
  if (!state.ensemble) throw new Error(state.diagnostics.map((d) => d.message).join('\n'));
  const program = state.program!;
  const table = hyperTable(program, state.ir!);
  return new Population({
    tf: tf as unknown as TF,
    ensemble: state.ensemble,
    memberIds: options.memberIds ?? Array.from({ length: state.ensemble.members }, (_, i) => i),
    seed: program.ensemble.seed,
    optimizer: program.train!.optimizer.name,
    loss: program.train!.loss,
    hyper: options.hyper ? (k, m) => options.hyper!(k, m, table.value(k, m)) : (k, m) => table.value(k, m),
    base: (k) => table.base(k),
    initial: (m) => initMember(state.ir!, program.ensemble.seed, m),
    ...(options.lrFactor ? { lrFactor: options.lrFactor } : {}),
    engine,
  });
}

export const backends = ['cpu', 'wasm'] as const;
export const TOLERANCE = 1e-5;

export async function useBackend(name: string): Promise<void> {
  await tf.setBackend(name);
  await tf.ready();
  if (name === 'wasm') registerWasmKernels(tf as unknown as TF);
}

export interface Built {
  pop: Population;
  program: Program;
  ir: ModelIR;
  /** each member's hyperparameters, as the population has them */
  hyper: HyperTable;
}

export interface BuildOptions {
  memberIds?: number[];
  optimizer?: { name: string; args: Record<string, number | boolean> };
  loss?: string;
}

/** A population of `members` for a .net source under a lowering; ids default to 0..members-1. */
export function build(source: string, lowering: Lowering, members: number, options: BuildOptions = {}): Built {
  const state = compile(source, 'equivalence.net', { lowering, members });
  if (!state.ensemble) throw new Error(state.diagnostics.map((d) => d.message).join('\n'));
  const program = state.program!;
  if (options.optimizer || options.loss) {
    program.train = {
      ...(program.train ?? { data: { name: 'xor', args: {} }, validation: 0, test: 0, batch: 4, steps: 1, metrics: [], shuffle: false }),
      optimizer: options.optimizer ?? program.train?.optimizer ?? { name: 'sgd', args: {} },
      loss: { name: options.loss ?? program.train?.loss.name ?? 'mse', args: {} },
    };
  }
  const memberIds = options.memberIds;
  const table = hyperTable(program, state.ir!);
  const ids = memberIds ?? Array.from({ length: members }, (_, i) => i);
  const pop = new Population({
    tf: tf as unknown as TF,
    ensemble: { ...state.ensemble, members: ids.length },
    memberIds: ids,
    seed: program.ensemble.seed,
    optimizer: program.train?.optimizer.name ?? 'sgd',
    loss: program.train?.loss ?? { name: 'mse', args: {} },
    hyper: (key, m) => table.value(key, m),
    base: (key) => table.base(key),
    initial: (m) => initMember(state.ir!, program.ensemble.seed, m),
  });
  return { pop, program, ir: state.ir!, hyper: table };
}

/** Member `id` alone, as a tfjs-layers model with its own hyperparameters and initial weights. */
export function alone(b: Built, id: number): tf.LayersModel {
  const model = toLayersModel(tf as unknown as TF, b.ir, memberHyperparameters(b.hyper, id));
  setWeights(tf as unknown as TF, model, b.ir, initMember(b.ir, b.program.ensemble.seed, id));
  return model;
}

/** Whether every layer of the model has a tfjs-layers reference (attention's is PyTorch, through the export). */
export function hasLayersReference(b: Built): boolean {
  return b.ir.ops.slice(1).every((op) => hasRule(layerKind(op.op)!.reference));
}

/**
 * Member `id` of `source` as a population of its own under the loop lowering (the kinds' `single` rules), with
 * its own hyperparameters and initial weights: the reference of a model without a tfjs-layers one.
 */
export function aloneFused(source: string, id: number, members: number, options: BuildOptions = {}): Built {
  return build(source, 'loop', members, { ...options, memberIds: [id] });
}

/** Reproducible inputs and targets. */
export function randomBatch(seed: number, shape: number[], scale = 1): tf.Tensor {
  const rng = Rng.of(seed, 'test-batch');
  const size = shape.reduce((a, b) => a * b, 1);
  return tf.tensor(Float32Array.from({ length: size }, () => rng.range(-scale, scale)), shape);
}

/** The number of token ids a model's input holds (the least of its readers' kinds' tokenIds: embedding's vocab), or undefined where it holds features. */
export function inputTokens(ir: ModelIR): number | undefined {
  const ns = ir.ops.filter((op) => op.inputs.includes(0)).flatMap((op) => layerKind(op.op)?.tokenIds?.(op.attrs) ?? []);
  return ns.length ? Math.min(...ns) : undefined;
}

/** randomBatch for a model's input: where it holds token ids, reproducible integers in [0, n) instead. */
export function inputBatch(ir: ModelIR, seed: number, shape: number[], scale = 1): tf.Tensor {
  const n = inputTokens(ir);
  if (n === undefined) return randomBatch(seed, shape, scale);
  const rng = Rng.of(seed, 'test-batch');
  const size = shape.reduce((a, b) => a * b, 1);
  return tf.tensor(Float32Array.from({ length: size }, () => Math.min(n - 1, Math.floor(rng.range(0, n)))), shape);
}

export function maxRelDiff(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; i++) {
    diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  // a tensor that is all but zero (the bias before a batchnorm, whose gradient vanishes) is compared
  // on the scale of 1e-2, so float noise around zero does not count as a relative difference
  return diff / Math.max(scale, 1e-2);
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string, tolerance = TOLERANCE): void {
  expect(actual.length, what).toBe(expected.length);
  const d = maxRelDiff(actual, expected);
  expect(d, `${what}: max relative difference ${d.toExponential(2)}`).toBeLessThanOrEqual(tolerance);
}

/** Member m's slice of member-first outputs [N, B, ...]. */
export function memberRows(out: tf.Tensor, m: number): Float32Array {
  return tf.tidy(() => tf.squeeze(tf.slice(out, m, 1), [0]).dataSync() as Float32Array);
}
