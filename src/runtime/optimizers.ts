// netc's own optimizers, fused over the member axis. Every hyperparameter is a per-member tensor shaped
// to broadcast against the parameter it updates; the update rules follow tf.train (sgd/momentum, adam,
// rmsprop) so that a member matches a model trained alone with TF.js, and Keras for the decoupled weight
// decay of adamw and sgd, and for clipnorm (each parameter tensor's gradient clipped to that norm).
import type { TF, Tensor, Variable } from './tf.js';

/** One fused parameter tensor as the optimizer sees it. */
export interface Slot {
  key: string;
  variable: Variable;
  /** per-member values -> a tensor that broadcasts against the parameter */
  hyper(values: number[]): Tensor;
  /** the gradient's norm per member, broadcast like hyper() */
  memberNorm(g: Tensor): Tensor;
}

export interface OptimizerState {
  /** per slot key, per state name (m, v, accum, ms, mom) */
  tensors: Map<string, Map<string, Variable>>;
  /** Adam's beta1^t and beta2^t per member */
  accBeta1: number[];
  accBeta2: number[];
}

export const stateNames: Record<string, string[]> = { sgd: ['accum'], adam: ['m', 'v'], adamw: ['m', 'v'], rmsprop: ['ms', 'mom'] };

export function createState(tf: TF, optimizer: string, slots: Slot[], members: number): OptimizerState {
  const tensors = new Map<string, Map<string, Variable>>();
  for (const s of slots) tensors.set(s.key, new Map(stateNames[optimizer].map((n) => [n, tf.variable(tf.zerosLike(s.variable), false)])));
  return { tensors, accBeta1: new Array(members).fill(1), accBeta2: new Array(members).fill(1) };
}

/** Per-member hyperparameter values, in population order. */
export type Hyper = (key: string) => number[];
/** A hyperparameter as a tensor shaped for a slot (may be cached between steps). */
export type SlotHyper = (slot: Slot, key: string) => Tensor;

/** One optimizer step on every slot; call inside tf.tidy. */
export function applyGradients(
  tf: TF,
  optimizer: string,
  slots: Slot[],
  grads: Map<string, Tensor>,
  state: OptimizerState,
  hyper: Hyper,
  slotHyper: SlotHyper = (slot, key) => slot.hyper(hyper(key)),
): void {
  if (optimizer === 'adam' || optimizer === 'adamw') {
    const b1 = hyper('beta1');
    const b2 = hyper('beta2');
    // as tf.train.adam keeps them: float32 products of the float32 betas
    state.accBeta1 = state.accBeta1.map((a, i) => Math.fround(a * Math.fround(b1[i])));
    state.accBeta2 = state.accBeta2.map((a, i) => Math.fround(a * Math.fround(b2[i])));
  }
  const oneMinus = (slot: Slot, key: string) => slot.hyper(hyper(key).map((v) => 1 - v));
  for (const slot of slots) {
    let g = grads.get(slot.key);
    if (!g) continue;
    const clip = hyper('clipnorm');
    if (clip.some((c) => c > 0)) g = clipByNorm(tf, slot, g, clip);
    const s = state.tensors.get(slot.key)!;
    const h = (key: string) => slotHyper(slot, key);
    const w = slot.variable;
    const decay = (value: Tensor) => (hyper('weight_decay').some((d) => d !== 0) ? tf.sub(value, tf.mul(tf.mul(value, h('weight_decay')), h('lr'))) : value);
    switch (optimizer) {
      case 'sgd': {
        // tf.train.momentum: accum = accum * m + g; w -= lr * accum (nesterov: lr * (g + accum * m))
        const m = h('momentum');
        const accum = tf.add(tf.mul(s.get('accum')!, m), g);
        s.get('accum')!.assign(accum);
        const nesterov = hyper('nesterov');
        const step = nesterov.every((v) => !v) ? accum : tf.where(tf.greater(h('nesterov'), 0.5), tf.add(g, tf.mul(accum, m)), accum);
        w.assign(tf.add(tf.mul(step, tf.neg(h('lr'))), decay(w)));
        break;
      }
      case 'adam':
      case 'adamw': {
        // 1 - beta is taken in float64 before it becomes a float32 tensor, as tf.train.adam does
        const m = tf.add(tf.mul(s.get('m')!, h('beta1')), tf.mul(g, oneMinus(slot, 'beta1')));
        const v = tf.add(tf.mul(s.get('v')!, h('beta2')), tf.mul(tf.square(g), oneMinus(slot, 'beta2')));
        s.get('m')!.assign(m);
        s.get('v')!.assign(v);
        const mHat = tf.div(m, slot.hyper(state.accBeta1.map((a) => 1 - a)));
        const vHat = tf.div(v, slot.hyper(state.accBeta2.map((a) => 1 - a)));
        const base = optimizer === 'adamw' ? decay(w) : w;
        w.assign(tf.add(tf.mul(tf.div(mHat, tf.add(tf.sqrt(vHat), h('epsilon'))), tf.neg(h('lr'))), base));
        break;
      }
      case 'rmsprop': {
        // tf.train.rmsprop (not centred): ms = rho ms + (1 - rho) g^2; mom = momentum mom + lr g / sqrt(ms + eps)
        const ms = tf.add(tf.mul(s.get('ms')!, h('rho')), tf.mul(tf.square(g), oneMinus(slot, 'rho')));
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

/** Keras clipnorm, per member: g * c / max(norm, c); members with c = 0 are left alone. */
function clipByNorm(tf: TF, slot: Slot, g: Tensor, clip: number[]): Tensor {
  const c = slot.hyper(clip.map((x) => (x > 0 ? x : Infinity)));
  const norm = slot.memberNorm(g);
  return tf.where(tf.greater(norm, c), tf.mul(g, tf.div(c, norm)), g);
}
