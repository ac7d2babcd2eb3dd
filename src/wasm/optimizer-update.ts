// The optimizers' update rules as generated code, element by element over one member's block of a
// parameter: src/math/optimizers.ts's rules rendered over Lanes (src/wasm/render.ts), with the op path's
// operations in its order (src/kernels/optimizers.ts); and Keras' clipnorm.
import type { Code, Local } from './module.js';
import type { Lanes } from './lanes.js';
import { forEachFloat } from './blocks.js';
import { emitRule, type Binding } from './render.js';
import { updateRules } from '../math/optimizers.js';

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
  const rule = updateRules[optimizer];
  if (!rule) throw new Error(`internal error: no generated update for the optimizer ${optimizer}`);
  const address = (base: Local) => c.get(base).get(off).i32Add();
  const g = v.floatLocal();
  const w = v.floatLocal();
  address(at.g);
  v.load();
  c.set(g);
  address(at.w);
  v.load();
  c.set(w);
  const inputs: Record<string, Binding> = { g, w };
  for (const [key, local] of Object.entries(h)) inputs[`hyper:${key}`] = local;
  for (const [name, base] of Object.entries(at.slots)) inputs[`slot:${name}`] = () => (address(base), v.load());
  emitRule(v, rule, {
    inputs,
    store(name, push) {
      if (name === 'w') {
        // the new value into w's local, then stored from it
        push();
        c.set(w);
        address(at.w).get(w);
      } else {
        address(at.slots[name.slice('slot:'.length)]);
        push();
      }
      v.store();
    },
  });
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
