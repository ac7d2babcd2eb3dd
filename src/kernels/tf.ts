// TF.js types only: the compiler phases take the library as a value (`ctx.tf`), so importing a layer
// kind never loads TF.js, and `netc check` stays fast.
import type * as tfjs from '@tensorflow/tfjs';

export type TF = typeof tfjs;
export type Tensor = tfjs.Tensor;
export type Variable = tfjs.Variable;
export type Rank = tfjs.Rank;
export type Tensor4D = tfjs.Tensor4D;
