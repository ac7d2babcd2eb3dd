// The inverse of widening, as a rule per parameter rather than a list per member, so that its size does
// not grow with the member count: member i's parameter is `tf.slice(fused, begin + i * step, size)`
// reshaped to `shape`, named as tfjs-layers/Keras name it (`dense_1/kernel`). Blockdiag kernels also name
// the mask that keeps them block-diagonal (member i's block is all ones in it).
//
// A `shared` layer's parameter is one tensor that every member reads (layout `shared`: step 0, no member
// axes). Those are the fused tensors as a population holds them in memory. The checkpoint on disk
// (population.json + population-STEP.bin) stores the same parameters lowering-free, member after member;
// `checkpoint_rule` says how to find a member there.
import { fusedShape, memberAxes, memberSlice, type ParamLayout } from '../core/layout.js';
import type { EnsembleIR } from './ensemble-ir.js';

export interface ParamSlicing {
  /** the parameter, as the member's own model names it */
  name: string;
  /** the member's own shape */
  shape: number[];
  /** floats in one member's copy */
  size: number;
  layout: ParamLayout;
  trainable: boolean;
  /** the fused tensor: the parameter's name, or under `separate` (the loop lowering) `name#i` for member i */
  tensor: string;
  fused_shape: number[];
  /** the axes of the fused tensor that carry the members */
  member_axes: number[];
  /** member i: tf.slice(fused, begin + i * step, slice_size) */
  begin: number[];
  step: number[];
  slice_size: number[];
  /** blockdiag kernels: the mask's name (`name:mask`) */
  mask?: string;
}

export interface SlicingMap {
  format: 'netc-slicing-map-2';
  model: string;
  lowering: string;
  members: number;
  /** how member i's parameter sits in the fused tensors a population holds in memory */
  fused_rule: string;
  /** how member ID's parameter sits in the checkpoint (population.json + population-STEP.bin) */
  checkpoint_rule: string;
  params: ParamSlicing[];
}

/** Member i's slice of one parameter, by the map's rule. */
export interface MemberParamSlice {
  tensor: string;
  begin: number[];
  size: number[];
  shape: number[];
  mask?: string;
}

const FUSED_RULE =
  "parameter NAME of member i (its position, 0..members-1) is tf.slice(T, begin + i * step, slice_size) reshaped to shape, where T is the fused tensor `tensor` (under the separate layout, the tensor named `tensor#i`, sliced from 0; under the shared layout, a shared layer's, step is 0 and member_axes empty: every member reads all of `tensor`)";
const CHECKPOINT_RULE =
  "population.json's tensors list parameter NAME as [M, ...shape] at `offset` floats into population-STEP.bin, member after member in the order of member_ids (halving and early stopping compact the population): member ID's copy is the `size` floats from offset + p * size, p = member_ids.indexOf(ID); a shared layer's parameter (layout shared; its tensor says shared: true) has no member axis: it is [...shape], one copy that every member reads, at `offset`; a stopped member's is the tensor NAME@ID, of its own shape (a shared parameter as it was when the member stopped); optimizer slots are NAME:SLOT, laid out as their parameter";

export function slicingMap(e: EnsembleIR): SlicingMap {
  const params = e.params.map((p): ParamSlicing => {
    const first = memberSlice(p.layout, p.shape, 0);
    const second = memberSlice(p.layout, p.shape, 1);
    return {
      name: p.name,
      shape: p.shape,
      size: p.shape.reduce((a, b) => a * b, 1),
      layout: p.layout,
      trainable: p.trainable,
      tensor: p.name,
      fused_shape: fusedShape(p.layout, p.shape, e.members),
      member_axes: memberAxes(p.layout, p.shape),
      begin: first.begin,
      step: second.begin.map((b, a) => b - first.begin[a]),
      slice_size: first.size,
      ...(p.layout === 'blockdiag' ? { mask: `${p.name}:mask` } : {}),
    };
  });
  return { format: 'netc-slicing-map-2', model: e.model.name, lowering: e.lowering, members: e.members, fused_rule: FUSED_RULE, checkpoint_rule: CHECKPOINT_RULE, params };
}

/** Where member i's copy of a parameter sits, by the map's rule. */
export function memberParamSlice(p: ParamSlicing, i: number): MemberParamSlice {
  const separate = p.layout === 'separate';
  return {
    tensor: separate ? `${p.tensor}#${i}` : p.tensor,
    begin: separate ? p.begin : p.begin.map((b, a) => b + i * p.step[a]),
    size: p.slice_size,
    shape: p.shape,
    ...(p.mask ? { mask: p.mask } : {}),
  };
}
