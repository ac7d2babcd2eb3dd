// The model IR: one member's network as a small graph. Op 0 is the input; every other op is a layer
// whose inputs are earlier op ids. Parameters carry Keras-style names (`dense_1/kernel`).
import type { BoundValue, Shape } from '../core/arg-spec.js';
import type { Initializer } from '../vocabulary/initializers.js';

export interface IrParam {
  name: string;
  shape: Shape;
  init: Initializer;
  trainable: boolean;
  /** a `shared` layer's parameter: one tensor for every member, without a member axis */
  shared?: true;
}

export interface IrOp {
  id: number;
  /** the layer kind, or 'input' */
  op: string;
  /** Keras-style layer name: `<kind>_<n>`, numbered per kind from 1 */
  name: string;
  label?: string;
  inputs: number[];
  attrs: Record<string, BoundValue>;
  shape: Shape;
  /** names of this op's parameters, in the kind's order */
  params: string[];
}

export interface ModelIR {
  name: string;
  ops: IrOp[];
  params: IrParam[];
  output: number;
}

export const parameterCount = (ir: ModelIR): number => ir.params.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
/** parameters of `shared` layers: one copy serves every member */
export const sharedCount = (ir: ModelIR): number => ir.params.filter((p) => p.shared).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
export const trainableCount = (ir: ModelIR): number =>
  ir.params.filter((p) => p.trainable).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
