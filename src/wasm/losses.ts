// The losses and metrics as generated code, for one member's predictions p [B, K] against its labels y
// [B, K] (class indices [B, 1] under the sparse loss): the loss (the batch mean of each example's), the
// gradient dL/dp of that mean, and the metrics, with the op path's definitions (src/kernels/losses.ts):
// Keras' clipping of probabilities to [eps, 1 - eps], whose clipped elements pass no gradient.
import type { Code, Local } from './module.js';
import { scalarLanes, type Lanes } from './lanes.js';
import { log } from './math.js';
import { emitRule } from './render.js';
import { describedLosses, elementLoss as elementRule, EPS, ONE_MINUS_EPS } from '../math/losses.js';
import type { Rule } from '../math/expr.js';
import { address, forEachFloat, loadAt, rowOf, type Mat } from './blocks.js';

export interface LossTarget {
  batch: Local;
  /** predictions [B, K] */
  p: Mat;
  /** the member's labels: address of [B, K] (or [B, 1]) floats */
  y: Local;
  /** where dL/dp goes, [B, K] */
  dp: Mat;
  /** where the loss (f32) is stored: an address local */
  lossOut: Local;
  /** per metric, the address its value is stored at */
  metricOut: Record<string, Local>;
  /** scratch [B, K]: each element's term of an elementwise loss */
  terms: Mat;
}

/** Emits the loss, its gradient and the metrics of one member. */
export function emitLoss(c: Code, loss: string, args: Record<string, unknown>, k: number, t: LossTarget): void {
  const b = c.local('i32');
  const pAt = c.local('i32');
  const yAt = c.local('i32');
  const dAt = c.local('i32');
  const p = c.local('f32');
  const y = c.local('f32');
  const total = c.local('f32');
  const row = c.local('f32');
  const scale = c.local('f32');
  const sparse = loss === 'sparse_categorical_crossentropy';
  const labelWidth = sparse ? 1 : k;
  if (!describedLosses.includes(loss)) throw new Error(`internal error: no generated code for the loss ${loss}`);
  const elementwise = elementRule(loss, args);
  // the gradient of the two means: 1 / (B K) in one division where the op path's gradient is written out
  // (binary cross-entropy), (1 / B) / K where autodiff takes one mean after the other
  if (elementwise?.scale === 'once') c.f32(1).get(t.batch).f32ConvertI32S().f32(k).f32Mul().f32Div().set(scale);
  else c.f32(1).get(t.batch).f32ConvertI32S().f32Div().f32(k).f32Div().set(scale);
  c.f32(0).set(total);
  const rowAddress = (m: Mat, into: Local) => (rowOf(c, m, b), c.set(into));
  /** loads p[b, j] and y[b, j] (one-hot from the class index when sparse) into p and y */
  const element = (jj: Local | number) => {
    c.get(pAt);
    if (typeof jj === 'number') c.loadF32(jj * 4);
    else c.get(jj).i32(4).i32Mul().i32Add().loadF32();
    c.set(p);
    if (sparse) {
      c.f32(1).f32(0).get(yAt).loadF32().i32TruncSatF32S();
      if (typeof jj === 'number') c.i32(jj);
      else c.get(jj);
      c.i32Eq().select().set(y);
    } else {
      c.get(yAt);
      if (typeof jj === 'number') c.loadF32(jj * 4);
      else c.get(jj).i32(4).i32Mul().i32Add().loadF32();
      c.set(y);
    }
  };
  if (!elementwise) {
    c.for(b, () => c.i32(0), () => c.get(t.batch), () => {
      rowAddress(t.p, pAt);
      rowAddress(t.dp, dAt);
      c.get(t.y).get(b).i32(labelWidth * 4).i32Mul().i32Add().set(yAt);
      c.f32(0).set(row);
      crossEntropyRow(c, k, { batch: t.batch, element, p, y, row, scale, dAt, pAt });
      c.get(total).get(row).f32Add().set(total);
    });
  } else {
    // every element's term and gradient at once (SIMD), then each example's terms summed in order
    forEachFloat(
      c,
      () => c.get(t.batch).i32(k).i32Mul(),
      (v, off) => elementLoss(v, elementwise.rule, { t, off, scale }),
    );
    const negate = elementwise.negated ?? false;
    c.for(b, () => c.i32(0), () => c.get(t.batch), () => {
      rowAddress(t.terms, pAt);
      c.f32(0).set(row);
      // binary cross-entropy's term is y log q + (1 - y) log(1 - q): the example's loss is minus their mean
      for (let jj = 0; jj < k; jj++) c.get(row).get(pAt).loadF32(jj * 4)[negate ? 'f32Sub' : 'f32Add']().set(row);
      // each example's loss is the mean over K
      c.get(row).f32(k).f32Div().set(row);
      c.get(total).get(row).f32Add().set(total);
    });
  }
  // a non-finite prediction makes the loss NaN: the clipping above would hide it from the divergence guard
  const poison = nonFinitePoison(c, t, k);
  c.get(t.lossOut).get(total).get(t.batch).f32ConvertI32S().f32Div().get(poison).f32Add().storeF32();
  for (const [name, out] of Object.entries(t.metricOut)) emitMetric(c, name, loss, k, t, out);
}

/**
 * A local holding the sum of 0 * p over the member's predictions: 0 where every one is finite (so adding
 * it leaves the loss as it was, bit for bit), NaN where one is NaN or infinite.
 */
function nonFinitePoison(c: Code, t: LossTarget, k: number): Local {
  const i = c.local('i32');
  const poison = c.local('f32');
  c.f32(0).set(poison);
  c.for(i, () => c.i32(0), () => c.get(t.batch).i32(k * 4).i32Mul(), () => {
    c.get(poison);
    address(c, t.p.base, t.p.offset, i);
    c.loadF32().f32(0).f32Mul().f32Add().set(poison);
  }, 4);
  return poison;
}

interface ElementContext {
  t: LossTarget;
  /** byte offset of the element(s) in p, y, dp and terms, all [B, K] */
  off: Local;
  scale: Local;
}

/**
 * Elements of an elementwise loss (one or four): each one's term into `terms`, and its dL/dp, by the loss's
 * rule (src/math/losses.ts).
 */
function elementLoss(v: Lanes, rule: Rule, e: ElementContext): void {
  const c = v.code;
  const { t, off } = e;
  const p = v.floatLocal();
  const y = v.floatLocal();
  loadAt(v, t.p, off);
  c.set(p);
  loadAt(v, { base: t.y, offset: 0 }, off);
  c.set(y);
  const outputs: Record<string, Mat> = { term: t.terms, grad: t.dp };
  emitRule(v, rule, {
    inputs: { p, y, scale: () => (c.get(e.scale), v.splat()) },
    store(name, push) {
      const m = outputs[name];
      address(c, m.base, m.offset, off);
      push();
      v.store();
    },
  });
}

interface RowContext {
  batch: Local;
  element(j: number): void;
  p: Local;
  y: Local;
  row: Local;
  scale: Local;
  dAt: Local;
  pAt: Local;
}

/**
 * Categorical cross-entropy of one example: q = p / sum(p) clipped to [eps, 1 - eps], -sum(y log q),
 * and its gradient through the normalisation, for the batch mean.
 */
function crossEntropyRow(c: Code, k: number, r: RowContext): void {
  const { p, y, row } = r;
  const s = c.local('f32');
  const dot = c.local('f32');
  const q = c.local('f32');
  const g = c.local('f32');
  const invB = c.local('f32');
  const lanes = scalarLanes(c);
  c.f32(1).get(r.batch).f32ConvertI32S().f32Div().set(invB);
  c.f32(0).set(s);
  for (let j = 0; j < k; j++) c.get(s).get(r.pAt).loadF32(j * 4).f32Add().set(s);
  c.f32(0).set(dot);
  // first pass: the loss, each dq_j = (y_j * -(1/B)) / q_j (0 where clipped), kept in dp, and
  // dS = -sum_k dq_k (p_k / S^2), as autodiff of -sum(y log clip(p / S)) computes them
  const s2 = c.local('f32');
  c.get(s).get(s).f32Mul().set(s2);
  for (let j = 0; j < k; j++) {
    r.element(j);
    const raw = c.local('f32');
    c.get(p).get(s).f32Div().tee(raw).f32(EPS).f32Max().f32(ONE_MINUS_EPS).f32Min().set(q);
    log(lanes, q, true);
    c.get(y).f32Mul().get(row).f32Add().set(row);
    c.get(y).f32(0).get(invB).f32Sub().f32Mul().get(q).f32Div().f32(0).get(raw).get(q).f32Eq().select().set(g);
    c.get(r.dAt).get(g).storeF32(j * 4);
    c.get(dot).get(g).get(p).get(s2).f32Div().f32Mul().f32Add().set(dot);
  }
  c.f32(0).get(row).f32Sub().set(row);
  // dp_j = dq_j / S + dS
  for (let j = 0; j < k; j++) {
    c.get(r.dAt);
    c.get(r.dAt).loadF32(j * 4).get(s).f32Div().f32(0).get(dot).f32Sub().f32Add();
    c.storeF32(j * 4);
  }
}

/** A metric of the member on the batch, stored at `out`: accuracy, mse or mae. */
function emitMetric(c: Code, name: string, loss: string, k: number, t: LossTarget, out: Local): void {
  const b = c.local('i32');
  const pAt = c.local('i32');
  const yAt = c.local('i32');
  const sum = c.local('f32');
  const sparse = loss === 'sparse_categorical_crossentropy';
  const labelWidth = sparse ? 1 : k;
  c.f32(0).set(sum);
  c.for(b, () => c.i32(0), () => c.get(t.batch), () => {
    rowOf(c, t.p, b);
    c.set(pAt);
    c.get(t.y).get(b).i32(labelWidth * 4).i32Mul().i32Add().set(yAt);
    if (name === 'accuracy') {
      c.get(sum);
      if (k === 1) c.get(pAt).loadF32().f32(0.5).f32Gt().get(yAt).loadF32().f32(0.5).f32Gt().i32Eq();
      else {
        argmax(c, pAt, k);
        if (sparse || labelWidth === 1) c.get(yAt).loadF32().i32TruncSatF32S();
        else argmax(c, yAt, k);
        c.i32Eq();
      }
      c.f32ConvertI32S().f32Add().set(sum);
      return;
    }
    for (let j = 0; j < k; j++) {
      c.get(sum);
      c.get(pAt).loadF32(j * 4);
      if (sparse) c.f32(1).f32(0).get(yAt).loadF32().i32TruncSatF32S().i32(j).i32Eq().select();
      else c.get(yAt).loadF32(j * 4);
      c.f32Sub();
      if (name === 'mse') {
        const d = c.local('f32');
        c.tee(d).get(d).f32Mul();
      } else c.f32Abs();
      c.f32Add().set(sum);
    }
  });
  const count = name === 'accuracy' ? 1 : k;
  c.get(out).get(sum).get(t.batch).f32ConvertI32S().f32(count).f32Mul().f32Div().storeF32();
}

/** Pushes the index of the first largest of k floats at the address local `at` (an i32). */
function argmax(c: Code, at: Local, k: number): void {
  const best = c.local('f32');
  const index = c.local('i32');
  c.get(at).loadF32().set(best);
  c.i32(0).set(index);
  for (let j = 1; j < k; j++) {
    c.get(at).loadF32(j * 4).get(best).f32Gt();
    c.if(() => {
      c.get(at).loadF32(j * 4).set(best);
      c.i32(j).set(index);
    });
  }
  c.get(index);
}
