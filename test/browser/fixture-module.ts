// A page that trains a module `netc compile` wrote, with the module's core alone (createPopulation, step,
// extractMember) and netc/kernels: no netc runtime, no Node. `compiled-module` is aliased to the module's
// file when bundling (test/browser-module.test.ts); the data comes in `input`, as a page would have it.
import * as tf from '@tensorflow/tfjs';
import * as k from 'netc/kernels';
// @ts-expect-error: resolved by the bundler's alias (and by vitest's in Node), to the compiled module under test
import * as compiled from 'compiled-module';

export interface ModuleInput {
  /** the example pool: x [examples, ...input], y [examples, ...label] */
  x: number[];
  xShape: number[];
  y: number[];
  yShape: number[];
  /** each step's batch: indices into the pool */
  batches: number[][];
  /** let the page choose the backend as a compiled module's page would (k.pickBackend) */
  pick?: boolean;
}

export interface ModuleOutput {
  /** the members' losses before each step */
  losses: number[][];
  /** member i's trained weights by parameter name */
  weights: Record<string, number[]>[];
  backend: string;
  /** the generated step the module ran on (k.fusedEngineOf), or undefined: its TF.js code */
  fused?: 'webassembly' | 'wgsl';
}

export async function run(input: ModuleInput): Promise<ModuleOutput> {
  const module = compiled as {
    createPopulation(tf: k.TF): k.ModulePopulation;
    step(pop: k.ModulePopulation, x: k.Tensor, y: k.Tensor): { losses: k.Tensor; metrics: Record<string, k.Tensor> };
    extractMember(pop: k.ModulePopulation, i: number): Record<string, k.Tensor>;
  };
  const T = tf as unknown as k.TF;
  if (input.pick) await k.pickBackend(T);
  const pop = module.createPopulation(T);
  const x = tf.tensor(input.x, input.xShape);
  const y = tf.tensor(input.y, input.yShape);
  const losses: number[][] = [];
  for (const batch of input.batches) {
    const rows = tf.tensor1d(batch, 'int32');
    const [bx, by] = [tf.gather(x, rows), tf.gather(y, rows)];
    const result = module.step(pop, bx as unknown as k.Tensor, by as unknown as k.Tensor);
    losses.push(Array.from(await result.losses.data()));
    tf.dispose([rows, bx, by, result.losses as unknown as tf.Tensor, ...(Object.values(result.metrics) as unknown as tf.Tensor[])]);
  }
  const weights: Record<string, number[]>[] = [];
  for (let i = 0; i < pop.memberIds.length; i++) {
    const values = await k.memberValues(pop, module.extractMember, i);
    weights.push(Object.fromEntries(Object.entries(values).map(([name, v]) => [name, Array.from(v)])));
  }
  const fused = k.fusedEngineOf(pop);
  k.disposePopulation(pop);
  tf.dispose([x, y]);
  return { losses, weights, backend: tf.getBackend(), ...(fused ? { fused } : {}) };
}
