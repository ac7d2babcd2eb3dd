// The ensemble IR: the model IR widened to N members under one lowering. Ops keep their per-member
// shapes and say whether their output is still shared by all members; parameters say how the members'
// copies are laid out in the fused tensors, which is also the inverse map that slices a member back out.
import type { ParamLayout } from '../core/layout.js';
import type { Lowering } from '../layers/forward.js';
import type { IrOp, IrParam, ModelIR } from '../ir/model-ir.js';

export interface WideParam extends IrParam {
  /** the op (layer) that owns it */
  op: string;
  layout: ParamLayout;
}

export interface WideOp extends IrOp {
  /** true while the value is the same for every member: computed once, not N times */
  shared: boolean;
}

/** Whether a population of this ensemble has parameters without a member axis (`shared` layers). */
export const hasSharedParams = (e: Pick<EnsembleIR, 'params'>): boolean => e.params.some((p) => p.layout === 'shared');

export interface EnsembleIR {
  model: ModelIR;
  lowering: Lowering;
  members: number;
  ops: WideOp[];
  params: WideParam[];
}
