// Initial weights of one member. Member i draws from its own stream, Rng.of(seed, 'init', i), through
// its parameters in model order, at its own (unwidened) shapes: so it starts at the same point whatever
// the member count or the lowering. A `shared` layer's parameters come from a stream of their own,
// Rng.of(seed, 'init', 'shared'), drawn once for every member (a member's stream skips them).
// Initialisers follow Keras, fans included.
import type { Shape } from '../core/arg-spec.js';
import type { Initializer } from '../vocabulary/initializers.js';
import { Rng } from '../util/rng.js';

/** Keras' fans: [in, out] for dense, receptive field times channels for convolutions. */
export function fans(shape: Shape): [number, number] {
  if (shape.length === 0) return [1, 1];
  if (shape.length === 1) return [shape[0], shape[0]];
  if (shape.length === 2) return [shape[0], shape[1]];
  const field = shape.slice(0, -2).reduce((a, b) => a * b, 1);
  return [shape[shape.length - 2] * field, shape[shape.length - 1] * field];
}

/** stddev of a normal truncated at two standard deviations, corrected as Keras does */
const TRUNCATION = 0.87962566103423978;

export function initialValues(init: Initializer, shape: Shape, rng: Rng): Float32Array {
  const size = shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(size);
  const [fanIn, fanOut] = fans(shape);
  const uniform = (limit: number) => {
    for (let i = 0; i < size; i++) out[i] = rng.range(-limit, limit);
  };
  const truncated = (stddev: number) => {
    for (let i = 0; i < size; i++) out[i] = rng.truncatedNormal() * stddev;
  };
  switch (init) {
    case 'zeros':
      break;
    case 'ones':
      out.fill(1);
      break;
    case 'glorot_uniform':
      uniform(Math.sqrt(6 / (fanIn + fanOut)));
      break;
    case 'glorot_normal':
      truncated(Math.sqrt(2 / (fanIn + fanOut)) / TRUNCATION);
      break;
    case 'he_uniform':
      uniform(Math.sqrt(6 / fanIn));
      break;
    case 'he_normal':
      truncated(Math.sqrt(2 / fanIn) / TRUNCATION);
      break;
    case 'lecun_uniform':
      uniform(Math.sqrt(3 / fanIn));
      break;
    case 'random_uniform':
      uniform(0.05);
      break;
    case 'lecun_normal':
      truncated(Math.sqrt(1 / fanIn) / TRUNCATION);
      break;
    case 'orthogonal':
      out.set(orthogonal(shape, rng));
      break;
    case 'unit_forget_bias':
      // [4u] in the gate order i, f, c, o: the forget gate's quarter starts open
      out.fill(1, size / 4, size / 2);
      break;
  }
  return out;
}

/**
 * Keras' Orthogonal (gain 1): a normal [max(rows, cols), min(rows, cols)] matrix, rows = the product of
 * all axes but the last, drawn row-major; its QR's Q with the signs of R's diagonal made positive
 * (modified Gram-Schmidt in float64 gives that Q directly); transposed where rows < cols.
 */
function orthogonal(shape: Shape, rng: Rng): Float64Array {
  const cols = shape[shape.length - 1] ?? 1;
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const [m, n] = [Math.max(rows, cols), Math.min(rows, cols)];
  const a = Float64Array.from({ length: m * n }, () => rng.normal());
  for (let j = 0; j < n; j++) {
    for (let k = 0; k < j; k++) {
      let dot = 0;
      for (let i = 0; i < m; i++) dot += a[i * n + k] * a[i * n + j];
      for (let i = 0; i < m; i++) a[i * n + j] -= dot * a[i * n + k];
    }
    let norm = 0;
    for (let i = 0; i < m; i++) norm += a[i * n + j] * a[i * n + j];
    norm = Math.sqrt(norm);
    for (let i = 0; i < m; i++) a[i * n + j] /= norm;
  }
  if (rows >= cols) return a;
  // Q is [cols, rows]: its transpose is the [rows, cols] parameter
  const t = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) t[j * m + i] = a[i * n + j];
  return t;
}

/** What initialisation reads of a parameter (the model IR's IrParam has it): a member's own shape. */
export interface InitParam {
  name: string;
  shape: Shape;
  init: Initializer;
  /** a `shared` layer's parameter, drawn once for every member */
  shared?: true;
}

/** The parameters of one member, in model order. */
export interface InitModel {
  params: readonly InitParam[];
}

/**
 * All of member `member`'s parameters, by name, in model order. Its own from its stream; a `shared`
 * layer's from the stream (seed, 'init', 'shared') that no member owns, the same for every member.
 */
export function initMember(model: InitModel, seed: number, member: number): Map<string, Float32Array> {
  const rng = Rng.of(seed, 'init', member);
  const shared = model.params.some((p) => p.shared) ? initShared(model, seed) : undefined;
  return new Map(model.params.map((p) => [p.name, p.shared ? shared!.get(p.name)! : initialValues(p.init, p.shape, rng)]));
}

// the shared parameters of the last (model, seed) asked for: drawn once, not once per member
const sharedDrawn = new WeakMap<InitModel, { seed: number; values: Map<string, Float32Array> }>();

/** The `shared` layers' initial parameters, by name, in model order (read-only: every member gets these arrays). */
export function initShared(model: InitModel, seed: number): Map<string, Float32Array> {
  const cached = sharedDrawn.get(model);
  if (cached?.seed === seed) return cached.values;
  const rng = Rng.of(seed, 'init', 'shared');
  const values = new Map(model.params.filter((p) => p.shared).map((p) => [p.name, initialValues(p.init, p.shape, rng)]));
  sharedDrawn.set(model, { seed, values });
  return values;
}
