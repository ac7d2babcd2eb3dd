// netc's own optimizers, fused over the member axis. Every hyperparameter is a per-member tensor shaped
// to broadcast against the parameter it updates; the update rules follow tf.train (sgd/momentum, adam,
// rmsprop) so that a member matches a model trained alone with TF.js, and Keras for the decoupled weight
// decay of adamw and sgd, and for clipnorm (each parameter tensor's gradient clipped to that norm).
import type { TF, Tensor, Variable } from './tf.js';
import { concatFlat, splitFlat } from './matmul.js';
import { kernel } from './kernel.js';
import { optimizerSlots } from '../vocabulary/optimizers.js';

/** One fused parameter tensor as the optimizer sees it. */
export interface Slot {
  key: string;
  variable: Variable;
  /** per-member values -> a tensor that broadcasts against the parameter */
  hyper(values: number[]): Tensor;
  /** the gradient's norm per member, broadcast like hyper() */
  memberNorm(g: Tensor): Tensor;
  /**
   * a shared layer's parameter: one tensor for every member, whose gradient is the sum of theirs; it
   * steps once per step with the file's hyperparameters (SharedSlots), never a member's
   */
  shared?: boolean;
}

/** The file's hyperparameters, for the shared slots: values, and scalar tensors (derived keys too: `1-beta1`, `-lr`; may be cached). */
export interface SharedSlots {
  value(key: string): number;
  tensor(key: string): Tensor;
}

export interface OptimizerState {
  /** per slot key, per state name (m, v, accum, ms, mom) */
  tensors: Map<string, Map<string, Variable>>;
  /** Adam's beta1^t and beta2^t per member */
  accBeta1: number[];
  accBeta2: number[];
  /** Adam's beta1^t and beta2^t of the shared slots (the file's betas) */
  sharedAccBeta1: number;
  sharedAccBeta2: number;
}

export function createState(tf: TF, optimizer: string, slots: Slot[], members: number): OptimizerState {
  const tensors = new Map<string, Map<string, Variable>>();
  for (const s of slots) tensors.set(s.key, new Map(optimizerSlots[optimizer].map((n) => [n, tf.variable(tf.zerosLike(s.variable), false)])));
  return { tensors, accBeta1: new Array(members).fill(1), accBeta2: new Array(members).fill(1), sharedAccBeta1: 1, sharedAccBeta2: 1 };
}

/** Per-member hyperparameter values, in population order. */
export type Hyper = (key: string) => number[];
/** A hyperparameter as a tensor shaped for a slot (may be cached between steps). */
export type SlotHyper = (slot: Slot, key: string) => Tensor;
/** A hyperparameter shared by all members, as a scalar; undefined where the members' values differ (may be cached). */
export type SharedHyper = (key: string) => Tensor | undefined;

/** Per-member values of a hyperparameter key, or of a derived one: `1-beta1` (1 - beta1), `-lr`. */
export function hyperValues(hyper: Hyper, key: string): number[] {
  if (key.startsWith('1-')) return hyper(key.slice(2)).map((v) => 1 - v);
  if (key.startsWith('-')) return hyper(key.slice(1)).map((v) => -v);
  return hyper(key);
}

/** The members' common value as a scalar tensor, or undefined where their values differ. */
export function sharedValue(tf: TF, values: number[]): Tensor | undefined {
  return values.every((v) => v === values[0]) ? tf.scalar(values[0]) : undefined;
}

/**
 * One optimizer step on every slot; call inside tf.tidy. A shared slot (a shared layer's parameter) steps
 * with `shared`, the file's hyperparameters; the members' own values reach only their own slots.
 */
export function applyGradients(
  tf: TF,
  optimizer: string,
  slots: Slot[],
  grads: Map<string, Tensor>,
  state: OptimizerState,
  hyper: Hyper,
  slotHyper: SlotHyper = (slot, key) => slot.hyper(hyperValues(hyper, key)),
  sharedHyper: SharedHyper = (key) => sharedValue(tf, hyperValues(hyper, key)),
  shared?: SharedSlots,
): void {
  const own = slots.filter((s) => !s.shared);
  const common = slots.filter((s) => s.shared);
  if (common.length && !shared) throw new Error("internal error: a shared layer's parameters need the file's hyperparameters");
  const clip = hyper('clipnorm');
  const clipping = clip.some((c) => c > 0);
  let rest = slots;
  if (optimizer === 'adam' || optimizer === 'adamw') {
    advanceBetaPowers(state, hyper('beta1'), hyper('beta2'), ...(common.length ? [shared!.value('beta1'), shared!.value('beta2')] : []));
    if (!clipping && own.length > 0 && own.every((s) => grads.has(s.key)) && flatAdam(tf, optimizer, own, grads, state, hyper, slotHyper, sharedHyper)) rest = common;
  }
  const oneMinus = (h: (key: string) => Tensor, key: string) => h(`1-${key}`);
  // per step, not per slot: whether any member (or the shared slots) decays its weights, and whether any uses nesterov
  const decays = (optimizer === 'sgd' || optimizer === 'adamw') && (hyper('weight_decay').some((d) => d !== 0) || (common.length > 0 && shared!.value('weight_decay') !== 0));
  const nesterov = optimizer === 'sgd' && hyper('nesterov').some((v) => v);
  for (const slot of rest) {
    let g = grads.get(slot.key);
    if (!g) continue;
    if (slot.shared) g = shared!.value('clipnorm') > 0 ? clipToNorm(tf, g, tf.norm(g), shared!.tensor('clipnorm')) : g;
    else if (clipping) g = clipToNorm(tf, g, slot.memberNorm(g), slot.hyper(clip.map((x) => (x > 0 ? x : Infinity))));
    const s = state.tensors.get(slot.key)!;
    const h = (key: string) => (slot.shared ? shared!.tensor(key) : slotHyper(slot, key));
    const w = slot.variable;
    const decay = (value: Tensor) => (decays ? tf.sub(value, tf.mul(tf.mul(value, h('weight_decay')), h('lr'))) : value);
    switch (optimizer) {
      case 'sgd': {
        // tf.train.momentum: accum = accum * m + g; w -= lr * accum (nesterov: lr * (g + accum * m))
        const m = h('momentum');
        const accum = tf.add(tf.mul(s.get('accum')!, m), g);
        s.get('accum')!.assign(accum);
        const ahead = () => tf.add(g, tf.mul(accum, m));
        const step = slot.shared ? (shared!.value('nesterov') ? ahead() : accum) : !nesterov ? accum : tf.where(tf.greater(h('nesterov'), 0.5), ahead(), accum);
        w.assign(tf.add(tf.mul(step, h('-lr')), decay(w)));
        break;
      }
      case 'adam':
      case 'adamw': {
        // 1 - beta is taken in float64 before it becomes a float32 tensor, as tf.train.adam does
        const m = tf.add(tf.mul(s.get('m')!, h('beta1')), tf.mul(g, oneMinus(h, 'beta1')));
        const v = tf.add(tf.mul(s.get('v')!, h('beta2')), tf.mul(tf.square(g), oneMinus(h, 'beta2')));
        s.get('m')!.assign(m);
        s.get('v')!.assign(v);
        const corrections = (acc: number[], sharedAcc: number) => (slot.shared ? tf.scalar(1 - sharedAcc) : slot.hyper(acc.map((a) => 1 - a)));
        const mHat = tf.div(m, corrections(state.accBeta1, state.sharedAccBeta1));
        const vHat = tf.div(v, corrections(state.accBeta2, state.sharedAccBeta2));
        const base = optimizer === 'adamw' ? decay(w) : w;
        w.assign(tf.add(tf.mul(tf.div(mHat, tf.add(tf.sqrt(vHat), h('epsilon'))), h('-lr')), base));
        break;
      }
      case 'rmsprop': {
        // tf.train.rmsprop (not centred): ms = rho ms + (1 - rho) g^2; mom = momentum mom + lr g / sqrt(ms + eps)
        const ms = tf.add(tf.mul(s.get('ms')!, h('rho')), tf.mul(tf.square(g), oneMinus(h, 'rho')));
        const mom = tf.add(tf.mul(s.get('mom')!, h('momentum')), tf.div(tf.mul(g, h('lr')), tf.sqrt(tf.add(ms, h('epsilon')))));
        s.get('ms')!.assign(ms);
        s.get('mom')!.assign(mom);
        w.assign(tf.sub(w, mom));
        break;
      }
      default:
        throw new Error(`unknown optimizer ${optimizer}`);
    }
  }
}

/**
 * Adam (and adamw) on one flat buffer of all slots: the same arithmetic, element for element, as the
 * per-slot rule below, in 13 kernels per step instead of 15 per slot. For small models a step is bound
 * by the number of kernels it runs, not by their work (the forum's 2-20-1 MLP: 4 slots, 60 kernels of
 * its 161). The gradients and moments are copied into flat buffers and the results copied back out
 * (on wasm heap to heap, without kernels). It needs beta1, beta2, epsilon and the bias corrections
 * shared by all members (scalars; the usual case); a learning rate that differs between members is
 * applied slot by slot, after the split. Returns false, having done nothing, where it does not apply.
 */
function flatAdam(tf: TF, optimizer: string, slots: Slot[], grads: Map<string, Tensor>, state: OptimizerState, hyper: Hyper, slotHyper: SlotHyper, sharedHyper: SharedHyper): boolean {
  const [b1, oneMinusB1, b2, oneMinusB2, eps] = ['beta1', '1-beta1', 'beta2', '1-beta2', 'epsilon'].map(sharedHyper);
  const bc1 = sharedValue(tf, state.accBeta1.map((a) => 1 - a));
  const bc2 = sharedValue(tf, state.accBeta2.map((a) => 1 - a));
  if (!b1 || !oneMinusB1 || !b2 || !oneMinusB2 || !eps || !bc1 || !bc2) return false;
  const negLr = sharedHyper('-lr');
  const shapes = slots.map((s) => s.variable.shape);
  const moments = (name: string) => slots.map((s) => state.tensors.get(s.key)!.get(name)!);
  const g = concatFlat(tf, slots.map((s) => grads.get(s.key)!));
  // 1 - beta is taken in float64 before it becomes a float32 tensor, as tf.train.adam does
  const m = tf.add(tf.mul(concatFlat(tf, moments('m')), b1), tf.mul(g, oneMinusB1));
  const v = tf.add(tf.mul(concatFlat(tf, moments('v')), b2), tf.mul(tf.square(g), oneMinusB2));
  const ratio = tf.div(tf.div(m, bc1), tf.add(tf.sqrt(tf.div(v, bc2)), eps));
  const steps = negLr ? splitFlat(tf, tf.mul(ratio, negLr), shapes) : splitFlat(tf, ratio, shapes).map((r, i) => tf.mul(r, slotHyper(slots[i], '-lr')));
  const ms = splitFlat(tf, m, shapes);
  const vs = splitFlat(tf, v, shapes);
  const decays = optimizer === 'adamw' && hyper('weight_decay').some((d) => d !== 0);
  slots.forEach((slot, i) => {
    const s = state.tensors.get(slot.key)!;
    s.get('m')!.assign(ms[i]);
    s.get('v')!.assign(vs[i]);
    const w = slot.variable;
    const base = decays ? tf.sub(w, tf.mul(tf.mul(w, slotHyper(slot, 'weight_decay')), slotHyper(slot, 'lr'))) : w;
    w.assign(tf.add(steps[i], base));
  });
  return true;
}

/** Keras clipnorm: g * c / max(norm, c), per member (norm and c broadcast against g; c = Infinity leaves a member alone). */
function clipToNorm(tf: TF, g: Tensor, norm: Tensor, c: Tensor): Tensor {
  return tf.where(tf.greater(norm, c), tf.mul(g, tf.div(c, norm)), g);
}

/**
 * Adam's beta1^t and beta2^t one step on, per member (b1, b2: the members' betas), and the shared
 * layers' (sharedB1, sharedB2: the file's betas), as tf.train.adam keeps them: float32 products of the
 * float32 betas. A kernel: host arithmetic, one call in a traced step.
 */
export const advanceBetaPowers = kernel('advanceBetaPowers', (state: Pick<OptimizerState, 'accBeta1' | 'accBeta2' | 'sharedAccBeta1' | 'sharedAccBeta2'>, b1: number[], b2: number[], sharedB1?: number, sharedB2?: number): void => {
  state.accBeta1 = state.accBeta1.map((a, i) => Math.fround(a * Math.fround(b1[i])));
  state.accBeta2 = state.accBeta2.map((a, i) => Math.fround(a * Math.fround(b2[i])));
  if (sharedB1 === undefined || sharedB2 === undefined) return;
  state.sharedAccBeta1 = Math.fround(state.sharedAccBeta1 * Math.fround(sharedB1));
  state.sharedAccBeta2 = Math.fround(state.sharedAccBeta2 * Math.fround(sharedB2));
});
