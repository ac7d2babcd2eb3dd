// The optimizers' update rules as generated code, element by element over one member's block of a
// parameter, with the same operations in the same order as the op path (src/kernels/optimizers.ts):
// tf.train's sgd/momentum, adam and rmsprop, Keras' decoupled weight decay (sgd, adamw) and clipnorm.
import type { Code, Local } from './module.js';
import type { Lanes } from './lanes.js';
import { forEachFloat } from './blocks.js';

/** The state each optimizer keeps per parameter (the op path's stateNames). */
export const optimizerSlots: Record<string, string[]> = { sgd: ['accum'], adam: ['m', 'v'], adamw: ['m', 'v'], rmsprop: ['ms', 'mom'] };

/**
 * The member's hyperparameters this optimizer reads, as f32 locals by key: `lr`, `-lr`, `beta1`, `1-beta1`,
 * ..., `bc1`/`bc2` (Adam's bias corrections 1 - beta^t), `clip` (clipnorm, Infinity for none).
 */
export const optimizerHyper: Record<string, string[]> = {
  sgd: ['lr', '-lr', 'momentum', 'nesterov', 'weight_decay'],
  adam: ['-lr', 'beta1', '1-beta1', 'beta2', '1-beta2', 'epsilon', 'bc1', 'bc2'],
  adamw: ['lr', '-lr', 'beta1', '1-beta1', 'beta2', '1-beta2', 'epsilon', 'bc1', 'bc2', 'weight_decay'],
  rmsprop: ['lr', 'rho', '1-rho', 'momentum', 'epsilon'],
};

/** Where one element (or 4) of a parameter, its gradient and its slots are: address locals, plus `off`. */
export interface UpdateTarget {
  w: Local;
  g: Local;
  slots: Record<string, Local>;
}

/**
 * One optimizer step on `count` floats of a member's parameter run (w, g and slots contiguous over the
 * run): the op path's rule, element by element.
 */
export function emitUpdate(c: Code, optimizer: string, count: number, at: UpdateTarget, h: Record<string, Local>): void {
  // the hyperparameters splat once into vectors, for the SIMD part
  const splat: Record<string, Local> = {};
  for (const [key, local] of Object.entries(h)) {
    splat[key] = c.local('v128');
    c.get(local).f32x4Splat().set(splat[key]);
  }
  forEachFloat(
    c,
    () => c.i32(count),
    (v, off) => updateElement(v, optimizer, at, off, v.width === 4 ? splat : h),
  );
}

function updateElement(v: Lanes, optimizer: string, at: UpdateTarget, off: Local, h: Record<string, Local>): void {
  const c = v.code;
  const load = (base: Local) => {
    c.get(base).get(off).i32Add();
    v.load();
  };
  const hyper = (key: string) => void c.get(h[key]);
  const g = v.floatLocal();
  const w = v.floatLocal();
  load(at.g);
  c.set(g);
  load(at.w);
  c.set(w);
  const storeTo = (base: Local, value: Local) => {
    c.get(base).get(off).i32Add().get(value);
    v.store();
  };
  // decay(w) = w - w * weight_decay * lr (a zero weight_decay leaves a finite w as it is, bit for bit)
  const decayed = () => {
    c.get(w);
    c.get(w);
    hyper('weight_decay');
    v.mul();
    hyper('lr');
    v.mul();
    v.sub();
  };
  switch (optimizer) {
    case 'sgd': {
      const accum = v.floatLocal();
      load(at.slots.accum);
      hyper('momentum');
      v.mul();
      c.get(g);
      v.add();
      c.set(accum);
      storeTo(at.slots.accum, accum);
      // nesterov: g + accum * momentum, where the member's nesterov is set
      c.get(g);
      c.get(accum);
      hyper('momentum');
      v.mul();
      v.add();
      c.get(accum);
      hyper('nesterov');
      v.const(0.5);
      v.gt();
      v.select();
      hyper('-lr');
      v.mul();
      decayed();
      v.add();
      c.set(w);
      break;
    }
    case 'adam':
    case 'adamw': {
      const m = v.floatLocal();
      const s = v.floatLocal();
      load(at.slots.m);
      hyper('beta1');
      v.mul();
      c.get(g);
      hyper('1-beta1');
      v.mul();
      v.add();
      c.set(m);
      load(at.slots.v);
      hyper('beta2');
      v.mul();
      c.get(g);
      c.get(g);
      v.mul();
      hyper('1-beta2');
      v.mul();
      v.add();
      c.set(s);
      storeTo(at.slots.m, m);
      storeTo(at.slots.v, s);
      // (m / bc1) / (sqrt(v / bc2) + epsilon) * -lr + base
      c.get(m);
      hyper('bc1');
      v.div();
      c.get(s);
      hyper('bc2');
      v.div();
      v.sqrt();
      hyper('epsilon');
      v.add();
      v.div();
      hyper('-lr');
      v.mul();
      if (optimizer === 'adamw') decayed();
      else c.get(w);
      v.add();
      c.set(w);
      break;
    }
    case 'rmsprop': {
      const ms = v.floatLocal();
      const mom = v.floatLocal();
      load(at.slots.ms);
      hyper('rho');
      v.mul();
      c.get(g);
      c.get(g);
      v.mul();
      hyper('1-rho');
      v.mul();
      v.add();
      c.set(ms);
      load(at.slots.mom);
      hyper('momentum');
      v.mul();
      c.get(g);
      hyper('lr');
      v.mul();
      c.get(ms);
      hyper('epsilon');
      v.add();
      v.sqrt();
      v.div();
      v.add();
      c.set(mom);
      storeTo(at.slots.ms, ms);
      storeTo(at.slots.mom, mom);
      c.get(w);
      c.get(mom);
      v.sub();
      c.set(w);
      break;
    }
    default:
      throw new Error(`internal error: no generated update for the optimizer ${optimizer}`);
  }
  storeTo(at.w, w);
}

/**
 * Keras clipnorm on a member's gradient of `count` contiguous floats at `g`: g * clip / norm where its norm
 * exceeds clip (an f32 local, Infinity for none), the norm summed in order.
 */
export function emitClip(c: Code, count: number, g: Local, clip: Local): void {
  const sum = c.local('f32');
  const norm = c.local('f32');
  const i = c.local('i32');
  c.f32(0).set(sum);
  c.for(i, () => c.i32(0), () => c.i32(count * 4), () => {
    c.get(g).get(i).i32Add().loadF32();
    const x = c.local('f32');
    c.tee(x).get(x).f32Mul().get(sum).f32Add().set(sum);
  }, 4);
  c.get(sum).f32Sqrt().set(norm);
  c.get(norm).get(clip).f32Gt();
  c.if(() => {
    const scale = c.local('f32');
    c.get(clip).get(norm).f32Div().set(scale);
    c.for(i, () => c.i32(0), () => c.i32(count * 4), () => {
      c.get(g).get(i).i32Add();
      c.get(g).get(i).i32Add().loadF32().get(scale).f32Mul();
      c.storeF32();
    }, 4);
  });
}
