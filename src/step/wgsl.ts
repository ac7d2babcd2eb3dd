// The generated training step's second target: WGSL compute kernels for WebGPU, for graphs of dense
// layers, with conv2d, maxpool2d, avgpool2d and flatten before them (src/step/wgsl-conv.ts), add, concat
// and `from:` branches (src/step/wgsl-graph.ts) and shared dense, conv2d and layernorm layers (src/step/wgsl-shared.ts;
// a layer on a shared layer's value there is computed once, as for one member). The same
// planned step as the WebAssembly one (forward, loss, backward, optimizer, each member's loss and
// metrics), as one kernel per layer and direction, dispatched one after another in one compute
// pass on TF.js's own device, reading and writing the population's own buffers in place:
//
//   forward_l    one invocation per (member, row, unit): a_l = f(a_{l-1} · kernel + bias)
//   loss         one invocation per member: its batch-mean loss, its metrics and dL/d(output)
//   dinput_l     one invocation per (member, row, input unit): dL/da_{l-1} = dz_l · kernel^T (before the update)
//   update_p     one invocation per element of a member's parameter: its gradient, summed over the rows, and the optimizer step
//
// A weightless activation layer (relu(), gelu(), leaky_relu(alpha), ...) in the chain is a forward kernel
// and a dinput kernel of its own, elementwise; dropout, layernorm and batchnorm are src/step/wgsl-norm.ts's
// (dropout's masks from the host's draws of the op path's streams, uploaded each step). Where any member
// clips its gradients (clipnorm), each parameter's update is three kernels: its gradient into scratch, each member's norm of it (one invocation
// per member, summed in order), and the clipped gradient's optimizer step.
//
// Members and rows lie across invocations and workgroups; every sum is one invocation's loop, in a fixed
// order (fma, as TF.js's matMul shaders accumulate), so a member's numbers do not depend on N or on its
// position, and nothing is summed across members (but a shared layer's gradient). N and the batch size are constants of the code: a
// halved population or a short last batch gets kernels of its own (the runtime caches them).
import type { EnsembleIR, WideOp, WideParam } from '../ensemble/ensemble-ir.js';
import { optimizerHyper, optimizerSlots } from '../vocabulary/optimizers.js';
import { describedOptimizers } from '../math/optimizers.js';
import { describedActivations, LEAKY_RELU_ALPHA } from '../math/activations.js';
import { activationGradText, activationText, gradReadsZ, literal, lossElementText, updateText } from './wgsl-render.js';
import { describedLosses, elementLoss as elementLossRule, stepMetrics } from '../math/losses.js';
import type { StepConfig } from './plan.js';
import { isSpatialLayer, spatialBackward, spatialForward, spatialLayer, whyNotSpatial, wgslSpatialKinds, type ChainValues, type LayerInput, type SpatialLayer, type SpatialWriter } from './wgsl-conv.js';
import { gradientOrder, gradientSum, isMergeLayer, mergeBackward, mergeCells, mergeForward, mergeLayer, perCellMerge, whyNotMerge, wgslMergeKinds, type MergeLayer } from './wgsl-graph.js';
import { membersSum, sharedDinput, sharedParamUpdates, sharedUpdates, type SharedWriter } from './wgsl-shared.js';
import { isNormLayer, normBackward, normForward, normLayer, perCell, whyNotNorm, wgslNormKinds, type NormLayer, type NormWriter } from './wgsl-norm.js';

/** What the WGSL step covers (the rest of netc's vocabulary runs on TF.js ops on webgpu). */
export const wgslActivations = new Set(describedActivations);
/** the weightless activation layers the chain takes (`relu()`, `leaky_relu(alpha)`, ...) */
export const wgslActivationLayers = new Set([...wgslActivations].filter((a) => a !== 'linear'));
export const wgslLosses = new Set(describedLosses);
export const wgslOptimizers = new Set(describedOptimizers);
export const wgslMetrics = new Set(stepMetrics);

/** The invocations of one workgroup, and the most workgroups along one dimension of a dispatch. */
export const WORKGROUP = 64;
const MAX_GROUPS = 65535;

/** One compute kernel: its WGSL, the buffers it binds (binding i is bindings[i]) and how many invocations it runs. */
export interface WgslKernel {
  name: string;
  code: string;
  /** `x`, `y`, `acts`, `hyper`, `losses`, `metric:NAME`, `param:NAME`, `slot:NAME:SLOT` */
  bindings: string[];
  invocations: number;
  /** workgroups along x and y */
  groups: [number, number];
}

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

/** What the WGSL step is built for: the wasm step's configuration, with no batch bound (the batch size is a constant of the code). */
export type WgslConfig = Omit<StepConfig, 'maxBatch' | 'clipping'> & { clipping?: boolean };

/** Why the WGSL step does not cover this configuration, or undefined where it does. */
export function whyNotWgsl(cfg: WgslConfig): string | undefined {
  const e = cfg.ensemble;
  if (e.lowering !== 'grouped') return `the ${e.lowering} lowering (the WGSL step is built for grouped)`;
  if (!wgslOptimizers.has(cfg.optimizer)) return `the ${cfg.optimizer} optimizer`;
  if (!wgslLosses.has(cfg.loss.name)) return `the ${cfg.loss.name} loss`;
  const metric = cfg.metrics.find((m) => !wgslMetrics.has(m));
  if (metric) return `the ${metric} metric`;
  if (!e.ops[0].shared) return "members' own input rows (a split)";
  const first = e.ops[1]?.op ?? '';
  if (e.ops[0].shape.length !== 1 && first !== 'flatten' && !wgslSpatialKinds.has(first)) return `an input of shape [${e.ops[0].shape.join(', ')}]`;
  const readers = new Map<number, number>();
  for (const op of e.ops) for (const i of op.inputs) readers.set(i, (readers.get(i) ?? 0) + 1);
  for (const op of e.ops.slice(1)) {
    const activationLayer = wgslActivationLayers.has(op.op);
    const spatial = wgslSpatialKinds.has(op.op);
    const norm = wgslNormKinds.has(op.op);
    const merge = wgslMergeKinds.has(op.op);
    if (op.op !== 'dense' && op.op !== 'flatten' && !spatial && !activationLayer && !norm && !merge) return `the ${op.op} layer`;
    // a value nothing reads has no gradient (the op path's autodiff leaves its layers' weights without one)
    if (op.id !== e.model.output && !readers.get(op.id)) return `${op.name}'s value, which no layer reads`;
    const why = whyNotOnShared(e, op, merge);
    if (why) return why;
    if (merge) {
      const why = whyNotMerge(op, op.inputs.map((i) => e.ops[i]));
      if (why) return why;
      continue;
    }
    // a flatten's value is its input's: the op path sums a gradient of each apart
    if (op.op === 'flatten' && (readers.get(op.inputs[0]) ?? 0) > 1) return `${op.name}'s input, read twice`;
    if (op.op === 'flatten') continue;
    if (norm) {
      const why = whyNotNorm(op);
      if (why) return why;
      continue;
    }
    if (spatial) {
      const why = whyNotSpatial(op, e.ops[op.inputs[0]], wgslActivations);
      if (why) return why;
      continue;
    }
    // an activation layer on the shared input computes one value for every member: on the input itself not written (on a shared layer's value it is, once)
    if (activationLayer && op.shared && valueOf(e, op.inputs[0]).id === 0) return `the ${op.op} layer ${op.name} on the shared input`;
    // softmax() is a row of its own along the last axis: written for a flat layer only
    if (activationLayer && op.op === 'softmax' && op.shape.length !== 1) return `the softmax layer ${op.name} on values of shape [${op.shape.join(', ')}]`;
    if (activationLayer) continue;
    const activation = String(op.attrs.activation ?? 'linear');
    if (!wgslActivations.has(activation)) return `the ${activation} activation (${op.name})`;
  }
  const kindOf = new Map(e.ops.map((op) => [op.name, op.op]));
  for (const p of e.params) {
    const kind = kindOf.get(p.op)!;
    if (p.layout === 'shared' && kind !== 'dense' && kind !== 'conv2d' && kind !== 'layernorm') return `the shared ${kind} layer ${p.op}`;
    if (p.layout !== 'columns' && p.layout !== 'stacked' && p.layout !== 'shared') return `the ${p.layout} layout of ${p.name}`;
  }
  if (e.model.output !== e.ops.length - 1) return 'an output that is not the last layer';
  if (e.ops[e.model.output].shared) return "a shared layer's value on the shared input as the output";
  return undefined;
}

/** The op whose value an op's value is: itself, or through flattens (a flatten moves nothing) the op it flattens. */
function valueOf(e: EnsembleIR, id: number): WideOp {
  let op = e.ops[id];
  while (op.op === 'flatten') op = e.ops[op.inputs[0]];
  return op;
}

/**
 * Why the WGSL step does not run `op` on a shared layer's value (computed once on the shared input), or
 * undefined where it does: a dense or conv2d reads it (their input's gradient sums the members'), a
 * layer computed once itself (a shared layer, a pool or activation), or a member's norm, dropout or
 * leaky_relu(alpha) on a flat one (each member's gradient of it summed).
 */
function whyNotOnShared(e: EnsembleIR, op: WideOp, merge: boolean): string | undefined {
  const operand = op.inputs.find((i) => valueOf(e, i).id > 0 && valueOf(e, i).shared);
  if (operand === undefined || op.op === 'dense' || op.op === 'conv2d' || op.shared) return undefined;
  const value = valueOf(e, operand);
  if (merge) return `${op.name} on the shared layer ${value.name}'s value (the WGSL step merges members' own values and the shared input)`;
  // the op path's broadcast of a shared image to every member is a Tile of rank 5, which has no gradient in TF.js
  const shape = e.ops[operand].shape;
  if (shape.length !== 1) return `${op.name} on the shared layer ${value.name}'s values of shape [${shape.join(', ')}] (the op path's broadcast of them, a Tile of rank 5, has no gradient in TF.js)`;
  return undefined;
}

/** A float32 constant as WGSL writes it (9 significant digits name one f32). */
const lit = (v: number): string => {
  const s = Math.fround(v).toPrecision(9);
  return /[.e]/.test(s) ? s : `${s}.0`;
};

/** One layer of the chain, as the kernels see it: a dense layer, or a weightless activation layer (no kernel). */
type Layer = ChainValues;

/** A layer of the chain: a dense or activation layer, a conv or pool (src/step/wgsl-conv.ts), a dropout, layernorm or batchnorm (src/step/wgsl-norm.ts), an add or concat (src/step/wgsl-graph.ts). */
type ChainLayer = Layer | SpatialLayer | NormLayer | MergeLayer;

const size = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

/** Where a reader's operand's gradient goes: the value's own gradient region, or one of its extra ones (a value read twice). */
type Target = ChainLayer;

/** Each member's gradient of a shared layer's value [N, B, width] at `from`, to be summed over the members into `into`'s gradient. */
interface Fold {
  from: number;
  into: Target;
}

/** The chain's layers, with each one's gradient targets (by operand; none for the shared input) and the extra gradient regions of the values read more than once. */
interface Layers {
  layers: ChainLayer[];
  targets: Map<ChainLayer, (Target | undefined)[]>;
  extra: Map<ChainLayer, number[]>;
  /** a member's layer on a shared layer's value: the regions of its members' gradients, summed over the members into the value's */
  folds: Map<ChainLayer, Fold[]>;
  actsFloats: number;
  drawsFloats: number;
}

/** The chain's layers; a flatten is none (a member's example is row-major already: the next layer reads its input as it lies). */
function layersOf(e: EnsembleIR, n: number, batch: number): Layers {
  let at = 0;
  const regions = { acts: 0, draws: 0 };
  const layers: ChainLayer[] = [];
  // each op's value: a layer's, or the shared input's (undefined); a flatten's is its input's
  const valueOf = new Map<number, ChainLayer | undefined>([[0, undefined]]);
  const sources = new Map<ChainLayer, (ChainLayer | undefined)[]>();
  const inputOf = (src: ChainLayer | undefined): LayerInput => (!src ? { buffer: 'x' } : src.op.shared ? { buffer: 'acts', at: src.valuesAt, shared: true } : { buffer: 'acts', at: src.valuesAt });
  // each op's parameters, found once (a lookup per op would make a deep model's kernels quadratic to write)
  const paramsOf = new Map<string, WideParam[]>();
  for (const p of e.params) paramsOf.set(p.op, [...(paramsOf.get(p.op) ?? []), p]);
  for (const op of e.ops.slice(1)) {
    if (op.op === 'flatten') {
      valueOf.set(op.id, valueOf.get(op.inputs[0]));
      continue;
    }
    const from = op.inputs.map((i) => valueOf.get(i));
    const params = paramsOf.get(op.name) ?? [];
    const inShape = e.ops[op.inputs[0]].shape;
    const inWidth = size(inShape);
    const width = size(op.shape);
    const spatial = wgslSpatialKinds.has(op.op);
    // a dense layer or a conv has an activation attribute (a pool's is linear); an activation layer is its own; a merge's is linear
    const dense = op.op === 'dense' || spatial;
    const activation = dense ? String(op.attrs.activation ?? 'linear') : wgslMergeKinds.has(op.op) ? 'linear' : op.op;
    // a shared layer's value on the shared input is every member's: [B, width], once
    const rows = (op.shared ? 1 : n) * batch;
    const valuesAt = at;
    const gradAt = at + rows * width;
    at = gradAt + rows * width;
    let zAt: number | undefined;
    if (dense && gradReadsZ(activation)) [zAt, at] = [at, at + rows * width];
    const alpha = activation !== 'leaky_relu' ? undefined : dense ? { value: LEAKY_RELU_ALPHA } : { key: `${op.name}.alpha` };
    const layer = {
      op,
      inWidth,
      width,
      activation,
      kernel: params.find((p) => p.name.endsWith('/kernel')),
      bias: params.find((p) => p.name.endsWith('/bias')),
      zAt,
      alpha,
      input: inputOf(from[0]),
      valuesAt,
      gradAt,
    };
    let made: ChainLayer;
    if (wgslMergeKinds.has(op.op)) made = mergeLayer(layer, from.map((src, i) => ({ input: inputOf(src), width: size(e.ops[op.inputs[i]].shape) / mergeCells(op) })));
    else if (wgslNormKinds.has(op.op)) {
      regions.acts = at;
      made = normLayer(layer, params, op.shared ? 1 : n, batch, regions);
      at = regions.acts;
    } else made = spatial ? spatialLayer(layer, inShape) : layer;
    layers.push(made);
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
    for (const i of isMergeLayer(reader) ? gradientOrder(reader.op) : [0]) {
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
  return { layers, targets, extra, folds, actsFloats: Math.max(at, 1), drawsFloats: regions.draws };
}

/**
 * The WGSL step of a covered configuration for N members and batches of `batch` rows; with `training`
 * false, an evaluation: the forward kernels in inference mode (dropout passes its input, batchnorm
 * normalises by the running statistics) and the loss kernel's losses and metrics, nothing stepped.
 */
export function generateWgslStep(cfg: WgslConfig, n: number, batch: number, training = true): WgslStep {
  const e = cfg.ensemble;
  const { layers, targets, extra, folds, actsFloats: valueFloats, drawsFloats } = layersOf(e, n, batch);
  // the optimizer's hyperparameters, clipnorm's, then the layers' own (a leaky_relu layer's alpha, dropout's rate, a norm's momentum and epsilon), each a row of N
  const own = (l: ChainLayer) => (isNormLayer(l) ? l.keys : l.alpha && 'key' in l.alpha ? [l.alpha.key] : []);
  const stepKeys = [...optimizerHyper[cfg.optimizer], ...(cfg.clipping ? ['clip'] : [])];
  // the shared layers step once with the file's values (`shared:KEY`, a row of N like the others, read at 0)
  const sharedKeys = e.params.some((p) => p.layout === 'shared') ? stepKeys.map((key) => `shared:${key}`) : [];
  const hyper = [...stepKeys, ...layers.flatMap(own), ...sharedKeys];
  // clipping: one scratch region after the layers' values, for a parameter's gradient [N, size] and its norms [N], reused by each in turn
  const largest = Math.max(...layers.map((l) => (isNormLayer(l) ? l.width / l.cells : !l.kernel ? 0 : isSpatialLayer(l) ? l.g.kh * l.g.kw * l.g.c * l.f : l.inWidth * l.width)));
  const clip = cfg.clipping ? { gradsAt: valueFloats, normAt: valueFloats + n * largest } : undefined;
  const actsFloats = clip ? clip.normAt + n : valueFloats;
  const ctx: Ctx = { n, batch, stride: n, hyper, optimizer: cfg.optimizer, slots: optimizerSlots[cfg.optimizer], clip };
  const w = writersOf(ctx);
  const kernels: WgslKernel[] = layers.flatMap((l) => forwardOf(w, l, training));
  kernels.push(lossKernel(ctx, layers[layers.length - 1], cfg.loss, cfg.metrics));
  if (!training) return { kernels, hyper, actsFloats, draws: [], drawsFloats: 0, n, batch };
  for (let i = layers.length - 1; i >= 0; i--) {
    const l = layers[i];
    // a value read more than once: its readers' gradients added up first
    const more = extra.get(l) ?? [];
    if (more.length) kernels.push(gradientSum({ ...w.spatial, n: w.ctxOf(l).n }, l, more));
    kernels.push(...backwardOf(w, l, targets.get(l)!));
    // a member's layer on a shared layer's value: its members' gradients of the value summed
    for (const fold of folds.get(l) ?? []) kernels.push(membersSum(w.spatial, fold.into, fold.from));
  }
  const draws = layers.flatMap((l) => (isNormLayer(l) && l.drawsAt !== undefined ? [{ op: l.op.name, at: l.drawsAt, width: l.width }] : []));
  return { kernels, hyper, actsFloats, draws, drawsFloats, n, batch };
}

/** The writers of the step's kernels: this file's rules for N members and, for a shared layer's value on the shared input, for one. */
interface Writers {
  ctx: Ctx;
  ctxOf(l: ChainLayer): Ctx;
  spatial: SpatialWriter<WgslKernel>;
  /** a conv or pool: a shared layer's value on the shared input computed once, as for one member */
  spatialOf(l: ChainLayer): SpatialWriter<WgslKernel>;
  norms(l: NormLayer): [NormWriter<WgslKernel>, NormLayer];
  merges(l: MergeLayer): [SpatialWriter<WgslKernel>, MergeLayer];
  shared: SharedWriter<WgslKernel>;
}

function writersOf(ctx: Ctx): Writers {
  // a shared layer's value on the shared input: computed once, as for one member
  const one: Ctx = { ...ctx, n: 1 };
  const ctxOf = (l: ChainLayer) => (l.op.shared ? one : ctx);
  const spatial = spatialWriter(ctx);
  const spatialOne = spatialWriter(one);
  return {
    ctx,
    ctxOf,
    spatial,
    spatialOf: (l) => (l.op.shared ? spatialOne : spatial),
    // a norm's kernels see it per cell (batchnorm of an image: B*H*W rows of C), with a writer counting those rows
    norms(l) {
      const own = ctxOf(l);
      if (l.cells === 1) return [normWriter(own, spatialWriter(own)), l];
      const rows = { ...own, batch: own.batch * l.cells };
      return [normWriter(rows, spatialWriter(rows)), perCell(l, l.cells)];
    },
    // a concat of images: its kernels see B*H*W rows of channels
    merges: (l) => (l.cells === 1 ? [spatial, l] : [spatialWriter({ ...ctx, batch: ctx.batch * l.cells }), perCellMerge(l)]),
    shared: sharedWriter(ctx),
  };
}

/** A layer's forward kernels (`training` false: an evaluation's, dropout passing its input and batchnorm by its running statistics). */
function forwardOf(w: Writers, l: ChainLayer, training: boolean): WgslKernel[] {
  if (isMergeLayer(l)) return [mergeForward(...w.merges(l))];
  if (isSpatialLayer(l) && l.activation === 'softmax') return [spatialForward(w.spatialOf(l), l), softmaxCellsKernel(w.ctxOf(l), l)];
  if (isSpatialLayer(l)) return [spatialForward(w.spatialOf(l), l)];
  if (isNormLayer(l)) return normForward(...w.norms(l), training);
  return [forwardKernel(w.ctxOf(l), l)];
}

/** A layer's backward kernels: its inputs' gradients (into `into`, by operand), then its parameters' updates. */
function backwardOf(w: Writers, l: ChainLayer, into: (Target | undefined)[]): WgslKernel[] {
  const prev = into[0];
  if (isMergeLayer(l)) return into.flatMap((t, j) => (t ? [mergeBackward(...w.merges(l), j, t)] : []));
  if (isNormLayer(l)) return normBackward(...w.norms(l), prev);
  if (isSpatialLayer(l)) return spatialBackward(w.spatialOf(l), l, prev);
  const kernels: WgslKernel[] = [];
  const ctx = w.ctxOf(l);
  // the gradient of the layer's input first: it reads the kernel before its update
  // (a member's layer on a shared layer's value: every member's gradient of it summed, as the op path's one wide product sums it)
  if (prev) kernels.push(!l.kernel ? activationBackwardKernel(ctx, l, prev) : prev.op.shared && !l.op.shared ? sharedDinput(w.shared, l, prev) : dinputKernel(ctx, l, prev));
  const update = (which: 'kernel' | 'bias') => (l.kernel?.layout === 'shared' ? sharedUpdates(w.shared, l, which) : updateKernels(w.ctx, l, which));
  if (l.kernel) kernels.push(...update('kernel'));
  if (l.bias) kernels.push(...update('bias'));
  return kernels;
}

/** What the shared layers' kernels (src/step/wgsl-shared.ts) write with: this file's kernel text, input, dz, kernel index and optimizer rule. */
function sharedWriter(ctx: Ctx): SharedWriter<WgslKernel> {
  return {
    n: ctx.n,
    batch: ctx.batch,
    optimizer: ctx.optimizer,
    clip: ctx.clip,
    kernel: (name, invocations) => new KernelText(name, invocations),
    input: (k, l) => inputAt(k, ctx, l),
    dz: (k, l) => dzHelper(k, ctx, l),
    kernelIndex: (l) => kernelIndex(ctx, l),
    fileHyper: (k, key) => `${k.buf('hyper')}[${ctx.hyper.indexOf(`shared:${key}`) * ctx.stride}u]`,
    step: (at) => optimizerStep(ctx.optimizer, at),
  };
}

/** What the dropout, layernorm and batchnorm kernels (src/step/wgsl-norm.ts) write with: the spatial writer's parts, hyperparameters and inputs. */
function normWriter(ctx: Ctx, spatial: SpatialWriter<WgslKernel>): NormWriter<WgslKernel> {
  return { ...spatial, hyper: (k, key) => hyperAt(k, ctx, key), input: (k, l, unit) => inputAt(k, ctx, l, unit) };
}

/** What the conv and pool kernels (src/step/wgsl-conv.ts) write with: this file's kernel text and rules. */
function spatialWriter(ctx: Ctx): SpatialWriter<WgslKernel> {
  const clip = ctx.clip!;
  return {
    n: ctx.n,
    batch: ctx.batch,
    kernel: (name, invocations) => new KernelText(name, invocations),
    // a conv's leaky_relu is the dense activation's: TF's fixed slope
    activate: (name, z) => activate(name, z, name === 'leaky_relu' ? lit(LEAKY_RELU_ALPHA) : ''),
    activationFns,
    dz: (k, l) => dzHelper(k, ctx, l),
    update: (k, p) => updateLines(k, ctx, p),
    clipped: ctx.clip && {
      store: (k) => [`  ${k.buf('acts')}[${clip.gradsAt}u + idx] = g;`],
      kernels: (el) => [normKernel(ctx, el, clip), clippedUpdateKernel(ctx, el, clip)],
    },
    shared: (p, size, build) => sharedParamUpdates(sharedWriter(ctx), p, size, build),
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

/** Builds one kernel's text, binding each buffer it names once, in the order first named. */
class KernelText {
  readonly bindings: string[] = [];
  private readonly decls: string[] = [];
  constructor(
    readonly name: string,
    private readonly invocations: number,
  ) {}

  /** The WGSL name of a buffer, bound on first use. */
  buf(binding: string): string {
    const ident = binding.replace(/[^A-Za-z0-9]/g, '_');
    if (!this.bindings.includes(binding)) {
      const access = binding === 'x' || binding === 'y' || binding === 'hyper' || binding === 'draws' ? 'read' : 'read_write';
      this.decls.push(`@group(0) @binding(${this.bindings.length}) var<storage, ${access}> ${ident}: array<f32>;`);
      this.bindings.push(binding);
    }
    return ident;
  }

  finish(body: string, helpers = ''): WgslKernel {
    const groups = Math.max(1, Math.ceil(this.invocations / WORKGROUP));
    const gx = Math.min(groups, MAX_GROUPS);
    const gy = Math.ceil(groups / gx);
    const code = [
      `// netc: ${this.name}`,
      ...this.decls,
      helpers,
      `@compute @workgroup_size(${WORKGROUP})`,
      'fn main(@builtin(global_invocation_id) gid: vec3<u32>) {',
      `  let idx = gid.x + gid.y * ${gx * WORKGROUP}u;`,
      `  if (idx >= ${this.invocations}u) { return; }`,
      body,
      '}',
      '',
    ]
      .filter((line) => line !== '')
      .join('\n');
    return { name: this.name, code: code + '\n', bindings: this.bindings, invocations: this.invocations, groups: [gx, gy] };
  }
}

/** Index of member m's element (i, j) of a dense kernel [in, out] in its fused tensor. */
function kernelIndex(ctx: Ctx, l: Layer): string {
  if (l.kernel!.layout === 'shared') return `i * ${l.width}u + j`;
  return l.kernel!.layout === 'columns' ? `i * ${ctx.n * l.width}u + m * ${l.width}u + j` : `m * ${l.inWidth * l.width}u + i * ${l.width}u + j`;
}

/** Index of member m's element j of a dense bias: a shared layer's one copy, or member m's. */
const biasIndex = (l: Layer): string => (l.bias!.layout === 'shared' ? 'j' : `m * ${l.width}u + j`);

/** leaky_relu's slope for member m: TF's fixed one (a dense layer's activation), or the layer's own per-member value. */
function slopeOf(k: Pick<KernelText, 'buf'>, ctx: Ctx, l: Pick<Layer, 'op' | 'alpha'>): string {
  if (!l.alpha) throw new Error(`internal error: ${l.op.name} has no leaky_relu slope`);
  return 'key' in l.alpha ? hyperAt(k, ctx, l.alpha.key) : lit(l.alpha.value);
}

/** The activation f(z) (src/math/activations.ts's rule, src/step/wgsl-render.ts's text). */
function activate(name: string, z: string, alpha = ''): string {
  return activationText(name, z, alpha).value;
}

/** The WGSL functions the forward pass of an activation calls. */
function activationFns(name: string): string {
  return activationText(name, 'z', 'alpha').helpers.join('\n');
}

/** The expression of member m's input (row b, unit `unit`) of a layer. */
function inputAt(k: Pick<KernelText, 'buf'>, ctx: Ctx, l: Pick<Layer, 'input' | 'inWidth'>, unit = 'i'): string {
  if (l.input.buffer === 'x') return `${k.buf('x')}[b * ${l.inWidth}u + ${unit}]`;
  if (l.input.shared) return `${k.buf('acts')}[${l.input.at}u + b * ${l.inWidth}u + ${unit}]`;
  return `${k.buf('acts')}[${l.input.at}u + (m * ${ctx.batch}u + b) * ${l.inWidth}u + ${unit}]`;
}

/** A WGSL function dz(m, b, j) of the layer: dL/da times f'(z), recomputed wherever it is read (the same code, the same value). */
function dzHelper(k: Pick<KernelText, 'buf'>, ctx: Ctx, l: ChainLayer): string {
  const acts = k.buf('acts');
  const at = `(m * ${ctx.batch}u + b) * ${l.width}u + j`;
  if (l.activation === 'softmax') {
    // autodiff's softmax gradient: dy y - sum(dy y) y, the row's sum in order (a conv's: the F channels of j's cell)
    const f = isSpatialLayer(l) ? l.f : l.width;
    const row = isSpatialLayer(l) ? `(m * ${ctx.batch}u + b) * ${l.width}u + j / ${f}u * ${f}u` : `(m * ${ctx.batch}u + b) * ${l.width}u`;
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
  const z = !gradReadsZ(l.activation) ? undefined : l.kernel ? `${acts}[${l.zAt}u + ${at}]` : inputAt(k, ctx, l, 'j');
  const grad = activationGradText(l.activation, { da: 'd', a: 'a', ...(z ? { z: 'z' } : {}), ...(l.alpha ? { alpha: slopeOf(k, ctx, l) } : {}) });
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

function forwardKernel(ctx: Ctx, l: Layer): WgslKernel {
  if (l.activation === 'softmax') return softmaxForwardKernel(ctx, l);
  if (!l.kernel) return activationForwardKernel(ctx, l);
  const per = l.op.shared ? "one invocation per row and unit (a shared layer on the shared input: its value is every member's)" : 'one invocation per member, row and unit';
  const k = new KernelText(`forward ${l.op.name}: dense(${l.width}, ${l.activation}), ${per}`, ctx.n * ctx.batch * l.width);
  const w = k.buf(`param:${l.kernel.name}`);
  const input = inputAt(k, ctx, l);
  const bias = l.bias ? `  acc = acc + ${k.buf(`param:${l.bias.name}`)}[${biasIndex(l)}];\n` : '';
  const acts = k.buf('acts');
  // gelu's and swish's gradients read z: it is kept
  const z = l.zAt !== undefined ? `  ${acts}[${l.zAt}u + idx] = acc;\n` : '';
  const body = [
    `  let m = idx / ${ctx.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${ctx.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    '  var acc = 0.0;',
    `  for (var i = 0u; i < ${l.inWidth}u; i++) {`,
    `    acc = fma(${input}, ${w}[${kernelIndex(ctx, l)}], acc);`,
    '  }',
    bias + z + `  ${acts}[${l.valuesAt}u + idx] = ${activate(l.activation, 'acc', l.alpha ? slopeOf(k, ctx, l) : '')};`,
  ].join('\n');
  return k.finish(body, activationFns(l.activation));
}

/** A weightless activation layer's forward pass, elementwise: one invocation per member, row and unit. */
function activationForwardKernel(ctx: Ctx, l: Layer): WgslKernel {
  const k = new KernelText(`forward ${l.op.name}: ${l.activation}(), one invocation per member, row and unit`, ctx.n * ctx.batch * l.width);
  const input = inputAt(k, ctx, l, 'j');
  const alpha = l.alpha ? slopeOf(k, ctx, l) : '';
  const body = [
    `  let m = idx / ${ctx.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${ctx.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    `  let z = ${input};`,
    `  ${k.buf('acts')}[${l.valuesAt}u + idx] = ${activate(l.activation, 'z', alpha)};`,
  ].join('\n');
  return k.finish(body, activationFns(l.activation));
}

/** A weightless activation layer's backward pass: dL/d(its input) = dz, elementwise. */
function activationBackwardKernel(ctx: Ctx, l: Layer, prev: ChainLayer): WgslKernel {
  const k = new KernelText(`backward ${l.op.name}: dL/d${prev.op.name} through ${l.activation}(), one invocation per member, row and unit`, ctx.n * ctx.batch * l.width);
  const helper = dzHelper(k, ctx, l);
  const body = [
    `  let m = idx / ${ctx.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${ctx.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    `  ${k.buf('acts')}[${prev.gradAt}u + idx] = dz(m, b, j);`,
  ].join('\n');
  return k.finish(body, helper);
}

/** A softmax layer's forward pass (dense, or the softmax() layer): one invocation per member and row, as TF.js's softmax shader computes it (exp(z - max) / sum). */
function softmaxForwardKernel(ctx: Ctx, l: Layer, name?: string): WgslKernel {
  const k = new KernelText(name ?? (l.kernel ? `forward ${l.op.name}: dense(${l.width}, softmax), one invocation per member and row` : `forward ${l.op.name}: softmax(), one invocation per member and row`), ctx.n * ctx.batch);
  const pre: string[] = [];
  if (l.kernel) {
    const w = k.buf(`param:${l.kernel.name}`);
    const input = inputAt(k, ctx, l);
    pre.push('    var acc = 0.0;', `    for (var i = 0u; i < ${l.inWidth}u; i++) {`, `      acc = fma(${input}, ${w}[${kernelIndex(ctx, l)}], acc);`, '    }');
    if (l.bias) pre.push(`    acc = acc + ${k.buf(`param:${l.bias.name}`)}[${biasIndex(l)}];`);
  } else pre.push(`    let acc = ${inputAt(k, ctx, l, 'j')};`);
  const acts = k.buf('acts');
  const out = `${acts}[${l.valuesAt}u + row + j]`;
  const body = [
    `  let m = idx / ${ctx.batch}u;`,
    `  let b = idx % ${ctx.batch}u;`,
    `  let row = idx * ${l.width}u;`,
    '  var top = -3.402823e+38;',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    ...pre,
    `    ${out} = acc;`,
    '    top = max(top, acc);',
    '  }',
    '  var total = 0.0;',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    `    total = total + exp(${out} - top);`,
    '  }',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    `    ${out} = exp(${out} - top) / total;`,
    '  }',
  ].join('\n');
  return k.finish(body);
}

/**
 * A conv's softmax over its F channels, in place on the z its forward kernel left in its values: the
 * softmax kernel above on B*H*W rows of F (as the op path's tf.softmax of [N, B, H, W, F] along its last
 * axis), one invocation per member, row and output cell.
 */
function softmaxCellsKernel(ctx: Ctx, l: SpatialLayer): WgslKernel {
  const cells = l.g.oh * l.g.ow;
  const rows = { ...ctx, batch: ctx.batch * cells };
  const own = { ...l, kernel: undefined, bias: undefined, width: l.f, inWidth: l.f, input: { buffer: 'acts', at: l.valuesAt } } satisfies Layer;
  return softmaxForwardKernel(rows, own, `forward ${l.op.name}: softmax over each cell's ${l.f} channels, in place, one invocation per ${l.op.shared ? '' : 'member, '}row and output cell`);
}

function dinputKernel(ctx: Ctx, l: Layer, prev: ChainLayer): WgslKernel {
  const k = new KernelText(`backward ${l.op.name}: dL/d${prev.op.name}, one invocation per member, row and input unit`, ctx.n * ctx.batch * l.inWidth);
  const w = k.buf(`param:${l.kernel!.name}`);
  const helper = dzHelper(k, ctx, l);
  const body = [
    `  let m = idx / ${ctx.batch * l.inWidth}u;`,
    `  let b = (idx / ${l.inWidth}u) % ${ctx.batch}u;`,
    `  let i = idx % ${l.inWidth}u;`,
    '  var acc = 0.0;',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    `    acc = fma(dz(m, b, j), ${w}[${kernelIndex(ctx, l)}], acc);`,
    '  }',
    `  ${k.buf('acts')}[${prev.gradAt}u + idx] = acc;`,
  ].join('\n');
  return k.finish(body, helper);
}

/** A parameter's update: one kernel, or, where members clip, its gradient into scratch, the members' norms, and the clipped step. */
function updateKernels(ctx: Ctx, l: Layer, which: 'kernel' | 'bias'): WgslKernel[] {
  if (!ctx.clip) return [updateKernel(ctx, l, which)];
  return [gradientKernel(ctx, l, which, ctx.clip), normKernel(ctx, elementOf(ctx, l, which), ctx.clip), clippedUpdateKernel(ctx, elementOf(ctx, l, which), ctx.clip)];
}

/** The parameter, its size per member, and the lines naming member m's element of invocation idx (and its index in the fused tensor). */
function elementOf(ctx: Ctx, l: Layer, which: 'kernel' | 'bias'): { p: WideParam; size: number; lines: string[]; index: string } {
  const p = which === 'kernel' ? l.kernel! : l.bias!;
  const size = which === 'kernel' ? l.inWidth * l.width : l.width;
  const lines = [`  let m = idx / ${size}u;`];
  if (which === 'kernel') {
    lines.push(`  let i = (idx / ${l.width}u) % ${l.inWidth}u;`, `  let j = idx % ${l.width}u;`);
    return { p, size, lines, index: kernelIndex(ctx, l) };
  }
  lines.push(`  let j = idx % ${l.width}u;`);
  return { p, size, lines, index: `m * ${l.width}u + j` };
}

/** The lines summing member m's gradient g of its element over its rows, in order. */
function gradientLines(k: KernelText, ctx: Ctx, l: Layer, which: 'kernel' | 'bias'): string[] {
  const term = which === 'kernel' ? `    g = fma(${inputAt(k, ctx, l)}, dz(m, b, j), g);` : '    g = g + dz(m, b, j);';
  return ['  var g = 0.0;', `  for (var b = 0u; b < ${ctx.batch}u; b++) {`, term, '  }'];
}

/** Clipping's first kernel: each element's gradient, summed over the member's rows, into the scratch [N, size]. */
function gradientKernel(ctx: Ctx, l: Layer, which: 'kernel' | 'bias', clip: NonNullable<Ctx['clip']>): WgslKernel {
  const { p, size, lines } = elementOf(ctx, l, which);
  const k = new KernelText(`gradient ${p.name}: summed over the member's rows, into scratch for clipnorm, one invocation per member and element`, ctx.n * size);
  const helper = dzHelper(k, ctx, l);
  lines.push(...gradientLines(k, ctx, l, which), `  ${k.buf('acts')}[${clip.gradsAt}u + idx] = g;`);
  return k.finish(lines.join('\n'), helper);
}

/** Clipping's second kernel: each member's norm of its gradient of the parameter (Keras' clipnorm: per member and tensor), summed in order. */
function normKernel(ctx: Ctx, { p, size }: { p: WideParam; size: number }, clip: NonNullable<Ctx['clip']>): WgslKernel {
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

/** A parameter's gradient (summed over the member's rows in order) and its optimizer step, element by element. */
function updateKernel(ctx: Ctx, l: Layer, which: 'kernel' | 'bias'): WgslKernel {
  const { p, size, lines, index } = elementOf(ctx, l, which);
  const k = new KernelText(`update ${p.name}: its gradient and one ${ctx.optimizer} step, one invocation per member and element`, ctx.n * size);
  const helper = dzHelper(k, ctx, l);
  lines.push(...gradientLines(k, ctx, l, which), `  let at = ${index};`, ...updateLines(k, ctx, p));
  return k.finish(lines.join('\n'), helper);
}

/**
 * Clipping's third kernel: the gradient from the scratch, clipped, and the optimizer step, element by
 * element (`lines` name member m and the element's indices from idx; `index` is its place in the fused
 * tensor). A dense parameter's and a conv's alike.
 */
function clippedUpdateKernel(ctx: Ctx, { p, size, lines, index }: { p: WideParam; size: number; lines: string[]; index: string }, clip: NonNullable<Ctx['clip']>): WgslKernel {
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
function updateLines(k: Pick<KernelText, 'buf'>, ctx: Ctx, p: WideParam): string[] {
  const h = (key: string) => hyperAt(k, ctx, key);
  const w = k.buf(`param:${p.name}`);
  const slot = (s: string) => k.buf(`slot:${p.name}:${s}`);
  return optimizerStep(ctx.optimizer, { w: `${w}[at]`, slot: (s) => `${slot(s)}[at]`, h });
}

/** The optimizer's rule on one element (src/math/optimizers.ts's, src/step/wgsl-render.ts's text), from its gradient `g`. */
function optimizerStep(optimizer: string, at: { w: string; slot(name: string): string; h(key: string): string }): string[] {
  return updateText(optimizer, at);
}

const EPS = 1e-7;

/** The loss of one member: its batch mean, dL/d(output) into the output layer's gradient, and its metrics. */
function lossKernel(ctx: Ctx, out: ChainLayer, lossConfig: WgslConfig['loss'], metrics: readonly string[]): WgslKernel {
  const loss = lossConfig.name;
  const k = new KernelText(`loss ${loss}${metrics.length ? ` and ${metrics.join(', ')}` : ''}: one invocation per member`, ctx.n);
  const K = out.width;
  const acts = k.buf('acts');
  const y = k.buf('y');
  const sparse = loss === 'sparse_categorical_crossentropy';
  // the label of output j of row b: class indices [B, 1] one-hot under the sparse loss
  const label = (j: string) => (sparse ? `select(0.0, 1.0, i32(${y}[b]) == i32(${j}))` : `${y}[b * ${K}u + ${j}]`);
  const p = (j: string) => `${acts}[${out.valuesAt}u + base + ${j}]`;
  const lines = [
    '  let m = idx;',
    '  var total = 0.0;',
    ...metrics.map((name) => `  var sum_${name} = 0.0;`),
    `  for (var b = 0u; b < ${ctx.batch}u; b++) {`,
    `    let base = (m * ${ctx.batch}u + b) * ${K}u;`,
    ...(!elementLossRule(loss, lossConfig.args) ? crossEntropyRow(ctx, K, p, label, `${acts}[${out.gradAt}u + base + j]`) : elementRow(ctx, lossConfig, K, p, label, `${acts}[${out.gradAt}u + base + j]`)),
    ...metricLines(metrics, K, p, label, sparse ? `u32(${y}[b])` : undefined),
    '  }',
    `  ${k.buf('losses')}[m] = total / ${lit(ctx.batch)};`,
    ...metrics.map((name) => `  ${k.buf(`metric:${name}`)}[m] = sum_${name} / ${name === 'accuracy' ? lit(ctx.batch) : `(${lit(ctx.batch)} * ${lit(K)})`};`),
  ];
  return k.finish(lines.join('\n'));
}

/** An elementwise loss over one row (mse, mae, huber, binary cross-entropy): each element's term and gradient, the row's mean added to `total`. */
function elementRow(ctx: Ctx, { name: loss, args }: WgslConfig['loss'], K: number, p: (j: string) => string, label: (j: string) => string, grad: string): string[] {
  // the gradient of the two means: 1 / (B K) in one division where the op path writes the gradient out (binary cross-entropy), (1 / B) / K where autodiff takes one mean after the other
  const scale = elementLossRule(loss, args)?.scale === 'once' ? Math.fround(1 / (ctx.batch * K)) : Math.fround(Math.fround(1 / ctx.batch) / K);
  return [
    '    var row = 0.0;',
    `    for (var j = 0u; j < ${K}u; j++) {`,
    `      let p = ${p('j')};`,
    `      let y = ${label('j')};`,
    ...elementLoss(loss, literal(scale), args).map((line) => `      ${line}`),
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
    `      let q = min(max(raw, ${lit(EPS)}), ${lit(1 - EPS)});`,
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

/** One element's term (added to `row`) and `grad`, dL/dp of the batch mean (src/math/losses.ts's rule, src/step/wgsl-render.ts's text). */
function elementLoss(loss: string, scale: string, args: Record<string, unknown>): string[] {
  return lossElementText(loss, args, scale);
}
