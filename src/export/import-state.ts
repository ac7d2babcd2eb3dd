// A PyTorch state_dict (model.safetensors, as `netc extract --format pytorch` names it) back into netc's
// weights, by the inverse of every layout rule: the plan of the run's model says which name and shape each
// weight has in PyTorch and in which order its features lie.
import type { ModelIR } from '../ir/model-ir.js';
import type { MemberHyperparameters } from '../runtime/hyper.js';
import { exportPlan } from './plan.js';
import type { SafeTensor } from './safetensors.js';

/** A state_dict that is not the run's model's: one line saying what differs. */
export class StateDictError extends Error {
  override name = 'StateDictError';
}

const fmt = (s: readonly number[]) => `[${s.join(', ')}]`;

/** The netc weights (by IR parameter name) of a state_dict of the run's model; throws StateDictError. */
export function netcWeights(ir: ModelIR, hyperparameters: MemberHyperparameters, state: Map<string, SafeTensor>): Map<string, Float32Array> {
  const zeros = new Map(ir.params.map((p) => [p.name, new Float32Array(p.shape.reduce((a, b) => a * b, 1))]));
  const plan = exportPlan(ir, zeros, hyperparameters);
  const expected = plan.nodes.flatMap((n) => n.tensors.map((t) => ({ key: `${n.name}.${t.name}`, shape: t.shape })));
  const missing = expected.filter((e) => !state.has(e.key)).map((e) => e.key);
  if (missing.length) throw new StateDictError(`it has no ${missing.join(', ')}, which the run's model '${ir.name}' needs`);
  const extra = [...state.keys()].filter((k) => !expected.some((e) => e.key === k));
  if (extra.length) throw new StateDictError(`the run's model '${ir.name}' has no ${extra.join(', ')}; its state_dict is ${expected.map((e) => e.key).join(', ')}`);
  for (const e of expected) {
    const got = state.get(e.key)!;
    if (fmt(got.shape) !== fmt(e.shape)) throw new StateDictError(`'${e.key}' has shape ${fmt(got.shape)}; the run's model needs ${fmt(e.shape)}`);
    if (!e.key.endsWith('num_batches_tracked') && !(got.data instanceof Float32Array)) throw new StateDictError(`'${e.key}' is not float32`);
  }
  const out = new Map<string, Float32Array>();
  for (const op of ir.ops.slice(1)) {
    const n = plan.nodes[op.id];
    const t = (name: string) => state.get(`${n.name}.${name}`)!.data as Float32Array;
    (n.params?.(t, plan.nodes[n.inputs[0]]) ?? []).forEach((v, i) => out.set(op.params[i], v));
  }
  return out;
}
