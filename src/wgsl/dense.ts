// The WGSL step's dense layers and weightless activation layers (relu(), leaky_relu(alpha), softmax(), ...):
//
//   forward_l    one invocation per (member, row, unit): a_l = f(a_{l-1} · kernel + bias); a softmax one per
//                (member, row), as TF.js's softmax shader computes it (exp(z - max) / sum)
//   dinput_l     one invocation per (member, row, input unit): dL/da_{l-1} = dz_l · kernel^T (before the update)
//   update_p     one invocation per element of a member's parameter: its gradient, summed over the rows, and
//                the optimizer step (where any member clips: its gradient into scratch, then the step's norm
//                and clipped-update kernels)
//
// An activation layer is a forward kernel and a dinput kernel of its own, elementwise. The kinds' rules
// (src/layers/dense.ts, activation-layers.ts) build the layer and call these; what they share with the step
// (the kernel text, the activations' text and gradients, the optimizer's update, clipping) comes in as a
// DenseWriter.
import { gradReadsZ, LEAKY_RELU_ALPHA } from '../math/activations.js';
import { lit, type KernelWriter, paramBuffer } from './kernel-text.js';
import type { ChainBase, ChainValues, WgslOp, WgslParam } from './chain.js';
import type { SpatialLayer, SpatialWriter } from './conv.js';

/** A parameter's element as clipping's later kernels read it: the lines naming member m and its indices from idx, and its place in the fused tensor. */
export interface Element {
  p: WgslParam;
  size: number;
  lines: string[];
  index: string;
}

/** Where a layer's input's gradient goes: a region of `acts` (the value's own gradient, or one of its extra ones). */
type Target = { op: { name: string }; gradAt: number };

/** What the dense and activation kernels borrow from the step: the spatial writer's parts, its optimizer's name, hyperparameters and activations with a slope. */
export interface DenseWriter<K> extends Pick<SpatialWriter<K>, 'n' | 'batch' | 'kernel' | 'activationFns' | 'update' | 'clipped'> {
  optimizer: string;
  /** f(z); leaky_relu's with slope `alpha` */
  activate(name: string, z: string, alpha?: string): string;
  /** the WGSL function dz(m, b, j) of a layer: dL/d(values) times f'(z) */
  dz(k: KernelWriter<K>, l: ChainValues): string;
  /** member m's value of a hyperparameter key */
  hyper(k: Pick<KernelWriter<K>, 'buf'>, key: string): string;
}

/** The expression of member m's input (row b, unit `unit`) of a layer. */
export function inputAt(k: Pick<KernelWriter<unknown>, 'buf'>, batch: number, l: Pick<ChainValues, 'input' | 'inWidth'>, unit = 'i'): string {
  if (l.input.buffer === 'x') return `${k.buf('x')}[b * ${l.inWidth}u + ${unit}]`;
  if (l.input.shared) return `${k.buf('acts')}[${l.input.at}u + b * ${l.inWidth}u + ${unit}]`;
  return `${k.buf('acts')}[${l.input.at}u + (m * ${batch}u + b) * ${l.inWidth}u + ${unit}]`;
}

/** Index of member m's element (i, j) of a dense kernel [in, out] in its fused tensor. */
export function kernelIndex(n: number, l: Pick<ChainValues, 'kernel' | 'width' | 'inWidth'>): string {
  if (l.kernel!.layout === 'shared') return `i * ${l.width}u + j`;
  return l.kernel!.layout === 'columns' ? `i * ${n * l.width}u + m * ${l.width}u + j` : `m * ${l.inWidth * l.width}u + i * ${l.width}u + j`;
}

/** Index of member m's element j of a dense bias: a shared layer's one copy, or member m's. */
const biasIndex = (l: Pick<ChainValues, 'bias' | 'width'>): string => (l.bias!.layout === 'shared' ? 'j' : `m * ${l.width}u + j`);

/** leaky_relu's slope for member m: TF's fixed one (a dense layer's activation), or the layer's own per-member value. */
export function slopeOf<K>(w: Pick<DenseWriter<K>, 'hyper'>, k: Pick<KernelWriter<K>, 'buf'>, l: Pick<ChainValues, 'op' | 'alpha'>): string {
  if (!l.alpha) throw new Error(`internal error: ${l.op.name} has no leaky_relu slope`);
  return 'key' in l.alpha ? w.hyper(k, l.alpha.key) : lit(l.alpha.value);
}

/** A dense layer's forward kernel: one invocation per member, row and unit (a softmax's per member and row). */
export function denseForwardKernel<K>(w: DenseWriter<K>, l: ChainValues): K {
  if (l.activation === 'softmax') return softmaxForwardKernel(w, l);
  if (!l.kernel) throw new Error(`internal error: the dense layer ${l.op.name} has no kernel`);
  const per = l.op.shared ? "one invocation per row and unit (a shared layer on the shared input: its value is every member's)" : 'one invocation per member, row and unit';
  const k = w.kernel(`forward ${l.op.name}: dense(${l.width}, ${l.activation}), ${per}`, w.n * w.batch * l.width);
  const weights = k.buf(paramBuffer(l.kernel.name));
  const input = inputAt(k, w.batch, l);
  const bias = l.bias ? `  acc = acc + ${k.buf(paramBuffer(l.bias.name))}[${biasIndex(l)}];\n` : '';
  const acts = k.buf('acts');
  // gelu's and swish's gradients read z: it is kept
  const z = l.zAt !== undefined ? `  ${acts}[${l.zAt}u + idx] = acc;\n` : '';
  const body = [
    `  let m = idx / ${w.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${w.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    '  var acc = 0.0;',
    `  for (var i = 0u; i < ${l.inWidth}u; i++) {`,
    `    acc = fma(${input}, ${weights}[${kernelIndex(w.n, l)}], acc);`,
    '  }',
    bias + z + `  ${acts}[${l.valuesAt}u + idx] = ${w.activate(l.activation, 'acc', l.alpha ? slopeOf(w, k, l) : '')};`,
  ].join('\n');
  return k.finish(body, w.activationFns(l.activation));
}

/** A weightless activation layer's forward pass, elementwise: one invocation per member, row and unit. */
function activationForwardKernel<K>(w: DenseWriter<K>, l: ChainValues): K {
  const k = w.kernel(`forward ${l.op.name}: ${l.activation}(), one invocation per member, row and unit`, w.n * w.batch * l.width);
  const input = inputAt(k, w.batch, l, 'j');
  const alpha = l.alpha ? slopeOf(w, k, l) : '';
  const body = [
    `  let m = idx / ${w.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${w.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    `  let z = ${input};`,
    `  ${k.buf('acts')}[${l.valuesAt}u + idx] = ${w.activate(l.activation, 'z', alpha)};`,
  ].join('\n');
  return k.finish(body, w.activationFns(l.activation));
}

/** A weightless activation layer's backward pass: dL/d(its input) = dz, elementwise. */
export function activationBackward<K>(w: DenseWriter<K>, l: ChainValues, prev: Target): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name} through ${l.activation}(), one invocation per member, row and unit`, w.n * w.batch * l.width);
  const helper = w.dz(k, l);
  const body = [
    `  let m = idx / ${w.batch * l.width}u;`,
    `  let b = (idx / ${l.width}u) % ${w.batch}u;`,
    `  let j = idx % ${l.width}u;`,
    `  ${k.buf('acts')}[${prev.gradAt}u + idx] = dz(m, b, j);`,
  ].join('\n');
  return k.finish(body, helper);
}

/** A softmax layer's forward pass (dense, or the softmax() layer): one invocation per member and row, as TF.js's softmax shader computes it (exp(z - max) / sum). */
function softmaxForwardKernel<K>(w: DenseWriter<K>, l: ChainValues, name?: string): K {
  const k = w.kernel(name ?? (l.kernel ? `forward ${l.op.name}: dense(${l.width}, softmax), one invocation per member and row` : `forward ${l.op.name}: softmax(), one invocation per member and row`), w.n * w.batch);
  const pre: string[] = [];
  if (l.kernel) {
    const weights = k.buf(paramBuffer(l.kernel.name));
    const input = inputAt(k, w.batch, l);
    pre.push('    var acc = 0.0;', `    for (var i = 0u; i < ${l.inWidth}u; i++) {`, `      acc = fma(${input}, ${weights}[${kernelIndex(w.n, l)}], acc);`, '    }');
    if (l.bias) pre.push(`    acc = acc + ${k.buf(paramBuffer(l.bias.name))}[${biasIndex(l)}];`);
  } else pre.push(`    let acc = ${inputAt(k, w.batch, l, 'j')};`);
  const acts = k.buf('acts');
  const out = `${acts}[${l.valuesAt}u + row + j]`;
  const body = [
    `  let m = idx / ${w.batch}u;`,
    `  let b = idx % ${w.batch}u;`,
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
export function softmaxCells<K>(w: DenseWriter<K>, l: SpatialLayer): K {
  const cells = l.g.oh * l.g.ow;
  const rows = { ...w, batch: w.batch * cells };
  const own = { ...l, kernel: undefined, bias: undefined, width: l.f, inWidth: l.f, input: { buffer: 'acts', at: l.valuesAt } } satisfies ChainValues;
  return softmaxForwardKernel(rows, own, `forward ${l.op.name}: softmax over each cell's ${l.f} channels, in place, one invocation per ${l.op.shared ? '' : 'member, '}row and output cell`);
}

/** A dense layer's dL/d(its input): one invocation per member, row and input unit. */
export function denseDinput<K>(w: DenseWriter<K>, l: ChainValues, prev: Target): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name}, one invocation per member, row and input unit`, w.n * w.batch * l.inWidth);
  const weights = k.buf(paramBuffer(l.kernel!.name));
  const helper = w.dz(k, l);
  const body = [
    `  let m = idx / ${w.batch * l.inWidth}u;`,
    `  let b = (idx / ${l.inWidth}u) % ${w.batch}u;`,
    `  let i = idx % ${l.inWidth}u;`,
    '  var acc = 0.0;',
    `  for (var j = 0u; j < ${l.width}u; j++) {`,
    `    acc = fma(dz(m, b, j), ${weights}[${kernelIndex(w.n, l)}], acc);`,
    '  }',
    `  ${k.buf('acts')}[${prev.gradAt}u + idx] = acc;`,
  ].join('\n');
  return k.finish(body, helper);
}

/** A parameter's update: one kernel, or, where members clip, its gradient into scratch, the members' norms, and the clipped step. */
export function denseUpdates<K>(w: DenseWriter<K>, l: ChainValues, which: 'kernel' | 'bias'): K[] {
  if (!w.clipped) return [updateKernel(w, l, which)];
  return [gradientKernel(w, l, which, w.clipped), ...w.clipped.kernels(elementOf(w, l, which))];
}

/** The parameter, its size per member, and the lines naming member m's element of invocation idx (and its index in the fused tensor). */
function elementOf<K>(w: DenseWriter<K>, l: ChainValues, which: 'kernel' | 'bias'): Element {
  const p = which === 'kernel' ? l.kernel! : l.bias!;
  const size = which === 'kernel' ? l.inWidth * l.width : l.width;
  const lines = [`  let m = idx / ${size}u;`];
  if (which === 'kernel') {
    lines.push(`  let i = (idx / ${l.width}u) % ${l.inWidth}u;`, `  let j = idx % ${l.width}u;`);
    return { p, size, lines, index: kernelIndex(w.n, l) };
  }
  lines.push(`  let j = idx % ${l.width}u;`);
  return { p, size, lines, index: `m * ${l.width}u + j` };
}

/** The lines summing member m's gradient g of its element over its rows, in order. */
function gradientLines<K>(k: KernelWriter<K>, w: DenseWriter<K>, l: ChainValues, which: 'kernel' | 'bias'): string[] {
  const term = which === 'kernel' ? `    g = fma(${inputAt(k, w.batch, l)}, dz(m, b, j), g);` : '    g = g + dz(m, b, j);';
  return ['  var g = 0.0;', `  for (var b = 0u; b < ${w.batch}u; b++) {`, term, '  }'];
}

/** Clipping's first kernel: each element's gradient, summed over the member's rows, into the scratch [N, size]. */
function gradientKernel<K>(w: DenseWriter<K>, l: ChainValues, which: 'kernel' | 'bias', clip: NonNullable<DenseWriter<K>['clipped']>): K {
  const { p, size, lines } = elementOf(w, l, which);
  const k = w.kernel(`gradient ${p.name}: summed over the member's rows, into scratch for clipnorm, one invocation per member and element`, w.n * size);
  const helper = w.dz(k, l);
  lines.push(...gradientLines(k, w, l, which), ...clip.store(k));
  return k.finish(lines.join('\n'), helper);
}

/** A parameter's gradient (summed over the member's rows in order) and its optimizer step, element by element. */
function updateKernel<K>(w: DenseWriter<K>, l: ChainValues, which: 'kernel' | 'bias'): K {
  const { p, size, lines, index } = elementOf(w, l, which);
  const k = w.kernel(`update ${p.name}: its gradient and one ${w.optimizer} step, one invocation per member and element`, w.n * size);
  const helper = w.dz(k, l);
  lines.push(...gradientLines(k, w, l, which), `  let at = ${index};`, ...w.update(k, p));
  return k.finish(lines.join('\n'), helper);
}

/** A weightless activation layer's forward kernel: softmax's per member and row, the others' elementwise. */
export function activationForward<K>(w: DenseWriter<K>, l: ChainValues): K {
  return l.activation === 'softmax' ? softmaxForwardKernel(w, l) : activationForwardKernel(w, l);
}

/** Why the WGSL step does not cover a dense or conv op's activation (its kernels write `activations`), or undefined where it does. */
export function whyNotActivation(op: Pick<WgslOp, 'name' | 'attrs'>, activations: ReadonlySet<string>): string | undefined {
  const activation = String(op.attrs.activation ?? 'linear');
  return activations.has(activation) ? undefined : `the ${activation} activation (${op.name})`;
}

/**
 * A dense layer's or conv's activation (its `activation` argument; a pool's is linear), with z kept in its
 * own region where the gradient reads it (gelu, swish), and leaky_relu's fixed slope (TF's).
 */
export function activationOf(b: { base: ChainBase; members: number; batch: number; acts(floats: number): number }): Pick<ChainValues, 'activation' | 'zAt' | 'alpha'> {
  const activation = String(b.base.op.attrs.activation ?? 'linear');
  const zAt = gradReadsZ(activation) ? b.acts(b.members * b.batch * b.base.width) : undefined;
  return { activation, zAt, alpha: activation === 'leaky_relu' ? { value: LEAKY_RELU_ALPHA } : undefined };
}
