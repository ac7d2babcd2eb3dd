// The inverse of widening: for each member, where each of its parameters lives in the fused tensors.
// `tf.slice(fused[tensor], begin, size)` reshaped to `shape` is member i's own parameter, named as
// tfjs-layers/Keras name it (`dense_1/kernel`). Blockdiag kernels also name the mask that keeps them
// block-diagonal (member i's block is all ones in it).
//
// Those are the fused tensors as a population holds them in memory. The checkpoint on disk
// (population.json + population-STEP.bin) stores the same parameters lowering-free, member after member;
// the map's `checkpoint` part says how to find a member there.
import { fusedShape, memberAxes, memberSlice, type EnsembleIR, type ParamLayout } from './ensemble-ir.js';

export interface MemberParamSlice {
  /** the fused tensor: the parameter's own name, or `name#i` for the loop lowering's separate tensors */
  tensor: string;
  begin: number[];
  size: number[];
  /** the member's own shape (size without the member axis) */
  shape: number[];
  /** blockdiag kernels: the mask's name (`name:mask`) */
  mask?: string;
}

export interface SlicingMap {
  format: 'netc-slicing-map-1';
  model: string;
  lowering: string;
  members: number;
  /** what `tensors` and `slices` index: the fused tensors in memory, never population-STEP.bin */
  indexes: 'fused-tensors';
  /** how the checkpoint holds each member's parameters */
  checkpoint: CheckpointLayout;
  /** the fused tensors: name, shape, layout, and which axes carry the members */
  tensors: { name: string; shape: number[]; layout: ParamLayout; member_axes: number[]; trainable: boolean }[];
  /** per member, per parameter name */
  slices: Record<string, MemberParamSlice>[];
}

/**
 * population-STEP.bin, as population.json's `tensors` list describes it: float32, each parameter as
 * [M, ...shape] starting at `offset` (in floats), member after member, where M and the member order are
 * population.json's `member_ids` (halving and early stopping compact the population, so a member's
 * position is member_ids.indexOf(id), not its id). A stopped member's parameters are the tensors named
 * `name@id`, of its own shape; optimizer slots are `name:slot`, laid out as their parameter.
 */
export interface CheckpointLayout {
  layout: 'member-major';
  rule: string;
  params: { name: string; shape: number[]; size: number }[];
}

export function checkpointLayout(e: Pick<EnsembleIR, 'params'>): CheckpointLayout {
  return {
    layout: 'member-major',
    rule: "in population.json's tensors, parameter NAME of member ID is at offset + p * size floats of population-STEP.bin, p = member_ids.indexOf(ID); a stopped member's is the tensor NAME@ID",
    params: e.params.map((p) => ({ name: p.name, shape: p.shape, size: p.shape.reduce((a, b) => a * b, 1) })),
  };
}

export function slicingMap(e: EnsembleIR): SlicingMap {
  const n = e.members;
  const tensors: SlicingMap['tensors'] = [];
  for (const p of e.params) {
    const entry = { shape: fusedShape(p.layout, p.shape, n), layout: p.layout, member_axes: memberAxes(p.layout, p.shape), trainable: p.trainable };
    if (p.layout === 'separate') for (let i = 0; i < n; i++) tensors.push({ name: `${p.name}#${i}`, ...entry });
    else tensors.push({ name: p.name, ...entry });
  }
  const slices = Array.from({ length: n }, (_, i) =>
    Object.fromEntries(
      e.params.map((p) => {
        const { begin, size } = memberSlice(p.layout, p.shape, i);
        const slice: MemberParamSlice = { tensor: p.layout === 'separate' ? `${p.name}#${i}` : p.name, begin, size, shape: p.shape };
        if (p.layout === 'blockdiag') slice.mask = `${p.name}:mask`;
        return [p.name, slice];
      }),
    ),
  );
  return { format: 'netc-slicing-map-1', model: e.model.name, lowering: e.lowering, members: n, indexes: 'fused-tensors', checkpoint: checkpointLayout(e), tensors, slices };
}
