// The generated training step's second target: WGSL compute kernels for WebGPU, for chains of dense
// layers, with conv2d, maxpool2d, avgpool2d and flatten before them (src/step/wgsl-conv.ts). The same
// planned step as the WebAssembly one (forward, loss, backward, optimizer, each member's loss and
// metrics), as one kernel per layer and direction, dispatched one after another in one compute
// pass on TF.js's own device, reading and writing the population's own buffers in place:
//
//   forward_l    one invocation per (member, row, unit): a_l = f(a_{l-1} · kernel + bias)
//   loss         one invocation per member: its batch-mean loss, its metrics and dL/d(output)
//   dinput_l     one invocation per (member, row, input unit): dL/da_{l-1} = dz_l · kernel^T (before the update)
//   update_p     one invocation per element of a member's parameter: its gradient, summed over the rows, and the optimizer step
//
// Members and rows lie across invocations and workgroups; every sum is one invocation's loop, in a fixed
// order (fma, as TF.js's matMul shaders accumulate), so a member's numbers do not depend on N or on its
// position, and nothing is summed across members. N and the batch size are constants of the code: a
// halved population or a short last batch gets kernels of its own (the runtime caches them).
import type { EnsembleIR, WideOp, WideParam } from '../ensemble/ensemble-ir.js';
import { optimizerHyper, optimizerSlots } from '../wasm/optimizer-update.js';
import type { StepConfig } from './plan.js';
import { isSpatialLayer, spatialBackward, spatialForward, spatialLayer, whyNotSpatial, wgslSpatialKinds, type LayerInput, type SpatialLayer, type SpatialWriter } from './wgsl-conv.js';

/** What the WGSL step covers (the rest of netc's vocabulary runs on TF.js ops on webgpu). */
export const wgslActivations = new Set(['linear', 'relu', 'sigmoid', 'tanh', 'elu', 'softmax']);
export const wgslLosses = new Set(['mse', 'mae', 'binary_crossentropy', 'categorical_crossentropy', 'sparse_categorical_crossentropy']);
export const wgslOptimizers = new Set(['sgd', 'adam']);
export const wgslMetrics = new Set(['accuracy', 'mse', 'mae']);

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
  if (cfg.clipping) return 'clipnorm';
  if (!e.ops[0].shared) return "members' own input rows (a split)";
  const first = e.ops[1]?.op ?? '';
  if (e.ops[0].shape.length !== 1 && first !== 'flatten' && !wgslSpatialKinds.has(first)) return `an input of shape [${e.ops[0].shape.join(', ')}]`;
  for (const op of e.ops.slice(1)) {
    const spatial = wgslSpatialKinds.has(op.op);
    if (op.op !== 'dense' && op.op !== 'flatten' && !spatial) return `the ${op.op} layer`;
    if (op.inputs.length !== 1 || op.inputs[0] !== op.id - 1) return `${op.name}'s input (the WGSL step runs a chain of layers)`;
    if (op.op === 'flatten') continue;
    if (spatial) {
      const why = whyNotSpatial(op, e.ops[op.inputs[0]], wgslActivations);
      if (why) return why;
      continue;
    }
    const activation = String(op.attrs.activation ?? 'linear');
    if (!wgslActivations.has(activation)) return `the ${activation} activation (${op.name})`;
  }
  for (const p of e.params) if (p.layout !== 'columns' && p.layout !== 'stacked') return `the ${p.layout} layout of ${p.name}`;
  if (e.model.output !== e.ops.length - 1) return 'an output that is not the last layer';
  return undefined;
}

/** A float32 constant as WGSL writes it (9 significant digits name one f32). */
const lit = (v: number): string => {
  const s = Math.fround(v).toPrecision(9);
  return /[.e]/.test(s) ? s : `${s}.0`;
};

/** One dense layer of the chain, as the kernels see it. */
interface Layer {
  op: WideOp;
  inWidth: number;
  width: number;
  activation: string;
  kernel: WideParam;
  bias?: WideParam;
  /** where its input is: the batch (`x`, shared by every member), or a region of `acts` */
  input: LayerInput;
  /** its values a_l and their gradient dL/da_l in `acts`, [N, B, width] each */
  valuesAt: number;
  gradAt: number;
}

/** A layer of the chain: a dense layer, or a conv or pool (src/step/wgsl-conv.ts). */
type ChainLayer = Layer | SpatialLayer;

const size = (shape: readonly number[]): number => shape.reduce((a, d) => a * d, 1);

/** The chain's layers; a flatten is none (a member's example is row-major already: the next layer reads its input as it lies). */
function layersOf(e: EnsembleIR, n: number, batch: number): { layers: ChainLayer[]; actsFloats: number } {
  let at = 0;
  const layers: ChainLayer[] = [];
  for (const op of e.ops.slice(1)) {
    if (op.op === 'flatten') continue;
    const params = e.params.filter((p) => p.op === op.name);
    const inShape = e.ops[op.inputs[0]].shape;
    const width = size(op.shape);
    const prev = layers[layers.length - 1];
    const valuesAt = at;
    const gradAt = at + n * batch * width;
    at = gradAt + n * batch * width;
    const kernel = params.find((p) => p.name.endsWith('/kernel'));
    const layer = {
      op,
      inWidth: size(inShape),
      width,
      activation: String(op.attrs.activation ?? 'linear'),
      bias: params.find((p) => p.name.endsWith('/bias')),
      input: (prev ? { buffer: 'acts', at: prev.valuesAt } : { buffer: 'x' }) as LayerInput,
      valuesAt,
      gradAt,
    };
    layers.push(wgslSpatialKinds.has(op.op) ? spatialLayer({ ...layer, kernel }, inShape) : { ...layer, kernel: kernel! });
  }
  return { layers, actsFloats: Math.max(at, 1) };
}

/** The WGSL step of a covered configuration for N members and batches of `batch` rows. */
export function generateWgslStep(cfg: WgslConfig, n: number, batch: number): WgslStep {
  const e = cfg.ensemble;
  const { layers, actsFloats } = layersOf(e, n, batch);
  const hyper = optimizerHyper[cfg.optimizer];
  const ctx: Ctx = { n, batch, hyper, optimizer: cfg.optimizer, slots: optimizerSlots[cfg.optimizer] };
  const spatial = spatialWriter(ctx);
  const kernels: WgslKernel[] = layers.map((l) => (isSpatialLayer(l) ? spatialForward(spatial, l) : forwardKernel(ctx, l)));
  kernels.push(lossKernel(ctx, layers[layers.length - 1], cfg.loss.name, cfg.metrics));
  for (let i = layers.length - 1; i >= 0; i--) {
    const l = layers[i];
    if (isSpatialLayer(l)) {
      kernels.push(...spatialBackward(spatial, l, layers[i - 1]));
      continue;
    }
    // the gradient of the layer's input first: it reads the kernel before its update
    if (i > 0) kernels.push(dinputKernel(ctx, l, layers[i - 1]));
    kernels.push(updateKernel(ctx, l, 'kernel'));
    if (l.bias) kernels.push(updateKernel(ctx, l, 'bias'));
  }
  return { kernels, hyper, actsFloats, n, batch };
}

/** What the conv and pool kernels (src/step/wgsl-conv.ts) write with: this file's kernel text and rules. */
function spatialWriter(ctx: Ctx): SpatialWriter<WgslKernel> {
  return {
    n: ctx.n,
    batch: ctx.batch,
    kernel: (name, invocations) => new KernelText(name, invocations),
    activate,
    activationFns,
    dz: (k, l) => dzHelper(k, ctx, l),
    update: (k, p) => updateLines(k, ctx, p),
  };
}

interface Ctx {
  n: number;
  batch: number;
  hyper: string[];
  optimizer: string;
  slots: string[];
}

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
      const access = binding === 'x' || binding === 'y' || binding === 'hyper' ? 'read' : 'read_write';
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
  return l.kernel.layout === 'columns' ? `i * ${ctx.n * l.width}u + m * ${l.width}u + j` : `m * ${l.inWidth * l.width}u + i * ${l.width}u + j`;
}

/** The activation f(z), TF.js's WebGPU shaders' formulas. */
function activate(name: string, z: string): string {
  switch (name) {
    case 'linear':
      return z;
    case 'relu':
      return `max(${z}, 0.0)`;
    case 'sigmoid':
      return `1.0 / (1.0 + exp(-1.0 * ${z}))`;
    case 'tanh':
      return `tanh_tfjs(${z})`;
    case 'elu':
      return `select(exp(${z}) - 1.0, ${z}, ${z} >= 0.0)`;
    default:
      throw new Error(`internal error: no WGSL for the activation ${name}`);
  }
}

const TANH_FN = 'fn tanh_tfjs(a: f32) -> f32 {\n  let e2x = exp(-2.0 * abs(a));\n  return sign(a) * (1.0 - e2x) / (1.0 + e2x);\n}';

/** The WGSL functions an activation's formula calls. */
function activationFns(name: string): string {
  return name === 'tanh' ? TANH_FN : '';
}

/** dL/dz from dL/da and a = f(z), as autodiff's gradients of TF.js's activations compute it. */
function activationGrad(name: string, d: string, a: string): string {
  switch (name) {
    case 'linear':
      return d;
    case 'relu':
      return `select(0.0, ${d}, ${a} > 0.0)`;
    case 'sigmoid':
      return `${d} * (${a} * (1.0 - ${a}))`;
    case 'tanh':
      return `(1.0 - ${a} * ${a}) * ${d}`;
    case 'elu':
      return `select(${d} * (${a} + 1.0), ${d}, ${a} > 0.0)`;
    default:
      throw new Error(`internal error: no WGSL gradient for the activation ${name}`);
  }
}

/** The expression of member m's input (row b, unit i) of a layer. */
function inputAt(k: KernelText, ctx: Ctx, l: Layer): string {
  if (l.input.buffer === 'x') return `${k.buf('x')}[b * ${l.inWidth}u + i]`;
  return `${k.buf('acts')}[${l.input.at}u + (m * ${ctx.batch}u + b) * ${l.inWidth}u + i]`;
}

/** A WGSL function dz(m, b, j) of the layer: dL/da times f'(z), recomputed wherever it is read (the same code, the same value). */
function dzHelper(k: Pick<KernelText, 'buf'>, ctx: Ctx, l: Pick<Layer, 'activation' | 'width' | 'valuesAt' | 'gradAt'>): string {
  const acts = k.buf('acts');
  const at = `(m * ${ctx.batch}u + b) * ${l.width}u + j`;
  if (l.activation === 'softmax') {
    // autodiff's softmax gradient: dy y - sum(dy y) y, the row's sum in order
    const row = `(m * ${ctx.batch}u + b) * ${l.width}u`;
    return [
      `fn dz(m: u32, b: u32, j: u32) -> f32 {`,
      '  var s = 0.0;',
      `  for (var c = 0u; c < ${l.width}u; c++) {`,
      `    s = s + ${acts}[${l.gradAt}u + ${row} + c] * ${acts}[${l.valuesAt}u + ${row} + c];`,
      '  }',
      `  let a = ${acts}[${l.valuesAt}u + ${at}];`,
      `  return ${acts}[${l.gradAt}u + ${at}] * a - s * a;`,
      '}',
    ].join('\n');
  }
  return [
    `fn dz(m: u32, b: u32, j: u32) -> f32 {`,
    `  let a = ${acts}[${l.valuesAt}u + ${at}];`,
    `  let d = ${acts}[${l.gradAt}u + ${at}];`,
    `  return ${activationGrad(l.activation, 'd', 'a')};`,
    '}',
  ].join('\n');
}

function forwardKernel(ctx: Ctx, l: Layer): WgslKernel {
  if (l.activation === 'softmax') return softmaxForwardKernel(ctx, l);
  const k = new KernelText(`forward ${l.op.name}: dense(${l.width}, ${l.activation}), one invocation per member, row and unit`, ctx.n * ctx.batch * l.width);
  const w = k.buf(`param:${l.kernel.name}`);
  const input = inputAt(k, ctx, l);
  const bias = l.bias ? `  acc = acc + ${k.buf(`param:${l.bias.name}`)}[m * ${l.width}u + j];\n` : '';
  const acts = k.buf('acts');
  const body = [
    `  let m = idx / ${ctx.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${ctx.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    '  var acc = 0.0;',
    `  for (var i = 0u; i < ${l.inWidth}u; i++) {`,
    `    acc = fma(${input}, ${w}[${kernelIndex(ctx, l)}], acc);`,
    '  }',
    bias + `  ${acts}[${l.valuesAt}u + idx] = ${activate(l.activation, 'acc')};`,
  ].join('\n');
  return k.finish(body, activationFns(l.activation));
}

/** A softmax layer's forward pass: one invocation per member and row, as TF.js's softmax shader computes it (exp(z - max) / sum). */
function softmaxForwardKernel(ctx: Ctx, l: Layer): WgslKernel {
  const k = new KernelText(`forward ${l.op.name}: dense(${l.width}, softmax), one invocation per member and row`, ctx.n * ctx.batch);
  const w = k.buf(`param:${l.kernel.name}`);
  const input = inputAt(k, ctx, l);
  const bias = l.bias ? `    acc = acc + ${k.buf(`param:${l.bias.name}`)}[m * ${l.width}u + j];\n` : '';
  const acts = k.buf('acts');
  const out = `${acts}[${l.valuesAt}u + row + j]`;
  const body = [
    `  let m = idx / ${ctx.batch}u;`,
    `  let b = idx % ${ctx.batch}u;`,
    `  let row = idx * ${l.width}u;`,
    '  var top = -3.402823e+38;',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    '    var acc = 0.0;',
    `    for (var i = 0u; i < ${l.inWidth}u; i++) {`,
    `      acc = fma(${input}, ${w}[${kernelIndex(ctx, l)}], acc);`,
    '    }',
    bias + `    ${out} = acc;`,
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

function dinputKernel(ctx: Ctx, l: Layer, prev: ChainLayer): WgslKernel {
  const k = new KernelText(`backward ${l.op.name}: dL/d${prev.op.name}, one invocation per member, row and input unit`, ctx.n * ctx.batch * l.inWidth);
  const w = k.buf(`param:${l.kernel.name}`);
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

/** A parameter's gradient (summed over the member's rows in order) and its optimizer step, element by element. */
function updateKernel(ctx: Ctx, l: Layer, which: 'kernel' | 'bias'): WgslKernel {
  const p = which === 'kernel' ? l.kernel : l.bias!;
  const size = which === 'kernel' ? l.inWidth * l.width : l.width;
  const k = new KernelText(`update ${p.name}: its gradient and one ${ctx.optimizer} step, one invocation per member and element`, ctx.n * size);
  const helper = dzHelper(k, ctx, l);
  const lines = [`  let m = idx / ${size}u;`];
  let index: string;
  if (which === 'kernel') {
    lines.push(`  let i = (idx / ${l.width}u) % ${l.inWidth}u;`, `  let j = idx % ${l.width}u;`);
    index = kernelIndex(ctx, l);
    lines.push('  var g = 0.0;', `  for (var b = 0u; b < ${ctx.batch}u; b++) {`, `    g = fma(${inputAt(k, ctx, l)}, dz(m, b, j), g);`, '  }');
  } else {
    lines.push(`  let j = idx % ${l.width}u;`);
    index = `m * ${l.width}u + j`;
    lines.push('  var g = 0.0;', `  for (var b = 0u; b < ${ctx.batch}u; b++) {`, '    g = g + dz(m, b, j);', '  }');
  }
  lines.push(`  let at = ${index};`, ...updateLines(k, ctx, p));
  return k.finish(lines.join('\n'), helper);
}

/** The optimizer's step of member m's element `at` of p, from its gradient `g`. */
function updateLines(k: Pick<KernelText, 'buf'>, ctx: Ctx, p: WideParam): string[] {
  const h = (key: string) => `${k.buf('hyper')}[${ctx.hyper.indexOf(key) * ctx.n}u + m]`;
  const w = k.buf(`param:${p.name}`);
  const slot = (s: string) => k.buf(`slot:${p.name}:${s}`);
  return optimizerStep(ctx.optimizer, { w: `${w}[at]`, slot: (s) => `${slot(s)}[at]`, h });
}

/** The optimizer's rule on one element, with the op path's operations in its order (src/wasm/optimizer-update.ts). */
function optimizerStep(optimizer: string, at: { w: string; slot(name: string): string; h(key: string): string }): string[] {
  const { w, slot, h } = at;
  if (optimizer === 'sgd') {
    return [
      `  let w0 = ${w};`,
      `  let accum = ${slot('accum')} * ${h('momentum')} + g;`,
      `  ${slot('accum')} = accum;`,
      `  let step = select(accum, g + accum * ${h('momentum')}, ${h('nesterov')} > 0.5);`,
      `  ${w} = step * ${h('-lr')} + (w0 - w0 * ${h('weight_decay')} * ${h('lr')});`,
    ];
  }
  return [
    `  let mt = ${slot('m')} * ${h('beta1')} + g * ${h('1-beta1')};`,
    `  let vt = ${slot('v')} * ${h('beta2')} + g * g * ${h('1-beta2')};`,
    `  ${slot('m')} = mt;`,
    `  ${slot('v')} = vt;`,
    `  ${w} = mt / ${h('bc1')} / (sqrt(vt / ${h('bc2')}) + ${h('epsilon')}) * ${h('-lr')} + ${w};`,
  ];
}

const EPS = 1e-7;

/** The loss of one member: its batch mean, dL/d(output) into the output layer's gradient, and its metrics. */
function lossKernel(ctx: Ctx, out: ChainLayer, loss: string, metrics: readonly string[]): WgslKernel {
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
    ...(loss.endsWith('categorical_crossentropy') ? crossEntropyRow(ctx, K, p, label, `${acts}[${out.gradAt}u + base + j]`) : elementRow(ctx, loss, K, p, label, `${acts}[${out.gradAt}u + base + j]`)),
    ...metricLines(metrics, K, p, label, sparse ? `u32(${y}[b])` : undefined),
    '  }',
    `  ${k.buf('losses')}[m] = total / ${lit(ctx.batch)};`,
    ...metrics.map((name) => `  ${k.buf(`metric:${name}`)}[m] = sum_${name} / ${name === 'accuracy' ? lit(ctx.batch) : `(${lit(ctx.batch)} * ${lit(K)})`};`),
  ];
  return k.finish(lines.join('\n'));
}

/** An elementwise loss over one row (mse, mae, binary cross-entropy): each element's term and gradient, the row's mean added to `total`. */
function elementRow(ctx: Ctx, loss: string, K: number, p: (j: string) => string, label: (j: string) => string, grad: string): string[] {
  // the gradient of the two means: 1 / (B K) in one division where the op path writes the gradient out (binary cross-entropy), (1 / B) / K where autodiff takes one mean after the other
  const scale = loss === 'binary_crossentropy' ? Math.fround(1 / (ctx.batch * K)) : Math.fround(Math.fround(1 / ctx.batch) / K);
  return [
    '    var row = 0.0;',
    `    for (var j = 0u; j < ${K}u; j++) {`,
    `      let p = ${p('j')};`,
    `      let y = ${label('j')};`,
    ...elementLoss(loss, lit(scale)).map((line) => `      ${line}`),
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

/** One element's term (added to `row`) and `grad`, dL/dp of the batch mean. */
function elementLoss(loss: string, scale: string): string[] {
  switch (loss) {
    case 'mse':
      return ['let d = p - y;', 'row = row + d * d;', `let grad = ${scale} * (d * 2.0);`];
    case 'mae':
      return ['let d = p - y;', 'row = row + abs(d);', `let grad = sign(d) * ${scale};`];
    case 'binary_crossentropy':
      // Keras' clip to [eps, 1 - eps]; a clipped element (or NaN, which fails the range) passes no gradient
      return [
        `let q = min(max(p, ${lit(EPS)}), ${lit(1 - EPS)});`,
        'let rest = 1.0 - q;',
        'row = row - (y * log(q) + (1.0 - y) * log(rest));',
        `let grad = select(0.0, (q - y) / (q * rest) * ${scale}, p == q);`,
      ];
    default:
      throw new Error(`internal error: no WGSL for the loss ${loss}`);
  }
}
