// What both generated steps (WebAssembly on wasm, WGSL on webgpu) compute on the host before each call,
// as the op path computes it: the hyperparameter values they read, and Adam's beta powers one step on.
import type { OptimizerState } from '../kernels/optimizers.js';

/** What advancing Adam's beta powers reads of a population (FusedHost has it). */
export interface BetaHost {
  optimizer: string;
  state: Pick<OptimizerState, 'accBeta1' | 'accBeta2' | 'sharedAccBeta1' | 'sharedAccBeta2'>;
  base(key: string): number;
}

/**
 * A hyperparameter key the step reads, from its raw values (the members', or the file's for the shared
 * layers), in float64 before it becomes float32, as the op path derives it: `-lr`, `1-beta1`, `clip`
 * (clipnorm, Infinity for none), `nesterov` (0 or 1), or the key itself.
 */
export function derivedValues(key: string, raw: (k: string) => number[]): number[] {
  if (key === '-lr') return raw('lr').map((v) => -v);
  if (key.startsWith('1-')) return raw(key.slice(2)).map((v) => 1 - v);
  if (key === 'clip') return raw('clipnorm').map((v) => (v > 0 ? v : Infinity));
  if (key === 'nesterov') return raw('nesterov').map((v) => (v ? 1 : 0));
  return raw(key);
}

/**
 * Adam's (and AdamW's) beta powers one step on, as the op path advances them: float32 products, the
 * members' by their own betas (`betas(key)`, float32), the shared layers' by the file's.
 */
export function advanceBetaPowers(host: BetaHost, shared: boolean, betas: (key: 'beta1' | 'beta2') => Float32Array): void {
  const { optimizer, state } = host;
  if (optimizer !== 'adam' && optimizer !== 'adamw') return;
  if (shared) {
    state.sharedAccBeta1 = Math.fround(state.sharedAccBeta1 * Math.fround(host.base('beta1')));
    state.sharedAccBeta2 = Math.fround(state.sharedAccBeta2 * Math.fround(host.base('beta2')));
  }
  const b1 = betas('beta1');
  const b2 = betas('beta2');
  // new arrays, as the op path makes: a checkpoint or a gathered population may hold the old ones
  const a1 = state.accBeta1.slice();
  const a2 = state.accBeta2.slice();
  for (let i = 0; i < a1.length; i++) {
    a1[i] = Math.fround(a1[i] * b1[i]);
    a2[i] = Math.fround(a2[i] * b2[i]);
  }
  state.accBeta1 = a1;
  state.accBeta2 = a2;
}
