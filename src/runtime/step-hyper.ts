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
export function advanceBetaPowers(host: BetaHost, shared: boolean, betas: (key: 'beta1' | 'beta2') => Float32Array, inPlace = false): void {
  const { optimizer, state } = host;
  if (optimizer !== 'adam' && optimizer !== 'adamw') return;
  if (shared) {
    state.sharedAccBeta1 = Math.fround(state.sharedAccBeta1 * Math.fround(host.base('beta1')));
    state.sharedAccBeta2 = Math.fround(state.sharedAccBeta2 * Math.fround(host.base('beta2')));
  }
  const b1 = betas('beta1');
  const b2 = betas('beta2');
  // new arrays, as the op path makes: a checkpoint or a gathered population may hold the old ones (`inPlace`:
  // the caller made the arrays and nothing else holds them)
  const a1 = inPlace ? state.accBeta1 : state.accBeta1.slice();
  const a2 = inPlace ? state.accBeta2 : state.accBeta2.slice();
  for (let i = 0; i < a1.length; i++) {
    a1[i] = Math.fround(a1[i] * b1[i]);
    a2[i] = Math.fround(a2[i] * b2[i]);
  }
  state.accBeta1 = a1;
  state.accBeta2 = a2;
}

/** What a generated step reads of its population's hyperparameters (FusedHost has it). */
export interface HyperHost extends BetaHost {
  /** per-member values of a hyperparameter key, in population order */
  hyper(key: string): number[];
  /** an lr_schedule moves `lr` every step */
  scheduled: boolean;
  /** every hyperparameter may change between any two steps: read them all at each step */
  volatile?: boolean;
}

/** What a key's row is, to StepHyper.rows(). */
const enum Row {
  Shared,
  Bc1,
  Bc2,
  Moving,
  Fixed,
}

/**
 * The members' hyperparameters as both generated steps hand them to their memory: each key's row (derived
 * in float64, then float32), cached until changed(); which rows the step's memory holds already; whether
 * any member clips its gradients.
 */
export class StepHyper {
  private readonly cache = new Map<string, Float32Array>();
  private readonly written = new Set<string>();
  private clips?: boolean;
  /** Adam's corrections 1 - beta^t, refilled at every step without a new array */
  private readonly corrections = new Map<string, Float32Array>();
  /** the kind of each key's row (kindsOf), for the last keys array asked about */
  private kinds?: { keys: readonly string[]; rows: Row[] };
  /** the keys array whose fixed rows are all written (rows()), until changed() or unwritten() */
  private settled?: readonly string[];

  constructor(private readonly host: HyperHost) {}

  /** Forget the cached values (after PBT, or a changed clipnorm): every row is written again. */
  changed(): void {
    this.cache.clear();
    this.written.clear();
    this.clips = undefined;
    this.settled = undefined;
  }

  /** The step's memory lost its rows (a new buffer or arena): every row is written again. */
  unwritten(): void {
    this.written.clear();
    this.settled = undefined;
  }

  /** A key's per-member values as float32, cached until changed(). */
  values(key: string): Float32Array {
    let values = this.cache.get(key);
    if (!values) {
      values = Float32Array.from(derivedValues(key, (raw) => this.host.hyper(raw)));
      this.cache.set(key, values);
    }
    return values;
  }

  /** Whether any member clips its gradients (cached until changed()). */
  clipping(): boolean {
    if (this.clips === undefined) this.clips = this.values('clipnorm').some((c) => c > 0);
    return this.clips;
  }

  /**
   * Hands `write` the rows of `keys` the step must be given now: Adam's corrections and a scheduled lr at
   * every step (every key, when the host is volatile), the others once after a change.
   */
  rows(keys: readonly string[], write: (k: number, values: Float32Array) => void): void {
    const { host } = this;
    const kinds = this.kindsOf(keys);
    // once every row that does not move is written, a step looks at the moving ones only
    const settled = this.settled === keys;
    for (let k = 0; k < keys.length; k++) {
      const kind = kinds[k];
      if (kind === Row.Shared || (kind === Row.Fixed && settled)) continue;
      const key = keys[k];
      if (kind === Row.Bc1 || kind === Row.Bc2) write(k, this.correction(kind === Row.Bc1 ? host.state.accBeta1 : host.state.accBeta2, key));
      else if (kind === Row.Moving) write(k, Float32Array.from(derivedValues(key, (raw) => host.hyper(raw))));
      else if (!this.written.has(key)) {
        write(k, this.values(key));
        this.written.add(key);
      }
    }
    this.settled = keys;
  }

  /**
   * What each key's row is: the file's values for the shared layers' step (which the step writes
   * itself), Adam's corrections, one that moves at every step (every key when the host is volatile, a
   * scheduled lr), or one written once after a change. Kept for the last keys array asked about.
   */
  private kindsOf(keys: readonly string[]): Row[] {
    if (this.kinds?.keys === keys) return this.kinds.rows;
    const { host } = this;
    const rows = keys.map((key) => {
      if (key.startsWith('shared:')) return Row.Shared;
      if (key === 'bc1') return Row.Bc1;
      if (key === 'bc2') return Row.Bc2;
      return host.volatile || (host.scheduled && (key === 'lr' || key === '-lr')) ? Row.Moving : Row.Fixed;
    });
    this.kinds = { keys, rows };
    return rows;
  }

  /** 1 - beta^t of every member, float64 then float32, in an array kept for the key. */
  private correction(acc: readonly number[], key: string): Float32Array {
    let out = this.corrections.get(key);
    if (out?.length !== acc.length) this.corrections.set(key, (out = new Float32Array(acc.length)));
    for (let m = 0; m < acc.length; m++) out[m] = 1 - acc[m];
    return out;
  }
}
