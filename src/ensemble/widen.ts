// The widen pass: model IR -> ensemble IR. It decides, op by op, whether a value is still shared by all
// members, and from that how each parameter is laid out under the chosen lowering. A `shared` layer's
// parameters keep the member's own shape under every lowering (the `shared` layout).
import { layerKind } from '../layers/registry.js';
import type { Lowering } from '../layers/forward.js';
import type { ModelIR } from '../ir/model-ir.js';
import type { ParamLayout } from '../core/layout.js';
import type { EnsembleIR, WideOp, WideParam } from './ensemble-ir.js';

export interface WidenOptions {
  /**
   * every member reads an input of its own (members trained on their own examples, `split:`): the input
   * is not shared, so no layer gets the shared-input fast path, and the first layer runs per member
   */
  perMemberInput?: boolean;
}

export function widen(model: ModelIR, lowering: Lowering, members: number, options: WidenOptions = {}): EnsembleIR {
  const ops: WideOp[] = [];
  const params: WideParam[] = [];
  const paramOf = new Map(model.params.map((p) => [p.name, p]));
  for (const op of model.ops) {
    if (op.op === 'input') {
      ops.push({ ...op, shared: !options.perMemberInput });
      continue;
    }
    const kind = layerKind(op.op)!;
    const inputsShared = op.inputs.map((i) => ops[i].shared);
    const allShared = inputsShared.every((s) => s);
    const own = op.params.map((name) => paramOf.get(name)!);
    // a shared layer on a shared value computes one value for every member, as a layer without parameters does
    const sharedWeights = own.some((p) => p.shared);
    // the loop lowering computes every member separately, so nothing after the input is shared
    const shared = lowering !== 'loop' && allShared && (kind.widen.keepsShared || sharedWeights);
    ops.push({ ...op, shared });
    for (const p of own) {
      const isKernel = kind.widen.kernels?.includes(p.name.slice(op.name.length + 1)) ?? false;
      params.push({ ...p, op: op.name, layout: p.shared ? 'shared' : layoutOf(lowering, isKernel, allShared, (kind.widen.kernels ?? []).length > 0) });
    }
  }
  return { model, lowering, members, ops, params };
}

function layoutOf(lowering: Lowering, isKernel: boolean, inputShared: boolean, opHasKernel: boolean): ParamLayout {
  if (lowering === 'loop') return 'separate';
  // a layer with a kernel whose input is shared keeps its members side by side on the output axis, so
  // that one wide matMul or conv serves them all, with no copy of the input and no transpose of weights
  if (lowering === 'grouped') return opHasKernel && inputShared ? 'columns' : 'stacked';
  return isKernel && !inputShared ? 'blockdiag' : 'columns';
}
