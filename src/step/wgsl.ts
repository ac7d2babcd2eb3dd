// The generated training step's second target: WGSL compute kernels for WebGPU, for graphs of the layer
// kinds whose `wgsl` rule covers them (src/layers/: dense, conv2d, the pools, flatten, dropout, the norms,
// add, concat, the activation layers), with `from:` branches and `shared` layers (a layer on a shared
// layer's value there is computed once, as for one member). The same planned step as the WebAssembly one
// (forward, loss, backward, optimizer, each member's loss and metrics), as one kernel per layer and
// direction, dispatched one after another in one compute pass on TF.js's own device, reading and writing
// the population's own buffers in place:
//
//   forward_l    one invocation per (member, row, unit): a_l = f(a_{l-1} · kernel + bias)
//   loss         one invocation per member: its batch-mean loss, its metrics and dL/d(output)
//   dinput_l     one invocation per (member, row, input unit): dL/da_{l-1} = dz_l · kernel^T (before the update)
//   update_p     one invocation per element of a member's parameter: its gradient, summed over the rows, and the optimizer step
//
// This file walks the ensemble's ops and calls the `wgsl` rule of each op's kind (src/wgsl/rule.ts): the
// rule says why it does not cover an op, builds its layer of the chain and writes its kernels with the
// family helpers of src/wgsl/ (dense.ts, conv.ts, norm.ts, graph.ts, shared.ts). What stays here is what
// reads the ensemble IR and the run's configuration: which op reads what, the regions of `acts` and
// `draws`, where each gradient goes (a value read twice, a shared layer's value folded over the members),
// the hyperparameter rows, and the text every layer shares: the activations' and their gradients', the
// optimizer's update, clipping's kernels and the loss kernel. Where any member clips its gradients
// (clipnorm), each parameter's update is three kernels: its gradient into scratch, each member's norm of
// it (one invocation per member, summed in order), and the clipped gradient's optimizer step.
//
// Members and rows lie across invocations and workgroups; every sum is one invocation's loop, in a fixed
// order (fma, as TF.js's matMul shaders accumulate), so a member's numbers do not depend on N or on its
// position, and nothing is summed across members (but a shared layer's gradient). N and the batch size are constants of the code: a
// halved population or a short last batch gets kernels of its own (the runtime caches them).
import type { EnsembleIR, WideOp } from '../ensemble/ensemble-ir.js';
import { optimizerHyper, optimizerSlots } from '../vocabulary/optimizers.js';
import { gradReadsZ, kernelActivations, LEAKY_RELU_ALPHA } from '../math/activations.js';
import { activationGradText, activationText, literal, lossElementText, updateText } from '../wgsl/render.js';
import { elementLoss, EPS, ONE_MINUS_EPS, type ElementLoss } from '../math/losses.js';
import { layerKind } from '../layers/registry.js';
import { hasRule } from '../layers/layer-kind.js';
import { whyNotVocabulary, type RunStepConfig } from './plan.js';
import { size, type ChainBase, type LayerInput, type WgslParam } from '../wgsl/chain.js';
import { KernelText, lit, type WgslKernel, paramBuffer, slotBuffer, metricBuffer } from '../wgsl/kernel-text.js';
import { inputAt, kernelIndex, slopeOf, type Element } from '../wgsl/dense.js';
import { gradientSum } from '../wgsl/graph.js';
import { membersSum, sharedParamUpdates, type SharedWriter } from '../wgsl/shared.js';
import type { ChainLayer, StepWriter, Target, WgslLayerRule, WgslRule, Writers } from '../wgsl/rule.js';

export { WORKGROUP, type WgslKernel } from '../wgsl/kernel-text.js';

export interface WgslStep {
  kernels: WgslKernel[];
  /** the per-member hyperparameter rows of the `hyper` buffer, [key][N], in order */
  hyper: string[];
  /** floats of the scratch buffer `acts`: every layer's values and their gradients, [N, B, width] each */
  actsFloats: number;
  /** each dropout layer's uniform draws of a step in the `draws` buffer ([N, B, width] from `at`), which the host writes */
  draws: { op: string; at: number; width: number }[];
  drawsFloats: number;
  n: number;
  batch: number;
}

/** The WGSL rule of a layer kind, or why it has none. */
function ruleOf(kind: string): { rule: WgslRule } | { why: string } {
  const rule = layerKind(kind)?.wgsl;
  if (!rule) return { why: `the ${kind} layer` };
  return hasRule(rule) ? { rule } : { why: `the ${kind} layer (${rule.unsupported})` };
}

/** The rule of an op the step covers (whyNotWgsl said so). */
function coveredRule(kind: string): WgslRule {
  const r = ruleOf(kind);
  if ('why' in r) throw new Error(`internal error: the WGSL step does not cover ${r.why}`);
  return r.rule;
}

/** Why the WGSL step does not cover this configuration, or undefined where it does. */
export function whyNotWgsl(cfg: RunStepConfig): string | undefined {
  const e = cfg.ensemble;
  if (e.lowering !== 'grouped') return `the ${e.lowering} lowering (the WGSL step is built for grouped)`;
  const vocabulary = whyNotVocabulary(cfg);
  if (vocabulary) return vocabulary;
  if (!e.ops[0].shared) return "members' own input rows (a split)";
  const first = e.ops[1] && ruleOf(e.ops[1].op);
  if (e.ops[0].shape.length !== 1 && !(first && 'rule' in first && first.rule.readsImages)) return `an input of shape [${e.ops[0].shape.join(', ')}]`;
  const readers = new Map<number, number>();
  for (const op of e.ops) for (const i of op.inputs) readers.set(i, (readers.get(i) ?? 0) + 1);
  for (const op of e.ops.slice(1)) {
    const r = ruleOf(op.op);
    if ('why' in r) return r.why;
    // a value nothing reads has no gradient (the op path's autodiff leaves its layers' weights without one)
    if (op.id !== e.model.output && !readers.get(op.id)) return `${op.name}'s value, which no layer reads`;
    const context = { inputs: op.inputs.map((i) => e.ops[i]), onInput: valueOf(e, op.inputs[0]).id === 0, activations: kernelActivations };
    // an alias's (a flatten's) value is its input's: the op path sums a gradient of each apart
    const readTwice = r.rule.alias && (readers.get(op.inputs[0]) ?? 0) > 1 ? `${op.name}'s input, read twice` : undefined;
    const why = whyNotOnShared(e, op, r.rule) ?? readTwice ?? r.rule.whyNot?.(op, context);
    if (why) return why;
  }
  for (const p of e.params) {
    const kind = e.ops.find((op) => op.name === p.op)!.op;
    if (p.layout === 'shared' && !coveredRule(kind).sharedParams) return `the shared ${kind} layer ${p.op}`;
    if (p.layout !== 'columns' && p.layout !== 'stacked' && p.layout !== 'shared') return `the ${p.layout} layout of ${p.name}`;
  }
  if (e.model.output !== e.ops.length - 1) return 'an output that is not the last layer';
  if (e.ops[e.model.output].shared) return "a shared layer's value on the shared input as the output";
  return undefined;
}

const isAlias = (kind: string): boolean => {
  const r = ruleOf(kind);
  return 'rule' in r && !!r.rule.alias;
};

/** The op whose value an op's value is: itself, or through flattens (an alias moves nothing) the op it flattens. */
function valueOf(e: EnsembleIR, id: number): WideOp {
  let op = e.ops[id];
  while (op.id > 0 && isAlias(op.op)) op = e.ops[op.inputs[0]];
  return op;
}

/**
 * Why the WGSL step does not run `op` on a shared layer's value (computed once on the shared input), or
 * undefined where it does: a dense or conv2d reads it (their input's gradient sums the members'), a
 * layer computed once itself (a shared layer, a pool or activation), or a member's norm, dropout or
 * leaky_relu(alpha) on a flat one (each member's gradient of it summed).
 */
function whyNotOnShared(e: EnsembleIR, op: WideOp, rule: WgslRule): string | undefined {
  const operand = op.inputs.find((i) => valueOf(e, i).id > 0 && valueOf(e, i).shared);
  if (operand === undefined || rule.onShared === 'sums' || op.shared) return undefined;
  const value = valueOf(e, operand);
  if (rule.onShared === 'never') return `${op.name} on the shared layer ${value.name}'s value (the WGSL step merges members' own values and the shared input)`;
  // the op path's broadcast of a shared image to every member is a Tile of rank 5, which has no gradient in TF.js
  const shape = e.ops[operand].shape;
  if (shape.length !== 1) return `${op.name} on the shared layer ${value.name}'s values of shape [${shape.join(', ')}] (the op path's broadcast of them, a Tile of rank 5, has no gradient in TF.js)`;
  return undefined;
}

/** Each member's gradient of a shared layer's value [N, B, width] at `from`, to be summed over the members into `into`'s gradient. */
interface Fold {
  from: number;
  into: Target;
}

/** The chain's layers (each with its kind's rule), with each one's gradient targets (by operand; none for the shared input) and the extra gradient regions of the values read more than once. */
interface Layers {
  layers: ChainLayer[];
  rules: Map<ChainLayer, WgslLayerRule>;
  targets: Map<ChainLayer, (Target | undefined)[]>;
  extra: Map<ChainLayer, number[]>;
  /** a member's layer on a shared layer's value: the regions of its members' gradients, summed over the members into the value's */
  folds: Map<ChainLayer, Fold[]>;
  actsFloats: number;
  drawsFloats: number;
}

/** The chain's layers, each built by its kind's rule; an alias (flatten) is none (a member's example is row-major already: the next layer reads its input as it lies). */
function layersOf(e: EnsembleIR, n: number, batch: number): Layers {
  let at = 0;
  let drawsAt = 0;
  const layers: ChainLayer[] = [];
  const rules = new Map<ChainLayer, WgslLayerRule>();
  // each op's value: a layer's, or the shared input's (undefined); an alias's is its input's
  const valueOf = new Map<number, ChainLayer | undefined>([[0, undefined]]);
  const sources = new Map<ChainLayer, (ChainLayer | undefined)[]>();
  const inputOf = (src: ChainLayer | undefined): LayerInput => (!src ? { buffer: 'x' } : src.op.shared ? { buffer: 'acts', at: src.valuesAt, shared: true } : { buffer: 'acts', at: src.valuesAt });
  for (const op of e.ops.slice(1)) {
    const rule = coveredRule(op.op);
    if (rule.alias) {
      valueOf.set(op.id, valueOf.get(op.inputs[0]));
      continue;
    }
    const from = op.inputs.map((i) => valueOf.get(i));
    const params: WgslParam[] = e.params.filter((p) => p.op === op.name);
    const width = size(op.shape);
    // a shared layer's value on the shared input is every member's: [B, width], once
    const members = op.shared ? 1 : n;
    const rows = members * batch;
    const base: ChainBase = { op, inWidth: size(e.ops[op.inputs[0]].shape), width, input: inputOf(from[0]), valuesAt: at, gradAt: at + rows * width };
    at = base.gradAt + rows * width;
    const made = rule.layer({
      base,
      param: (name) => params.find((p) => p.name.endsWith(`/${name}`)),
      inputs: from.map((src, i) => ({ input: inputOf(src), shape: e.ops[op.inputs[i]].shape })),
      members,
      batch,
      acts: (floats) => (at += floats) - floats,
      draws: (floats) => (drawsAt += floats) - floats,
    });
    layers.push(made);
    rules.set(made, rule);
    valueOf.set(op.id, made);
    sources.set(made, from);
  }
  // the gradients' targets, reader after reader from the loss (the op path's backward order): a value's
  // first reader writes its gradient region, each later one a region of its own, added up before the value's backward pass
  const targets = new Map<ChainLayer, (Target | undefined)[]>();
  const extra = new Map<ChainLayer, number[]>();
  const folds = new Map<ChainLayer, Fold[]>();
  for (const reader of [...layers].reverse()) {
    const from = sources.get(reader)!;
    const t: (Target | undefined)[] = from.map(() => undefined);
    for (const i of reader.order) {
      const src = from[i];
      if (!src) continue;
      let target: Target = src;
      if (!extra.has(src)) extra.set(src, []);
      else {
        extra.get(src)!.push(at);
        target = { ...src, gradAt: at };
        at += (src.op.shared ? 1 : n) * batch * src.width;
      }
      // a member's layer without a kernel (a norm, dropout, leaky_relu(alpha)) on a shared layer's value: its
      // gradient each member's [N, B, width] in a region of its own, then summed over the members into the
      // value's (the op path's broadcast of the value to every member, whose gradient adds member after member)
      if (src.op.shared && !reader.op.shared && !reader.kernel) {
        folds.set(reader, [...(folds.get(reader) ?? []), { from: at, into: target }]);
        target = { ...target, gradAt: at };
        at += n * batch * src.width;
      }
      t[i] = target;
    }
    targets.set(reader, t);
  }
  return { layers, rules, targets, extra, folds, actsFloats: Math.max(at, 1), drawsFloats: drawsAt };
}

/**
 * The WGSL step of a covered configuration for N members and batches of `batch` rows; with `training`
 * false, an evaluation: the forward kernels in inference mode (dropout passes its input, batchnorm
 * normalises by the running statistics) and the loss kernel's losses and metrics, nothing stepped.
 */
export function generateWgslStep(cfg: RunStepConfig & { clipping: boolean }, n: number, batch: number, training = true): WgslStep {
  const e = cfg.ensemble;
  const { layers, rules, targets, extra, folds, actsFloats: valueFloats, drawsFloats } = layersOf(e, n, batch);
  // the optimizer's hyperparameters, clipnorm's, then the layers' own (a leaky_relu layer's alpha, dropout's rate, a norm's momentum and epsilon), each a row of N
  const stepKeys = [...optimizerHyper[cfg.optimizer], ...(cfg.clipping ? ['clip'] : [])];
  // the shared layers step once with the file's values (`shared:KEY`, a row of N like the others, read at 0)
  const sharedKeys = e.params.some((p) => p.layout === 'shared') ? stepKeys.map((key) => `shared:${key}`) : [];
  const hyper = [...stepKeys, ...layers.flatMap((l) => l.keys), ...sharedKeys];
  // clipping: one scratch region after the layers' values, for a parameter's gradient [N, size] and its norms [N], reused by each in turn
  const largest = Math.max(...layers.map((l) => l.clipFloats));
  const clip = cfg.clipping ? { gradsAt: valueFloats, normAt: valueFloats + n * largest } : undefined;
  const actsFloats = clip ? clip.normAt + n : valueFloats;
  const ctx: Ctx = { n, batch, stride: n, hyper, optimizer: cfg.optimizer, slots: optimizerSlots[cfg.optimizer], clip };
  const w = writersOf(ctx);
  const kernels: WgslKernel[] = layers.flatMap((l) => rules.get(l)!.forward(w, l, training));
  kernels.push(lossKernel(ctx, layers[layers.length - 1], cfg.loss, cfg.metrics));
  if (!training) return { kernels, hyper, actsFloats, draws: [], drawsFloats: 0, n, batch };
  for (let i = layers.length - 1; i >= 0; i--) {
    const l = layers[i];
    // a value read more than once: its readers' gradients added up first
    const more = extra.get(l) ?? [];
    if (more.length) kernels.push(gradientSum(w.of(l), l, more));
    kernels.push(...rules.get(l)!.backward(w, l, targets.get(l)!));
    // a member's layer on a shared layer's value: its members' gradients of the value summed
    for (const fold of folds.get(l) ?? []) kernels.push(membersSum(w.all(), fold.into, fold.from));
  }
  const draws = layers.flatMap((l) => (l.drawsAt !== undefined ? [{ op: l.op.name, at: l.drawsAt, width: l.width }] : []));
  return { kernels, hyper, actsFloats, draws, drawsFloats, n, batch };
}

/** The writers the rules write their kernels with: for N members and, for a shared layer's value on the shared input, for one; of B rows, or of B*cells (rows of an image's channels). */
function writersOf(ctx: Ctx): Writers {
  // a shared layer's value on the shared input: computed once, as for one member
  const one: Ctx = { ...ctx, n: 1 };
  const writer = (c: Ctx, cells = 1) => stepWriter(cells === 1 ? c : { ...c, batch: c.batch * cells });
  return {
    all: (cells) => writer(ctx, cells),
    of: (l, cells) => writer(l.op.shared ? one : ctx, cells),
    shared: sharedWriter(ctx),
  };
}

/** What the family helpers (src/wgsl/) write with: this file's kernel text, activations, hyperparameters, inputs, dz helper, optimizer rule and clipping. */
function stepWriter(ctx: Ctx): StepWriter {
  const clip = ctx.clip!;
  return {
    n: ctx.n,
    batch: ctx.batch,
    optimizer: ctx.optimizer,
    kernel: (name, invocations) => new KernelText(name, invocations),
    // a dense layer's or conv's leaky_relu is TF's fixed slope (a leaky_relu layer's is its own: `alpha`)
    activate: (name: string, z: string, alpha?: string) => activate(name, z, alpha ?? (name === 'leaky_relu' ? lit(LEAKY_RELU_ALPHA) : '')),
    activationFns,
    dz: (k, l: ChainLayer) => dzHelper(k, ctx, l),
    update: (k, p) => updateLines(k, ctx, p),
    clipped: ctx.clip && {
      store: (k) => [`  ${k.buf('acts')}[${clip.gradsAt}u + idx] = g;`],
      kernels: (el) => [normKernel(ctx, el, clip), clippedUpdateKernel(ctx, el, clip)],
    },
    shared: (p, size, build) => sharedParamUpdates(sharedWriter(ctx), p, size, build),
    hyper: (k, key) => hyperAt(k, ctx, key),
    input: (k, l, unit) => inputAt(k, ctx.batch, l, unit),
  };
}

/** What the shared layers' kernels (src/wgsl/shared.ts) write with: this file's kernel text, input, dz, kernel index and optimizer rule. */
function sharedWriter(ctx: Ctx): SharedWriter<WgslKernel> {
  return {
    n: ctx.n,
    batch: ctx.batch,
    optimizer: ctx.optimizer,
    clip: ctx.clip,
    kernel: (name, invocations) => new KernelText(name, invocations),
    input: (k, l) => inputAt(k, ctx.batch, l),
    dz: (k, l: ChainLayer) => dzHelper(k, ctx, l),
    kernelIndex: (l) => kernelIndex(ctx.n, l),
    fileHyper: (k, key) => `${k.buf('hyper')}[${ctx.hyper.indexOf(`shared:${key}`) * ctx.stride}u]`,
    step: (at) => updateText(ctx.optimizer, at),
  };
}

interface Ctx {
  /** the members the kernel runs for: N, or 1 for a shared layer's value on the shared input (one for every member) */
  n: number;
  /** N: the length of a row of `hyper` */
  stride: number;
  batch: number;
  hyper: string[];
  optimizer: string;
  slots: string[];
  /** where any member clips its gradients: the scratch of one parameter's gradient [N, size] and its members' norms [N] */
  clip?: { gradsAt: number; normAt: number };
}

/** Member m's value of a hyperparameter key (a row of N in `hyper`). */
const hyperAt = (k: Pick<KernelText, 'buf'>, ctx: Ctx, key: string): string => `${k.buf('hyper')}[${ctx.hyper.indexOf(key) * ctx.stride}u + m]`;

/** The activation f(z) (src/math/activations.ts's rule, src/wgsl/render.ts's text). */
function activate(name: string, z: string, alpha = ''): string {
  return activationText(name, z, alpha).value;
}

/** The WGSL functions the forward pass of an activation calls. */
function activationFns(name: string): string {
  return activationText(name, 'z', 'alpha').helpers.join('\n');
}


/** A WGSL function dz(m, b, j) of the layer: dL/da times f'(z), recomputed wherever it is read (the same code, the same value). */
function dzHelper(k: Pick<KernelText, 'buf'>, ctx: Ctx, l: ChainLayer): string {
  const acts = k.buf('acts');
  const at = `(m * ${ctx.batch}u + b) * ${l.width}u + j`;
  if (l.activation === 'softmax') {
    // autodiff's softmax gradient: dy y - sum(dy y) y, the row's sum in order (a conv's: the F channels of j's cell)
    const f = l.family === 'spatial' ? l.f : l.width;
    const row = l.family === 'spatial' ? `(m * ${ctx.batch}u + b) * ${l.width}u + j / ${f}u * ${f}u` : `(m * ${ctx.batch}u + b) * ${l.width}u`;
    return [
      `fn dz(m: u32, b: u32, j: u32) -> f32 {`,
      '  var s = 0.0;',
      `  for (var c = 0u; c < ${f}u; c++) {`,
      `    s = s + ${acts}[${l.gradAt}u + ${row} + c] * ${acts}[${l.valuesAt}u + ${row} + c];`,
      '  }',
      `  let a = ${acts}[${l.valuesAt}u + ${at}];`,
      `  return ${acts}[${l.gradAt}u + ${at}] * a - s * a;`,
      '}',
    ].join('\n');
  }
  // z: a dense layer's saved pre-activation, an activation layer's input
  const z = !gradReadsZ(l.activation) ? undefined : l.kernel ? `${acts}[${l.zAt}u + ${at}]` : inputAt(k, ctx.batch, l, 'j');
  const grad = activationGradText(l.activation, { da: 'd', a: 'a', ...(z ? { z: 'z' } : {}), ...(l.alpha ? { alpha: slopeOf({ hyper: (k2, key) => hyperAt(k2, ctx, key) }, k, l) } : {}) });
  return [
    ...grad.helpers,
    `fn dz(m: u32, b: u32, j: u32) -> f32 {`,
    `  let a = ${acts}[${l.valuesAt}u + ${at}];`,
    `  let d = ${acts}[${l.gradAt}u + ${at}];`,
    ...(z ? [`  let z = ${z};`] : []),
    `  return ${grad.value};`,
    '}',
  ].join('\n');
}

/** Clipping's second kernel: each member's norm of its gradient of the parameter (Keras' clipnorm: per member and tensor), summed in order. */
function normKernel(ctx: Ctx, { p, size }: Pick<Element, 'p' | 'size'>, clip: NonNullable<Ctx['clip']>): WgslKernel {
  const k = new KernelText(`norm ${p.name}: each member's norm of its gradient, one invocation per member`, ctx.n);
  const acts = k.buf('acts');
  const body = [
    '  let m = idx;',
    '  var s = 0.0;',
    `  for (var e = 0u; e < ${size}u; e++) {`,
    `    let v = ${acts}[${clip.gradsAt}u + m * ${size}u + e];`,
    '    s = s + v * v;',
    '  }',
    `  ${acts}[${clip.normAt}u + m] = sqrt(s);`,
  ].join('\n');
  return k.finish(body);
}

/**
 * Clipping's third kernel: the gradient from the scratch, clipped, and the optimizer step, element by
 * element (`lines` name member m and the element's indices from idx; `index` is its place in the fused
 * tensor). A dense parameter's and a conv's alike.
 */
function clippedUpdateKernel(ctx: Ctx, { p, size, lines, index }: Element, clip: NonNullable<Ctx['clip']>): WgslKernel {
  const k = new KernelText(`update ${p.name}: its clipped gradient and one ${ctx.optimizer} step, one invocation per member and element`, ctx.n * size);
  // Keras' clipnorm: g * clip / norm where the member's norm passes its clip (Infinity where it has none)
  const acts = k.buf('acts');
  const body = [
    ...lines,
    `  let g0 = ${acts}[${clip.gradsAt}u + idx];`,
    `  let norm = ${acts}[${clip.normAt}u + m];`,
    `  let limit = ${hyperAt(k, ctx, 'clip')};`,
    '  let g = select(g0, g0 * (limit / norm), norm > limit);',
    `  let at = ${index};`,
    ...updateLines(k, ctx, p),
  ];
  return k.finish(body.join('\n'));
}

/** The optimizer's step of member m's element `at` of p, from its gradient `g`. */
function updateLines(k: Pick<KernelText, 'buf'>, ctx: Ctx, p: WgslParam): string[] {
  const h = (key: string) => hyperAt(k, ctx, key);
  const w = k.buf(paramBuffer(p.name));
  const slot = (s: string) => k.buf(slotBuffer(p.name, s));
  return updateText(ctx.optimizer, { w: `${w}[at]`, slot: (s) => `${slot(s)}[at]`, h });
}

/** The loss of one member: its batch mean, dL/d(output) into the output layer's gradient, and its metrics. */
function lossKernel(ctx: Ctx, out: ChainLayer, lossConfig: RunStepConfig['loss'], metrics: readonly string[]): WgslKernel {
  const loss = lossConfig.name;
  const k = new KernelText(`loss ${loss}${metrics.length ? ` and ${metrics.join(', ')}` : ''}: one invocation per member`, ctx.n);
  const K = out.width;
  const acts = k.buf('acts');
  const y = k.buf('y');
  const sparse = loss === 'sparse_categorical_crossentropy';
  // the label of output j of row b: class indices [B, 1] one-hot under the sparse loss
  const label = (j: string) => (sparse ? `select(0.0, 1.0, i32(${y}[b]) == i32(${j}))` : `${y}[b * ${K}u + ${j}]`);
  const p = (j: string) => `${acts}[${out.valuesAt}u + base + ${j}]`;
  const element = elementLoss(loss, lossConfig.args);
  const grad = `${acts}[${out.gradAt}u + base + j]`;
  const lines = [
    '  let m = idx;',
    '  var total = 0.0;',
    ...metrics.map((name) => `  var sum_${name} = 0.0;`),
    `  for (var b = 0u; b < ${ctx.batch}u; b++) {`,
    `    let base = (m * ${ctx.batch}u + b) * ${K}u;`,
    ...(!element ? crossEntropyRow(ctx, K, p, label, grad) : elementRow(ctx, loss, element, K, p, label, grad)),
    ...metricLines(metrics, K, p, label, sparse ? `u32(${y}[b])` : undefined),
    '  }',
    `  ${k.buf('losses')}[m] = total / ${lit(ctx.batch)};`,
    ...metrics.map((name) => `  ${k.buf(metricBuffer(name))}[m] = sum_${name} / ${name === 'accuracy' ? lit(ctx.batch) : `(${lit(ctx.batch)} * ${lit(K)})`};`),
  ];
  return k.finish(lines.join('\n'));
}

/** An elementwise loss over one row (mse, mae, huber, binary cross-entropy): each element's term and gradient, the row's mean added to `total`. */
function elementRow(ctx: Ctx, loss: string, element: ElementLoss, K: number, p: (j: string) => string, label: (j: string) => string, grad: string): string[] {
  // the gradient of the two means: 1 / (B K) in one division where the op path writes the gradient out (binary cross-entropy), (1 / B) / K where autodiff takes one mean after the other
  const scale = element.scale === 'once' ? Math.fround(1 / (ctx.batch * K)) : Math.fround(Math.fround(1 / ctx.batch) / K);
  return [
    '    var row = 0.0;',
    `    for (var j = 0u; j < ${K}u; j++) {`,
    `      let p = ${p('j')};`,
    `      let y = ${label('j')};`,
    ...lossElementText(loss, element, literal(scale)).map((line) => `      ${line}`),
    `      ${grad} = grad;`,
    '    }',
    `    total = total + row / ${lit(K)};`,
  ];
}

/**
 * Categorical cross-entropy of one row, as autodiff of the op path computes it (src/wasm/losses.ts'
 * crossEntropyRow): q = p / sum(p) clipped to [eps, 1 - eps], -sum(y log q), and its gradient through the
 * normalisation, for the batch mean.
 */
function crossEntropyRow(ctx: Ctx, K: number, p: (j: string) => string, label: (j: string) => string, grad: string): string[] {
  return [
    '    var s = 0.0;',
    `    for (var j = 0u; j < ${K}u; j++) { s = s + ${p('j')}; }`,
    '    let s2 = s * s;',
    '    var row = 0.0;',
    '    var dot = 0.0;',
    `    for (var j = 0u; j < ${K}u; j++) {`,
    `      let p = ${p('j')};`,
    `      let y = ${label('j')};`,
    '      let raw = p / s;',
    `      let q = min(max(raw, ${lit(EPS)}), ${lit(ONE_MINUS_EPS)});`,
    '      row = row + y * log(q);',
    `      let g = select(0.0, y * (0.0 - ${lit(1 / ctx.batch)}) / q, raw == q);`,
    `      ${grad} = g;`,
    '      dot = dot + g * (p / s2);',
    '    }',
    `    for (var j = 0u; j < ${K}u; j++) { ${grad} = ${grad} / s + (0.0 - dot); }`,
    '    total = total + (0.0 - row);',
  ];
}

/** The row's terms of each metric: accuracy (one output thresholded, else the first largest against the label's), squared and absolute errors. */
function metricLines(metrics: readonly string[], K: number, p: (j: string) => string, label: (j: string) => string, classIndex?: string): string[] {
  const lines: string[] = [];
  const errors = metrics.filter((name) => name !== 'accuracy');
  if (errors.length) {
    lines.push(`    for (var j = 0u; j < ${K}u; j++) {`, `      let d = ${p('j')} - ${label('j')};`);
    for (const name of errors) lines.push(`      sum_${name} = sum_${name} + ${name === 'mse' ? 'd * d' : 'abs(d)'};`);
    lines.push('    }');
  }
  if (!metrics.includes('accuracy')) return lines;
  if (K === 1 && !classIndex) return [...lines, `    sum_accuracy = sum_accuracy + select(0.0, 1.0, (${p('0u')} > 0.5) == (${label('0u')} > 0.5));`];
  lines.push(`    var bp = ${p('0u')};`, '    var ip = 0u;');
  if (!classIndex) lines.push(`    var by = ${label('0u')};`, '    var iy = 0u;');
  lines.push(`    for (var j = 1u; j < ${K}u; j++) {`, `      let pj = ${p('j')};`, '      if (pj > bp) { bp = pj; ip = j; }');
  if (!classIndex) lines.push(`      let yj = ${label('j')};`, '      if (yj > by) { by = yj; iy = j; }');
  lines.push('    }', `    sum_accuracy = sum_accuracy + select(0.0, 1.0, ip == ${classIndex ?? 'iy'});`);
  return lines;
}
