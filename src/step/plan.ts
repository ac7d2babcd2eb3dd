// Whether a population's training step can run as one generated WebAssembly call, and if not, why: the
// one line `netc train` prints before it trains on TF.js ops instead.
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { TrainConfig } from '../check/program.js';
import { layerKind } from '../layers/registry.js';
import { hasRule } from '../layers/layer-kind.js';
import { describedLosses } from '../math/losses.js';
import { describedOptimizers } from '../math/optimizers.js';
import { computedMetrics, extraMetrics } from '../vocabulary/losses.js';

/** What the generated step is built for: the ensemble (shapes are constants, N is read at run time) and the train block's choices. */
export interface StepConfig {
  ensemble: EnsembleIR;
  loss: { name: string; args: Record<string, unknown> };
  optimizer: string;
  metrics: readonly string[];
  /** the largest batch the step is called with (scratch space is sized for it) */
  maxBatch: number;
  /** whether any member clips its gradients (clipnorm): the step then computes each gradient's norm */
  clipping: boolean;
  /** false: the function evaluates (forward in inference mode, the loss and the metrics) and trains nothing */
  training?: boolean;
  /**
   * true: the threaded variant (runtime/threads.ts): the module imports a shared memory, and step, nonfinite
   * and steps take the member range [first, end) to train after their own arguments, so that each thread
   * runs its own members; every member's arithmetic is the same as in the plain module
   */
  ranged?: boolean;
}

/** The step's configuration as a run fixes it, before a variant's batch size, and whether it clips, are chosen. */
export type RunStepConfig = Omit<StepConfig, 'maxBatch' | 'clipping'>;

/** The step's configuration for an ensemble and its file's train block: the one place it is made from the file. */
export function stepConfig(ensemble: EnsembleIR, train: Pick<TrainConfig, 'optimizer' | 'loss' | 'metrics'>): RunStepConfig {
  // the metrics the step computes besides the loss
  return { ensemble, optimizer: train.optimizer.name, loss: train.loss, metrics: computedMetrics(train.metrics) };
}

/**
 * Why neither generated step (WebAssembly, WGSL) computes the train block's optimizer, loss or metrics, or
 * undefined where both do: each target renders every rule of src/math/ and every metric besides the loss.
 */
export function whyNotVocabulary(cfg: Pick<RunStepConfig, 'optimizer' | 'loss' | 'metrics'>): string | undefined {
  if (!describedOptimizers.includes(cfg.optimizer)) return `the ${cfg.optimizer} optimizer`;
  if (!describedLosses.includes(cfg.loss.name)) return `the ${cfg.loss.name} loss`;
  const metric = cfg.metrics.find((m) => !(extraMetrics as readonly string[]).includes(m));
  return metric ? `the ${metric} metric` : undefined;
}

/** Why this configuration's step cannot be generated, or undefined where it can. */
export function whyNotFused(cfg: RunStepConfig): string | undefined {
  const e = cfg.ensemble;
  if (e.lowering !== 'grouped') return `the ${e.lowering} lowering (the generated step is built for grouped)`;
  const vocabulary = whyNotVocabulary(cfg);
  if (vocabulary) return vocabulary;
  const kindOf = new Map(e.ops.map((op) => [op.name, op.op]));
  const layoutOf = new Map(e.params.map((p) => [p.name, p.layout]));
  for (const p of e.params) {
    if (p.layout === 'shared' && kindOf.get(p.op) === 'batchnorm') return `the shared batchnorm ${p.op} (its running statistics move by the members' mean)`;
    if (p.layout !== 'stacked' && p.layout !== 'columns' && p.layout !== 'shared') return `the ${p.layout} layout of ${p.name}`;
  }
  const consumers = new Map<number, number>();
  for (const op of e.ops) for (const i of op.inputs) consumers.set(i, (consumers.get(i) ?? 0) + 1);
  for (const op of e.ops.slice(1)) {
    const kind = layerKind(op.op)!;
    if (!hasRule(kind.wasm)) return `${kind.wasm.unsupported} (${op.name})`;
    const why = kind.wasm.whyNot?.(op.attrs, op.inputs.map((i) => e.ops[i].shape));
    if (why) return `${why} (${op.name})`;
    if (kind.wasm.whyNotShared && op.params.some((name) => layoutOf.get(name) === 'shared')) return `${kind.wasm.whyNotShared} (${op.name})`;
    if (kind.wasm.alias && (consumers.get(op.inputs[0]) ?? 0) > 1) return `${op.name}'s input, read twice`;
  }
  const out = e.ops[e.model.output];
  if (out.shape.length !== 1) return `an output of shape [${out.shape.join(', ')}]`;
  return undefined;
}
