// A layer kind's rule for the generated training step (src/step/): the code that computes one member's
// forward pass of the layer and its backward pass, written with src/wasm/'s loops, beside the op path's
// forward rule in the same file. test/step-layers.test.ts binds the two for every kind that has one.
import type { BoundValue } from '../core/arg-spec.js';
import type { Code, Local } from '../wasm/module.js';
import { SUM_BLOCK, type Mat, type ParamMat } from '../wasm/blocks.js';
import { PER_MEMBER_MACS } from '../kernels/matmul.js';

export interface WasmContext {
  code: Code;
  /** the batch size, an i32 local, and the largest it can be (what the step was generated for) */
  batch: Local;
  maxBatch: number;
  attrs: Record<string, BoundValue>;
  /** false in the generated evaluation (forward, loss and metrics only): dropout passes its input through, batchnorm normalises by its running statistics */
  training: boolean;
  /** the values of the layer's inputs, [B, width] each */
  inputs: Mat[];
  /** the shapes of one example of each input, and of the output ([H, W, C] for an image: its Mat holds it row-major) */
  inputShapes: number[][];
  shape: number[];
  /** where its value goes, [B, width] */
  output: Mat;
  /** the member's copy of each parameter, by its short name: a matrix (kernel) or the address of a vector (bias) */
  params: Record<string, ParamMat | Local>;
  /** the member's value of one of the layer's hyperparameters (leaky_relu's alpha), an f32 local */
  hyper(arg: string): Local;
  /** a buffer of this layer's [B, width], the same one in the forward and the backward pass */
  saved(name: string, width: number): Mat;
  /** the member's uniform draws in [0, 1) for this step, [B, width] (a rule with `draws`: dropout), drawn by the host as the op path draws them */
  draws(): Mat;
}

export interface WasmBackwardContext extends WasmContext {
  /** dL/d(output), [B, width]; the rule may overwrite it */
  dOutput: Mat;
  /** where dL/d(input i) goes, or undefined where no gradient is needed (data) */
  dInputs: (Mat | undefined)[];
  /** where dL/d(parameter) goes, by short name: the member's own shape, contiguous ([1, width] for a vector) */
  grads: Record<string, Mat>;
  /**
   * the gradients are to be added on to what `grads` hold, in the rule's own summing order, not written: a
   * shared layer's, whose gradient is the members' sum, member after member (the op path's one product
   * over all members' rows sums them in that order)
   */
  accumulate: boolean;
}

export interface WasmRule {
  /** why this layer, with these attributes, has no generated code (the step then runs on TF.js ops) */
  whyNot?(attrs: Record<string, BoundValue>, inputs: number[][]): string | undefined;
  /** why this kind has no generated code as a `shared` layer, where it has none (the step then runs on TF.js ops) */
  whyNotShared?: string;
  /** the output is the input itself (a reshape): no code, and the gradient passes through */
  alias?: true;
  /** it reads one uniform draw per element of its output, per member and step (WasmContext.draws) */
  draws?: true;
  forward(k: WasmContext): void;
  backward(k: WasmBackwardContext): void;
  /** what its code does, as `netc ir --after fuse` prints it after the layer's shape (a kind with no text of its own gets none) */
  text?(attrs: Record<string, BoundValue>, inputs: number[][], maxBatch: number): string;
}

/** A layer's buffers seen as rows of its input's last axis (see lastAxisRows). */
export interface LastAxisRows {
  /** the rows: the batch, or batch * T for a sequence (an i32 local) */
  rows: Local;
  /** T, the rows of one example (1 for a flat input) */
  steps: number;
  /** a [B, T*W] buffer as its B*T rows of W */
  of(m: Mat): Mat;
  /**
   * a kernel as the op path multiplies the rows by it: its product over B*T rows is a batched one (sums in
   * blocks of 48) only while B*T rows stay below PER_MEMBER_MACS, as src/kernels/matmul.ts decides
   */
  kernel(w: ParamMat): ParamMat;
  /** whether a sum over the rows (a kernel's gradient, xᵀ dy) runs in blocks of 48 */
  blockedRows(w: ParamMat): boolean;
}

/**
 * A layer that acts on the last axis of its input (dense, layernorm) takes a sequence [T, F] as T rows of F
 * per example, as the op path folds the steps into its rows: the [B, T*F] buffers, row-major, are B*T rows
 * of F. A flat input's rows are the batch itself, and its code is what it always was.
 */
export function lastAxisRows(k: WasmContext): LastAxisRows {
  const shape = k.inputShapes[0];
  const steps = shape.length === 2 ? shape[0] : 1;
  const blockedRows = (w: ParamMat) => !!w.blocked && k.maxBatch * steps > SUM_BLOCK;
  if (steps === 1) return { rows: k.batch, steps, of: (m) => m, kernel: (w) => w, blockedRows };
  const rows = k.code.local('i32');
  k.code.get(k.batch).i32(steps).i32Mul().set(rows);
  const kernel = (w: ParamMat): ParamMat => (w.blocked ? { ...w, blocked: k.maxBatch * steps * w.rows * w.width < PER_MEMBER_MACS } : w);
  return { rows, steps, of: (m) => ({ ...m, width: m.width / steps }), kernel, blockedRows: (w) => blockedRows(kernel(w)) };
}
