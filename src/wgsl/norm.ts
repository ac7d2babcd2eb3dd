// The WGSL step's dropout, layernorm and batchnorm on flat values and on a conv's images [H, W, C] (a norm of an
// image is the flat rule on B*H*W rows of C: batchnorm's statistics per member and channel, layernorm's per
// member, example and cell over the channels, as tf.moments(x, -1) normalises the last axis): each kernel
// follows the webgpu op path's arithmetic (src/layers/dropout.ts, layernorm.ts, batchnorm.ts and autodiff of
// them), every sum one invocation's loop in a fixed order, nothing summed across members (but a shared
// layernorm's gamma and beta gradients):
//
//   dropout      forward and backward one invocation per (member, row, element): mask = (u >= rate) / (1 - rate)
//                from the host's uniform draws u of this step, the op path's own (Rng.of(seed, 'dropout', op,
//                member id, step), uploaded as the `draws` buffer), out = x * mask, dx = dy * mask
//   layernorm    forward one invocation per (member, row): mean, d = x - mean (kept), s = mean(d^2) + epsilon
//                (kept), y = (d * rsqrt(s)) * gamma + beta; dinput one invocation per (member, row), autodiff's
//                of tf.moments and rsqrt; gamma's and beta's updates one invocation per (member, element),
//                their gradients summed over the rows; every sum in the order of TF.js's WebGPU reduction
//                shader (reduceLines), the row's over its units as the rows'
//   shared       a `shared` layernorm: one gamma and beta for every member; on a shared value (the shared
//   layernorm    input, a shared layer's value) its row kernels run once, per row, as the op path computes
//                it once; on members' values per member and row; gamma's and beta's gradients one
//                invocation per element, summed over every member's rows as one batch (N*B rows, row
//                m*B + b; on a shared value the B rows) in the reduction shader's order, as the op path
//                folds the members' rows into one batch and sums once, then stepped by src/wgsl/shared.ts; its
//                epsilon is read as member m's, which is every member's (a shared layer's arguments cannot vary)
//   batchnorm    in training (its sums in the order of TF.js's WebGPU reduction shader: reduceLines):
//                the batch statistics one invocation per (member, unit): mean over the rows,
//                d = x - mean (kept), s = variance + epsilon (kept), the running statistics moved as Keras
//                moves them (moving -= (moving - batch) * (1 - momentum), in place: each member's own);
//                y = (d * rsqrt(s)) * gamma + beta one invocation per (member, row, unit); dinput one
//                invocation per (member, unit), autodiff's of tf.moments over the batch and rsqrt; gamma's
//                and beta's updates as layernorm's; outside training (an evaluation) one kernel per (member,
//                row, unit), y = ((x - moving_mean) * rsqrt(moving_variance + epsilon)) * gamma + beta
//
// The kinds' rules (src/layers/dropout.ts, layernorm.ts, batchnorm.ts) build the layer and call these; what
// they share with the step (the kernel text, the input's expression, the optimizer's update and clipping)
// comes in as a NormWriter.
import { u, type ChainBase, type ChainValues, type WgslParam } from './chain.js';
import { type KernelWriter, paramBuffer } from './kernel-text.js';
import type { SpatialWriter } from './conv.js';

export type Norm = 'dropout' | 'layernorm' | 'batchnorm';

/** A dropout, layernorm or batchnorm of the chain, as its kernels see it. */
export interface NormLayer extends ChainValues {
  family: 'norm';
  norm: Norm;
  /** dropout: its draws [N, B, width] in the `draws` buffer */
  drawsAt?: number;
  /** layernorm and batchnorm: d = x - mean [N, B, width] and s = variance + epsilon in `acts` (layernorm's [N, B], batchnorm's [N, width]) */
  dAt?: number;
  sAt?: number;
  gamma?: WgslParam;
  beta?: WgslParam;
  /** batchnorm's running statistics */
  movingMean?: WgslParam;
  movingVariance?: WgslParam;
  /** cells per example: an image's H*W for batchnorm of an image (its kernels see B*H*W rows of C), else 1 */
  cells: number;
  /** its per-member hyperparameter keys (`dropout_1.rate`, `layernorm_1.epsilon`, `batchnorm_1.momentum` and `.epsilon`) */
  keys: string[];
}

/** Why the WGSL step does not cover this dropout, layernorm or batchnorm, or undefined where it does. */
export function whyNotNorm(norm: Norm, op: { op: string; name: string; shape: readonly number[] }): string | undefined {
  // a norm of an image [H, W, C] is the flat rule on B*H*W rows of C (batchnorm's statistics per channel, layernorm's per cell);
  // a layernorm of a sequence [T, F] the flat rule on B*T rows of F
  const covered = norm === 'dropout' || op.shape.length === 1 || op.shape.length === 3 || (norm === 'layernorm' && op.shape.length === 2);
  if (!covered) return `the ${op.op} layer ${op.name} on values of shape [${op.shape.join(', ')}]`;
  return undefined;
}

/** A layer's cells per example where its norm runs per cell (batchnorm or layernorm of an image [H, W, C]: H*W; a layernorm of a sequence [T, F]: T), else 1. */
export const cellsOf = (norm: Norm, shape: readonly number[]): number => (norm === 'dropout' || shape.length === 1 ? 1 : shape.slice(0, -1).reduce((a, d) => a * d, 1));

/**
 * The norm's kernels' view of a layer of `cells` cells per example: the flat rule's rows of C (width and
 * inWidth C; the caller's writer counts B*cells rows). Its regions are laid out [N, B, H, W, C] as
 * [N, B*H*W, C] already.
 */
export function perCell<L extends Pick<ChainValues, 'width' | 'inWidth'>>(l: L, cells: number): L {
  return cells === 1 ? l : { ...l, width: l.width / cells, inWidth: l.inWidth / cells };
}

/** What the norm kernels borrow from the step: the spatial writer's parts, member m's hyperparameter and a layer's input. */
export interface NormWriter<K> extends Pick<SpatialWriter<K>, 'n' | 'batch' | 'kernel' | 'update' | 'clipped' | 'shared'> {
  /** member m's value of a hyperparameter key */
  hyper(k: Pick<KernelWriter<K>, 'buf'>, key: string): string;
  /** member m's input element (row b, unit `unit`) of a layer */
  input(k: KernelWriter<K>, l: ChainValues, unit: string): string;
}

/** Where a layer's own regions are taken from: `floats` of `acts` or of `draws`, each call after the last. */
export interface Regions {
  acts(floats: number): number;
  draws(floats: number): number;
}

/** What normLayer reads of the step's LayerBuild (src/wgsl/rule.ts, which imports this file's types). */
type NormBuild = Regions & { base: ChainBase; param(name: string): WgslParam | undefined; members: number; batch: number };

/** The `kind` layer of `b.base` (for b.members members), with its own regions: a dropout's draws (in `draws`), a norm's d and s (in `acts`). */
export function normLayer(b: NormBuild, kind: Norm): NormLayer {
  const n = b.members;
  let batch = b.batch;
  // its "activation" is its kind's name (no kernel reads it); its clipping scratch one member's gamma (dropout's its width)
  const whole = { ...b.base, family: 'norm' as const, activation: kind, order: [0] };
  if (kind === 'dropout') {
    const drawsAt = b.draws(n * batch * whole.width);
    return { ...whole, norm: kind, drawsAt, cells: 1, keys: [`${whole.op.name}.rate`], clipFloats: whole.width };
  }
  // batchnorm of an image: its regions sized as B*H*W rows of C (s: one per member and channel)
  const cells = cellsOf(kind, whole.op.shape);
  const l = perCell(whole, cells);
  batch *= cells;
  const own = { width: whole.width, inWidth: whole.inWidth, cells, clipFloats: l.width };
  const dAt = b.acts(n * batch * l.width);
  const sAt = b.acts(n * (kind === 'layernorm' ? batch : l.width));
  const [gamma, beta] = [b.param('gamma'), b.param('beta')];
  if (kind === 'layernorm') return { ...l, ...own, norm: kind, dAt, sAt, gamma, beta, keys: [`${l.op.name}.epsilon`] };
  return { ...l, ...own, norm: kind, dAt, sAt, gamma, beta, movingMean: b.param('moving_mean'), movingVariance: b.param('moving_variance'), keys: [`${l.op.name}.momentum`, `${l.op.name}.epsilon`] };
}

/** The lines naming member m, row b and unit j of invocation idx over [N, B, width]. */
const elementLines = (w: { batch: number }, width: number): string[] => [`  let m = idx / ${u(w.batch * width)};`, `  let b = (idx / ${u(width)}) % ${u(w.batch)};`, `  let j = idx % ${u(width)};`];

/**
 * The workgroup size of TF.js's WebGPU reduction shader (its ReduceProgram) for `count` terms: 64, 256 from
 * 4096 terms, 512 from 32768 (where the device's maxComputeWorkgroupSizeX allows 512, as TF.js asks for the
 * adapter's own: assumed here).
 */
const reduceGroup = (count: number): number => (count >= 32768 ? 512 : count >= 4096 ? 256 : 64);

/**
 * The lines of `let NAME = sum of term(v) for v in [0, count)` in the order of TF.js's WebGPU reduction
 * shader (sum and mean), in one invocation: G partial sums (G its workgroup size), partial t adding terms t,
 * t + G, t + 2G, ... in turn, then halved as its workgroup does, partial t + ceil(size / 2) added to
 * partial t for t < floor(size / 2), until one is left. The op path's norm statistics and gradients
 * are sums of that shader; summing them in its order keeps the fused step's rounding the op path's.
 * `v` names the loop's index (the row b for a sum over the batch, the unit j for one over a row's units).
 */
export function reduceLines(name: string, count: number, term: (v: string) => string, v = 'b'): string[] {
  const group = reduceGroup(count);
  const parts = Math.min(count, group);
  return [
    `  var ${name}_p: array<f32, ${parts}>;`,
    `  for (var t = 0u; t < ${u(parts)}; t++) {`,
    '    var acc = 0.0;',
    `    for (var ${v} = t; ${v} < ${u(count)}; ${v} += ${u(group)}) { acc = acc + ${term(v)}; }`,
    `    ${name}_p[t] = acc;`,
    '  }',
    `  var ${name}_n = ${u(parts)};`,
    `  while (${name}_n > 1u) {`,
    `    let half = ${name}_n / 2u;`,
    `    let interval = (${name}_n + 1u) / 2u;`,
    `    for (var t = 0u; t < half; t++) { ${name}_p[t] = ${name}_p[t] + ${name}_p[t + interval]; }`,
    `    ${name}_n = interval;`,
    '  }',
    `  let ${name} = ${name}_p[0];`,
  ];
}

/** The layer's forward kernels; outside training (an evaluation) dropout passes its input and batchnorm normalises by the running statistics. */
export function normForward<K>(w: NormWriter<K>, l: NormLayer, training = true): K[] {
  if (l.norm === 'batchnorm') return training ? [batchStatistics(w, l), batchnormForward(w, l)] : [batchnormByRunning(w, l)];
  if (l.norm === 'dropout') return [training ? dropoutForward(w, l) : dropoutPass(w, l)];
  return [layernormForward(w, l)];
}

/** dropout outside training: its input as it is. */
function dropoutPass<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`forward ${l.op.name}: dropout outside training, its input as it is, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const body = [...elementLines(w, l.width), `  ${k.buf('acts')}[${u(l.valuesAt)} + idx] = ${w.input(k, l, 'j')};`];
  return k.finish(body.join('\n'));
}

/** batchnorm outside training, as the op path's: ((x - moving_mean) * rsqrt(moving_variance + epsilon)) * gamma + beta, elementwise. */
function batchnormByRunning<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`forward ${l.op.name}: batchnorm by the running statistics, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const at = `m * ${u(l.width)} + j`;
  const param = (p: WgslParam) => `${k.buf(paramBuffer(p.name))}[${at}]`;
  const body = [
    ...elementLines(w, l.width),
    `  let r = inverseSqrt(${param(l.movingVariance!)} + ${w.hyper(k, l.keys[1])});`,
    `  ${k.buf('acts')}[${u(l.valuesAt)} + idx] = ((${w.input(k, l, 'j')} - ${param(l.movingMean!)}) * r) * ${param(l.gamma!)} + ${param(l.beta!)};`,
  ];
  return k.finish(body.join('\n'));
}

/** The layer's backward kernels: dL/d(its input) where it has one (`prev`), then its parameters' updates. */
export function normBackward<K>(w: NormWriter<K>, l: NormLayer, prev: ChainValues | undefined): K[] {
  if (l.norm === 'dropout') return prev ? [dropoutBackward(w, l, prev)] : [];
  const dinput = l.norm === 'batchnorm' ? batchnormDinput : layernormDinput;
  return [...(prev ? [dinput(w, l, prev)] : []), ...normUpdates(w, l, 'gamma'), ...normUpdates(w, l, 'beta')];
}

/** dropout's mask of element idx for member m: (u >= rate) / (1 - rate), in float32 as the op path computes it. */
function maskOf<K>(k: KernelWriter<K>, w: NormWriter<K>, l: NormLayer): string[] {
  const rate = w.hyper(k, l.keys[0]);
  return [`  let rate = ${rate};`, `  let mask = select(0.0, 1.0, ${k.buf('draws')}[${u(l.drawsAt!)} + idx] >= rate) / (1.0 - rate);`];
}

function dropoutForward<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`forward ${l.op.name}: dropout, its mask from the host's draws, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const body = [...elementLines(w, l.width), ...maskOf(k, w, l), `  ${k.buf('acts')}[${u(l.valuesAt)} + idx] = ${w.input(k, l, 'j')} * mask;`];
  return k.finish(body.join('\n'));
}

function dropoutBackward<K>(w: NormWriter<K>, l: NormLayer, prev: ChainValues): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name} through dropout's mask, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const acts = k.buf('acts');
  const body = [`  let m = idx / ${u(w.batch * l.width)};`, ...maskOf(k, w, l), `  ${acts}[${u(prev.gradAt)} + idx] = ${acts}[${u(l.gradAt)} + idx] * mask;`];
  return k.finish(body.join('\n'));
}

/** How a layernorm's row kernels run: per member and row, or on a shared value (a shared layernorm's on the shared input or a shared layer's value) per row, once for every member. */
const perRow = (l: NormLayer): string => (l.op.shared ? "one invocation per row (a shared layer on the shared input: its value is every member's)" : 'one invocation per member and row');

/** layernorm's forward pass of one member's row (an image's cell: the writer counts B*H*W rows), its sums over the row's units in the reduction shader's order. */
function layernormForward<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`forward ${l.op.name}: layernorm over ${l.width} units, ${perRow(l)}`, w.n * w.batch);
  const acts = k.buf('acts');
  const C = l.width;
  const d = (j: string) => `${acts}[${u(l.dAt!)} + idx * ${u(C)} + ${j}]`;
  const gamma = k.buf(paramBuffer(l.gamma!.name));
  const beta = k.buf(paramBuffer(l.beta!.name));
  const body = [
    `  let m = idx / ${u(w.batch)};`,
    `  let b = idx % ${u(w.batch)};`,
    ...reduceLines('sum', C, (j) => w.input(k, l, j), 'j'),
    `  let mean = sum / ${C}.0;`,
    `  for (var j = 0u; j < ${u(C)}; j++) { ${d('j')} = ${w.input(k, l, 'j')} - mean; }`,
    ...reduceLines('sq', C, (j) => `${d(j)} * ${d(j)}`, 'j'),
    `  let s = sq / ${C}.0 + ${w.hyper(k, l.keys[0])};`,
    `  ${acts}[${u(l.sAt!)} + idx] = s;`,
    '  let r = inverseSqrt(s);',
    `  for (var j = 0u; j < ${u(C)}; j++) {`,
    `    ${acts}[${u(l.valuesAt)} + idx * ${u(C)} + j] = (${d('j')} * r) * ${gamma}[${paramAt(l, 'j')}] + ${beta}[${paramAt(l, 'j')}];`,
    '  }',
  ];
  return k.finish(body.join('\n'));
}

/**
 * layernorm's dL/d(input) of one member's row, autodiff's of the op path, as batchnorm's over a row's units:
 * dxhat = dy gamma; dd = dxhat r; dr = sum(dxhat d); rsqrt's gradient dv = dr / (s^1.5 * -2) / C; the
 * mean's gradient from both of tf.moments' and the normalisation's x - mean, dmean = (-sum(dd) +
 * -sum(dv (d 2))) / C; dx = (dd + dv (d 2)) + dmean. Every sum in the reduction shader's order.
 */
function layernormDinput<K>(w: NormWriter<K>, l: NormLayer, prev: ChainValues): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name} through layernorm, ${perRow(l)}`, w.n * w.batch);
  const acts = k.buf('acts');
  const C = l.width;
  const at = (region: number, j = 'j') => `${acts}[${u(region)} + idx * ${u(C)} + ${j}]`;
  const dxh = (j: string) => `(${at(l.gradAt, j)} * ${k.buf(paramBuffer(l.gamma!.name))}[${paramAt(l, j)}])`;
  const body = [
    `  let m = idx / ${u(w.batch)};`,
    `  let s = ${acts}[${u(l.sAt!)} + idx];`,
    '  let r = inverseSqrt(s);',
    ...reduceLines('dr', C, (j) => `${dxh(j)} * ${at(l.dAt!, j)}`, 'j'),
    `  for (var j = 0u; j < ${u(C)}; j++) { ${at(prev.gradAt)} = ${dxh('j')} * r; }`,
    ...reduceLines('sd', C, (j) => at(prev.gradAt, j), 'j'),
    `  let dv = dr / (pow(s, 1.5) * -2.0) / ${C}.0;`,
    ...reduceLines('sq', C, (j) => `dv * (${at(l.dAt!, j)} * 2.0)`, 'j'),
    `  let dmean = (-(sd) + -(sq)) / ${C}.0;`,
    `  for (var j = 0u; j < ${u(C)}; j++) {`,
    `    ${at(prev.gradAt)} = (${at(prev.gradAt)} + dv * (${at(l.dAt!)} * 2.0)) + dmean;`,
    '  }',
  ];
  return k.finish(body.join('\n'));
}

/** Member m's element j of a norm's gamma or beta: a shared layer's one copy, or member m's. */
const paramAt = (l: NormLayer, j: string): string => (l.gamma!.layout === 'shared' ? j : `m * ${u(l.width)} + ${j}`);

/** gamma's or beta's gradient, summed over the member's rows in the reduction shader's order (the op path's sum over the broadcast axes), and its optimizer step (or, where members clip, into scratch first). */
function normUpdates<K>(w: NormWriter<K>, l: NormLayer, which: 'gamma' | 'beta'): K[] {
  const p = l[which]!;
  if (p.layout === 'shared') return sharedNormUpdates(w, l, which);
  const C = l.width;
  const lines = [`  let m = idx / ${u(C)};`, `  let j = idx % ${u(C)};`];
  const index = `m * ${u(C)} + j`;
  const k = w.kernel(`${w.clipped ? 'gradient' : 'update'} ${p.name}: ${w.clipped ? 'summed over the member\'s rows, into scratch for clipnorm' : `its gradient and one optimizer step`}, one invocation per member and element`, w.n * C);
  const acts = k.buf('acts');
  const at = (region: number) => `${acts}[${u(region)} + (m * ${u(w.batch)} + b) * ${u(C)} + j]`;
  // layernorm's s is the row's, batchnorm's the unit's
  const s = l.norm === 'layernorm' ? `${acts}[${u(l.sAt!)} + m * ${u(w.batch)} + b]` : `${acts}[${u(l.sAt!)} + m * ${u(C)} + j]`;
  const term = which === 'beta' ? at(l.gradAt) : `${at(l.gradAt)} * (${at(l.dAt!)} * inverseSqrt(${s}))`;
  const body = [...lines, ...reduceLines('g', w.batch, () => term)];
  if (w.clipped) return [k.finish([...body, ...w.clipped.store(k)].join('\n')), ...w.clipped.kernels({ p, size: C, lines, index })];
  return [k.finish([...body, `  let at = ${index};`, ...w.update(k, p)].join('\n'))];
}

/**
 * A shared layernorm's gamma or beta: its gradient summed over every member's rows as one batch, row r of
 * [N*B, C] (on a shared value the batch's B once: the writer's N is 1), in the reduction shader's order (the
 * op path folds the members' rows into one batch and sums over it once), then one step with the file's
 * hyperparameters (src/wgsl/shared.ts).
 */
function sharedNormUpdates<K>(w: NormWriter<K>, l: NormLayer, which: 'gamma' | 'beta'): K[] {
  const C = l.width;
  return w.shared!(l[which]!, C, (k) => {
    const acts = k.buf('acts');
    const at = (region: number) => `${acts}[${u(region)} + r * ${u(C)} + j]`;
    const term = which === 'beta' ? at(l.gradAt) : `${at(l.gradAt)} * (${at(l.dAt!)} * inverseSqrt(${acts}[${u(l.sAt!)} + r]))`;
    return { lines: ['  let j = idx;', ...reduceLines('g', w.n * w.batch, () => term, 'r')], helper: '' };
  });
}

/**
 * batchnorm's batch statistics of one member's unit j: the mean over its rows (summed in the order of TF.js's reduction shader, / B),
 * d = x - mean (kept), the variance (d^2 summed, / B), s = variance + epsilon (kept), and the running
 * statistics moved: moving - (moving - batch) * (1 - momentum).
 */
function batchStatistics<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`statistics ${l.op.name}: batchnorm's batch mean and variance and its running statistics, one invocation per member and unit`, w.n * l.width);
  const acts = k.buf('acts');
  const C = l.width;
  const x = w.input(k, l, 'j');
  const d = `${acts}[${u(l.dAt!)} + (m * ${u(w.batch)} + b) * ${u(C)} + j]`;
  const mm = `${k.buf(paramBuffer(l.movingMean!.name))}[m * ${u(C)} + j]`;
  const mv = `${k.buf(paramBuffer(l.movingVariance!.name))}[m * ${u(C)} + j]`;
  const body = [
    `  let m = idx / ${u(C)};`,
    `  let j = idx % ${u(C)};`,
    ...reduceLines('sum', w.batch, () => x),
    `  let mean = sum / ${w.batch}.0;`,
    `  for (var b = 0u; b < ${u(w.batch)}; b++) { ${d} = ${x} - mean; }`,
    ...reduceLines('sq', w.batch, () => `${d} * ${d}`),
    `  let variance = sq / ${w.batch}.0;`,
    `  ${acts}[${u(l.sAt!)} + idx] = variance + ${w.hyper(k, l.keys[1])};`,
    `  let keep = 1.0 - ${w.hyper(k, l.keys[0])};`,
    `  ${mm} = ${mm} - (${mm} - mean) * keep;`,
    `  ${mv} = ${mv} - (${mv} - variance) * keep;`,
  ];
  return k.finish(body.join('\n'));
}

/** batchnorm's y = (d * rsqrt(s)) * gamma + beta, elementwise. */
function batchnormForward<K>(w: NormWriter<K>, l: NormLayer): K {
  const k = w.kernel(`forward ${l.op.name}: batchnorm by the batch's statistics, one invocation per member, row and unit`, w.n * w.batch * l.width);
  const acts = k.buf('acts');
  const C = l.width;
  const at = `m * ${u(C)} + j`;
  const body = [
    ...elementLines(w, C),
    `  let r = inverseSqrt(${acts}[${u(l.sAt!)} + ${at}]);`,
    `  ${acts}[${u(l.valuesAt)} + idx] = (${acts}[${u(l.dAt!)} + idx] * r) * ${k.buf(paramBuffer(l.gamma!.name))}[${at}] + ${k.buf(paramBuffer(l.beta!.name))}[${at}];`,
  ];
  return k.finish(body.join('\n'));
}

/**
 * batchnorm's dL/d(input) of one member's unit j over its rows, autodiff's of the op path: dxhat = dy gamma;
 * dd = dxhat r; dr = sum(dxhat d); rsqrt's gradient dv = dr / (s^1.5 * -2) / B; the mean's gradient from
 * both of tf.moments' and the normalisation's x - mean, dmean = (-sum(dd) + -sum(dv (d 2))) / B;
 * dx = (dd + dv (d 2)) + dmean. Every sum in the order of TF.js's reduction shader (reduceLines).
 */
function batchnormDinput<K>(w: NormWriter<K>, l: NormLayer, prev: ChainValues): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name} through batchnorm, one invocation per member and unit`, w.n * l.width);
  const acts = k.buf('acts');
  const C = l.width;
  const at = (region: number) => `${acts}[${u(region)} + (m * ${u(w.batch)} + b) * ${u(C)} + j]`;
  const body = [
    `  let m = idx / ${u(C)};`,
    `  let j = idx % ${u(C)};`,
    `  let s = ${acts}[${u(l.sAt!)} + idx];`,
    '  let r = inverseSqrt(s);',
    `  let gamma = ${k.buf(paramBuffer(l.gamma!.name))}[idx];`,
    ...reduceLines('dr', w.batch, () => `(${at(l.gradAt)} * gamma) * ${at(l.dAt!)}`),
    `  for (var b = 0u; b < ${u(w.batch)}; b++) { ${at(prev.gradAt)} = (${at(l.gradAt)} * gamma) * r; }`,
    ...reduceLines('sd', w.batch, () => at(prev.gradAt)),
    `  let dv = dr / (pow(s, 1.5) * -2.0) / ${w.batch}.0;`,
    // the squared deviations' share of the mean's gradient (tf.moments' x - mean), after the normalisation's
    ...reduceLines('sq', w.batch, () => `dv * (${at(l.dAt!)} * 2.0)`),
    `  let dmean = (-(sd) + -(sq)) / ${w.batch}.0;`,
    `  for (var b = 0u; b < ${u(w.batch)}; b++) {`,
    `    ${at(prev.gradAt)} = (${at(prev.gradAt)} + dv * (${at(l.dAt!)} * 2.0)) + dmean;`,
    '  }',
  ];
  return k.finish(body.join('\n'));
}
