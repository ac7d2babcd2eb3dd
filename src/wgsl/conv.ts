// The WGSL step's conv2d, maxpool2d and avgpool2d (flatten moves nothing: a member's example is row-major
// already, so the layer after it reads the pool's values as they lie). Each kernel follows the webgpu op
// path's arithmetic (src/kernels/conv.ts, TF.js's webgpu conv, pool and pool-gradient shaders), one
// invocation per output element, every sum one invocation's loop in a fixed order:
//
//   forward        one invocation per (member, row, output cell, channel): the window's sum over (p, q, c)
//                  with fma, + bias, the activation; the window's max (or its mean over its valid inputs)
//   input grad     one invocation per (member, row, input cell, channel): dz gathered from the windows that
//                  hold the cell, kernel rows and columns from the last (as the op path's correlation with
//                  the flipped kernel sums); max pooling passes dy to the window's last largest input
//   kernel grad    one invocation per (member, element): the sum over (row, cell) of input x dz, in the
//                  op path's order (a columns kernel on the shared input and a shared kernel: rows, then
//                  cells, as its matMul of patches; a stacked kernel, or a columns one on a shared layer's
//                  value: cells, then rows, as its dilated conv), then the update
//
// A shared conv2d (one [kh, kw, C, F] kernel for every member) on the shared input, or on another shared
// layer's value there, is computed once, as for one member ([B, H, W, F]); its parameters' gradients sum
// every member's rows, member after member where it reads members' values, and src/wgsl/shared.ts
// steps them with the file's hyperparameters (SpatialWriter.shared). A member's conv on a shared layer's
// value sums its input's gradient over the members, their filters inside each kernel cell, as the op
// path's one conv of all members' N*F channels does.
//
// Where any member clips (clipnorm), a parameter's kernel above stores its gradient into the step's scratch
// instead, and the step's norm and clipped-update kernels follow it (SpatialWriter.clipped).
//
// Padding is never materialised: a padded input is zero (-inf for the max), so the op path's terms of it
// add nothing, and skipping them leaves every sum as it is. Nothing is summed across members but a
// shared layer's gradients.
//
// The kinds' rules (src/layers/conv2d.ts, pool2d.ts) build the layer and call these; what the kernels share
// with the step (the kernel text, activations, the dz helper, the optimizer's update) comes in as a SpatialWriter.
import type { Spatial } from '../wasm/conv.js';
import { u, type ChainValues, type WgslParam } from './chain.js';
import { type KernelWriter, paramBuffer } from './kernel-text.js';

/** A conv or pool of the chain, as the kernels see it. */
export interface SpatialLayer extends ChainValues {
  family: 'spatial';
  kind: 'conv2d' | 'maxpool2d' | 'avgpool2d';
  g: Spatial;
  /** output channels: the conv's filters, the pool's input channels */
  f: number;
  /** a max pool's gradient to every input equal to its window's max (TF.js's gradient of tf.max: a global max pool's), not to the last largest only */
  ties?: true;
}

/** The conv or pool layer of `kind` over window `g` (its rule works it out from the op and its input's [H, W, C]), with `f` output channels. */
export function spatialLayer(l: Omit<SpatialLayer, 'family' | 'kind' | 'g' | 'f' | 'clipFloats'>, kind: SpatialLayer['kind'], g: Spatial, f: number): SpatialLayer {
  return { ...l, family: 'spatial', kind, g, f, clipFloats: l.kernel ? g.kh * g.kw * g.c * f : 0 };
}

/** What the spatial kernels borrow from the step: its sizes, the kernel text, and the rules every layer shares. */
export interface SpatialWriter<K> {
  n: number;
  batch: number;
  kernel(name: string, invocations: number): KernelWriter<K>;
  /** f(z) */
  activate(name: string, z: string): string;
  /** the WGSL functions f(z) calls */
  activationFns(name: string): string;
  /** the WGSL function dz(m, b, j) of a layer: dL/d(values) times f'(z), j an index into a member's example */
  dz(k: KernelWriter<K>, l: SpatialLayer): string;
  /** the optimizer's step of parameter p's element `at`, from its gradient `g` */
  update(k: KernelWriter<K>, p: WgslParam): string[];
  /**
   * where any member clips (clipnorm): the lines that store the gradient `g` of element idx into the scratch
   * [N, size], and the kernels after it (each member's norm; the clipped step, `lines` naming member m and the
   * element's indices from idx, `index` its place in the parameter)
   */
  clipped?: {
    store(k: KernelWriter<K>): string[];
    kernels(element: { p: WgslParam; size: number; lines: string[]; index: string }): K[];
  };
  /** a shared layer's parameter (src/wgsl/shared.ts): the kernel(s) of its gradient, summed by `build`'s lines, and one step with the file's hyperparameters */
  shared?(p: WgslParam, size: number, build: (k: KernelWriter<K>) => { lines: string[]; helper: string }): K[];
}

const i = (v: number): string => `${v}`;

/** Member m's input element (row b, flat cell index `cell` of [H, W], channel c) of a layer: an expression. */
function inputAt<K>(k: KernelWriter<K>, w: SpatialWriter<K>, l: SpatialLayer, cell: string, c: string): string {
  const at = `${cell} * ${u(l.g.c)} + ${c}`;
  if (l.input.buffer === 'x') return `${k.buf('x')}[b * ${u(l.inWidth)} + ${at}]`;
  // a shared layer's value on the shared input: one for every member, [B, width]
  if (l.input.shared) return `${k.buf('acts')}[${u(l.input.at)} + b * ${u(l.inWidth)} + ${at}]`;
  return `${k.buf('acts')}[${u(l.input.at)} + (m * ${u(w.batch)} + b) * ${u(l.inWidth)} + ${at}]`;
}

/** Index of member m's element (p, q, c, f) of a conv kernel: [kh, kw, C, N*F] (columns), [N, kh, kw, C, F] (stacked) or a shared layer's one [kh, kw, C, F]. */
function kernelIndex<K>(w: SpatialWriter<K>, l: SpatialLayer, p: string, q: string, c: string, f: string): string {
  const { kh, kw, c: C } = l.g;
  const row = `(u32(${p}) * ${u(kw)} + u32(${q})) * ${u(C)} + ${c}`;
  if (l.kernel!.layout === 'shared') return `(${row}) * ${u(l.f)} + ${f}`;
  if (l.kernel!.layout === 'columns') return `(${row}) * ${u(w.n * l.f)} + m * ${u(l.f)} + ${f}`;
  return `m * ${u(kh * kw * C * l.f)} + (${row}) * ${u(l.f)} + ${f}`;
}

/** Lines that split `idx` into member m, row b, output cell (oy, ox) and channel `ch`. */
function outputCoords<K>(w: SpatialWriter<K>, l: SpatialLayer): string[] {
  const { oh, ow } = l.g;
  return [
    `  let m = idx / ${u(w.batch * l.width)};`,
    `  let b = (idx / ${u(l.width)}) % ${u(w.batch)};`,
    `  let cell = (idx / ${u(l.f)}) % ${u(oh * ow)};`,
    `  let ch = idx % ${u(l.f)};`,
    `  let oy = i32(cell / ${u(ow)});`,
    `  let ox = i32(cell % ${u(ow)});`,
  ];
}

/** Lines that split `idx` into member m, row b, input cell (iy, ix) and channel `c`. */
function inputCoords<K>(w: SpatialWriter<K>, l: SpatialLayer): string[] {
  const { h, w: wd, c } = l.g;
  return [
    `  let m = idx / ${u(w.batch * l.inWidth)};`,
    `  let b = (idx / ${u(l.inWidth)}) % ${u(w.batch)};`,
    `  let pix = (idx / ${u(c)}) % ${u(h * wd)};`,
    `  let c = idx % ${u(c)};`,
    `  let iy = i32(pix / ${u(wd)});`,
    `  let ix = i32(pix % ${u(wd)});`,
  ];
}

/** Loops over the window of output cell (oy, ox): its valid input cells (iy, ix), kernel rows p and columns q in order. */
function windowLoops(g: Spatial, body: string[], indent = '  '): string[] {
  return [
    `for (var p = 0; p < ${i(g.kh)}; p++) {`,
    `  let iy = oy * ${i(g.sh)} + p - ${i(g.pt)};`,
    `  if (iy < 0 || iy >= ${i(g.h)}) { continue; }`,
    `  for (var q = 0; q < ${i(g.kw)}; q++) {`,
    `    let ix = ox * ${i(g.sw)} + q - ${i(g.pl)};`,
    `    if (ix < 0 || ix >= ${i(g.w)}) { continue; }`,
    ...body.map((line) => `    ${line}`),
    '  }',
    '}',
  ].map((line) => indent + line);
}

/**
 * Loops over the output cells (oy, ox) whose windows hold input cell (iy, ix), kernel rows p and columns q
 * from the last to the first (the order of the op path's gradients: a correlation with the flipped kernel,
 * TF.js's pool-gradient shaders).
 */
function gatherLoops(g: Spatial, body: string[]): string[] {
  return [
    `for (var p = ${i(g.kh - 1)}; p >= 0; p--) {`,
    `  let ty = iy + ${i(g.pt)} - p;`,
    `  if (ty < 0 || ty % ${i(g.sh)} != 0 || ty / ${i(g.sh)} >= ${i(g.oh)}) { continue; }`,
    `  let oy = ty / ${i(g.sh)};`,
    `  for (var q = ${i(g.kw - 1)}; q >= 0; q--) {`,
    `    let tx = ix + ${i(g.pl)} - q;`,
    `    if (tx < 0 || tx % ${i(g.sw)} != 0 || tx / ${i(g.sw)} >= ${i(g.ow)}) { continue; }`,
    `    let ox = tx / ${i(g.sw)};`,
    ...body.map((line) => `    ${line}`),
    '  }',
    '}',
  ].map((line) => '  ' + line);
}

/** A kernel name's words for whom it runs: each member, or (a shared layer's value on the shared input) once for every member. */
const perMember = (l: SpatialLayer): string => (l.op.shared ? '' : 'member, ');
const onceNote = (l: SpatialLayer): string => (l.op.shared ? " (on the shared input: its value is every member's)" : '');

const describe = (l: SpatialLayer): string => {
  const { kh, kw, sh, sw } = l.g;
  const padding = String(l.op.attrs.padding ?? 'valid');
  return l.kind === 'conv2d' ? `conv2d(${l.f}, kernel ${kh}x${kw}, stride ${sh}x${sw}, ${padding}, ${l.activation})` : `${l.kind}(${kh}x${kw}, stride ${sh}x${sw}, ${padding})`;
};

/** The forward kernel of a conv or pool. */
export function spatialForward<K>(w: SpatialWriter<K>, l: SpatialLayer): K {
  const k = w.kernel(`forward ${l.op.name}: ${describe(l)}, one invocation per ${perMember(l)}row, output cell and channel${onceNote(l)}`, w.n * w.batch * l.width);
  const acts = k.buf('acts');
  const lines = outputCoords(w, l);
  const x = inputAt(k, w, l, `u32(iy * ${i(l.g.w)} + ix)`, l.kind === 'conv2d' ? 'c' : 'ch');
  if (l.kind === 'conv2d') {
    const weight = `${k.buf(paramBuffer(l.kernel!.name))}[${kernelIndex(w, l, 'p', 'q', 'c', 'ch')}]`;
    lines.push('  var acc = 0.0;', ...windowLoops(l.g, [`for (var c = 0u; c < ${u(l.g.c)}; c++) {`, `  acc = fma(${x}, ${weight}, acc);`, '}']));
    if (l.bias) lines.push(`  acc = acc + ${k.buf(paramBuffer(l.bias.name))}[${l.bias.layout === 'shared' ? 'ch' : `m * ${u(l.f)} + ch`}];`);
    // gelu's and swish's gradients read z: it is kept
    if (l.zAt !== undefined) lines.push(`  ${acts}[${u(l.zAt)} + idx] = acc;`);
    // softmax: z here, normalised over each cell's F channels by the kernel after this one (the conv2d rule's forward, src/wgsl/dense.ts' softmaxCells)
    lines.push(`  ${acts}[${u(l.valuesAt)} + idx] = ${l.activation === 'softmax' ? 'acc' : w.activate(l.activation, 'acc')};`);
    return k.finish(lines.join('\n'), l.activation === 'softmax' ? '' : w.activationFns(l.activation));
  }
  if (l.kind === 'maxpool2d') {
    // TF.js's pool shader starts from -1e20 (-1.0 / pow(10.0, -20.0)); every window holds an input
    lines.push('  var r = -1e20;', ...windowLoops(l.g, [`r = max(${x}, r);`]));
  } else {
    // the mean of the window's valid inputs (TF's 'same' counts no padding)
    lines.push('  var s = 0.0;', '  var count = 0.0;', ...windowLoops(l.g, [`s = s + ${x};`, 'count = count + 1.0;']), '  let r = s / max(count, 1.0);');
  }
  lines.push(`  ${acts}[${u(l.valuesAt)} + idx] = r;`);
  return k.finish(lines.join('\n'));
}

/** The backward kernels of a conv or pool, in order: dL/d(input) (before the update reads the kernel), the kernel's and the bias's updates. */
export function spatialBackward<K>(w: SpatialWriter<K>, l: SpatialLayer, prev: { op: { name: string }; gradAt: number } | undefined): K[] {
  const out: K[] = [];
  if (prev) out.push(l.kind === 'conv2d' ? convInputGrad(w, l, prev) : poolInputGrad(w, l, prev));
  if (l.kind !== 'conv2d') return out;
  out.push(...convKernelUpdate(w, l));
  if (l.bias) out.push(...convBiasUpdate(w, l));
  return out;
}

/** A member's conv on a shared layer's value (one for every member): its input's gradient is every member's, summed. */
const readsShared = (l: SpatialLayer): boolean => l.input.buffer === 'acts' && !!l.input.shared && !l.op.shared;

/**
 * dL/d(input) of a conv: dz gathered through the kernel, over (p, q) from the last, then the filters. A
 * member's conv on a shared layer's value: one invocation per (row, input cell, channel), the filters of
 * member after member inside (p, q), as the op path's one conv of all members' N*F channels sums them.
 */
function convInputGrad<K>(w: SpatialWriter<K>, l: SpatialLayer, prev: { op: { name: string }; gradAt: number }): K {
  const summed = readsShared(l);
  const per = summed ? " (the shared layer's value), summed over the members, one invocation per row, input cell and channel" : `, one invocation per ${perMember(l)}row, input cell and channel${onceNote(l)}`;
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name}${per}`, (summed ? 1 : w.n) * w.batch * l.inWidth);
  const helper = w.dz(k, l);
  const weight = `${k.buf(paramBuffer(l.kernel!.name))}[${kernelIndex(w, l, 'p', 'q', 'c', 'f')}]`;
  const dz = `dz(m, b, u32(oy * ${i(l.g.ow)} + ox) * ${u(l.f)} + f)`;
  const filters = [`for (var f = 0u; f < ${u(l.f)}; f++) {`, `  acc = fma(${dz}, ${weight}, acc);`, '}'];
  const inner = summed ? [`for (var m = 0u; m < ${u(w.n)}; m++) {`, ...filters.map((s) => `  ${s}`), '}'] : filters;
  const lines = [
    ...inputCoords(w, l).slice(summed ? 1 : 0),
    '  var acc = 0.0;',
    ...gatherLoops(l.g, inner),
    `  ${k.buf('acts')}[${u(prev.gradAt)} + idx] = acc;`,
  ];
  return k.finish(lines.join('\n'), helper);
}

/**
 * dL/d(input) of a pool, as TF.js's pool-gradient shaders compute it: each window's dy to its last largest
 * input (times a 0/1 mask), or dy times 1 / (window size) (TF.js's multiplier, also where 'same' padding
 * left a window fewer inputs than its size).
 */
function poolInputGrad<K>(w: SpatialWriter<K>, l: SpatialLayer, prev: { op: { name: string }; gradAt: number }): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name}, one invocation per ${perMember(l)}row, input cell and channel${onceNote(l)}`, w.n * w.batch * l.inWidth);
  const acts = k.buf('acts');
  const dy = `${acts}[${u(l.gradAt)} + (m * ${u(w.batch)} + b) * ${u(l.width)} + u32(oy * ${i(l.g.ow)} + ox) * ${u(l.f)} + c]`;
  const lines = [...inputCoords(w, l), '  var acc = 0.0;'];
  if (l.kind === 'avgpool2d') {
    lines.push(...gatherLoops(l.g, [`acc = acc + ${dy} * ${Math.fround(1 / (l.g.kh * l.g.kw)).toPrecision(9)};`]));
  } else if (l.ties) {
    // dy * (x == y ? 1 : 0), as TF.js's gradient of tf.max: every tied input gets dy
    const x = inputAt(k, w, l, `u32(iy * ${i(l.g.w)} + ix)`, 'c');
    const y = `${acts}[${u(l.valuesAt)} + (m * ${u(w.batch)} + b) * ${u(l.width)} + u32(oy * ${i(l.g.ow)} + ox) * ${u(l.f)} + c]`;
    lines.push(...gatherLoops(l.g, [`acc = acc + ${dy} * select(0.0, 1.0, ${x} == ${y});`]));
  } else {
    // the window's last largest input, as TF.js's max-position shader finds it (value >= the max so far)
    const x = inputAt(k, w, l, `u32(wy * ${i(l.g.w)} + wx)`, 'c');
    const g = l.g;
    lines.push(
      ...gatherLoops(g, [
        'var best = 0.0;',
        'var found = false;',
        'var at = -1;',
        `for (var p2 = 0; p2 < ${i(g.kh)}; p2++) {`,
        `  let wy = oy * ${i(g.sh)} + p2 - ${i(g.pt)};`,
        `  if (wy < 0 || wy >= ${i(g.h)}) { continue; }`,
        `  for (var q2 = 0; q2 < ${i(g.kw)}; q2++) {`,
        `    let wx = ox * ${i(g.sw)} + q2 - ${i(g.pl)};`,
        `    if (wx < 0 || wx >= ${i(g.w)}) { continue; }`,
        `    let v = ${x};`,
        '    if (!found || v >= best) { best = v; found = true; at = p2 * ' + i(g.kw) + ' + q2; }',
        '  }',
        '}',
        `acc = acc + ${dy} * select(0.0, 1.0, at == p * ${i(g.kw)} + q);`,
      ]),
    );
  }
  lines.push(`  ${acts}[${u(prev.gradAt)} + idx] = acc;`);
  return k.finish(lines.join('\n'));
}

/**
 * The lines summing member m's gradient `g` of element (p, q, c, f) of a conv kernel over its rows and
 * output cells, in the op path's order: by patches (its matMul of them, rows (b, oy, ox) in order) for a
 * columns kernel on the shared input and for a shared kernel (conv2dOfData, conv2dOfRows); by a dilated
 * conv, over (oy, ox, b), for a member's own kernel and for a columns kernel on a shared layer's value. A
 * shared kernel on members' values sums their rows folded into one batch, member after member.
 */
function kernelSum<K>(k: KernelWriter<K>, w: SpatialWriter<K>, l: SpatialLayer): string[] {
  const { oh, ow } = l.g;
  const x = inputAt(k, w, l, `u32(iy * ${i(l.g.w)} + ix)`, 'c');
  const term = [
    `let iy = oy * ${i(l.g.sh)} + p - ${i(l.g.pt)};`,
    `let ix = ox * ${i(l.g.sw)} + q - ${i(l.g.pl)};`,
    `if (iy >= 0 && iy < ${i(l.g.h)} && ix >= 0 && ix < ${i(l.g.w)}) {`,
    `  g = fma(${x}, dz(m, b, u32(oy * ${i(ow)} + ox) * ${u(l.f)} + f), g);`,
    '}',
  ];
  const rows = (inner: string[]) => [`for (var b = 0u; b < ${u(w.batch)}; b++) {`, ...inner.map((s) => `  ${s}`), '}'];
  const cells = (inner: string[]) => [`for (var oy = 0; oy < ${i(oh)}; oy++) {`, `  for (var ox = 0; ox < ${i(ow)}; ox++) {`, ...inner.map((s) => `    ${s}`), '  }', '}'];
  const layout = l.kernel!.layout;
  const patches = layout === 'shared' || (layout === 'columns' && l.input.buffer === 'x');
  return ['  var g = 0.0;', ...overMembers(w, l, patches ? rows(cells(term)) : cells(rows(term))).map((s) => `  ${s}`)];
}

/** A shared layer's loops on members' values: member after member (on the shared input its value is one, m = 0); anyone else's as they are. */
function overMembers<K>(w: SpatialWriter<K>, l: SpatialLayer, loops: string[]): string[] {
  if (l.kernel?.layout !== 'shared') return loops;
  if (l.op.shared) return ['let m = 0u;', ...loops];
  return [`for (var m = 0u; m < ${u(w.n)}; m++) {`, ...loops.map((s) => `  ${s}`), '}'];
}

/** A conv kernel's gradient, element by element (the sum over the member's rows and output cells in the op path's order), and its update. */
function convKernelUpdate<K>(w: SpatialWriter<K>, l: SpatialLayer): K[] {
  const p = l.kernel!;
  const { kh, kw, c: C } = l.g;
  const size = kh * kw * C * l.f;
  const head = [
    ...(p.layout === 'shared' ? [] : [`  let m = idx / ${u(size)};`]),
    `  let p = i32((idx / ${u(kw * C * l.f)}) % ${u(kh)});`,
    `  let q = i32((idx / ${u(C * l.f)}) % ${u(kw)});`,
    `  let c = (idx / ${u(l.f)}) % ${u(C)};`,
    `  let f = idx % ${u(l.f)};`,
  ];
  if (p.layout === 'shared') return w.shared!(p, size, (k) => {
      const helper = w.dz(k, l);
      return { lines: [...head, ...kernelSum(k, w, l)], helper };
    });
  const k = w.kernel(w.clipped ? gradientName(p) : `update ${p.name}: its gradient and one optimizer step, one invocation per member and element`, w.n * size);
  const helper = w.dz(k, l);
  const index = kernelIndex(w, l, 'p', 'q', 'c', 'f');
  const lines = [...head, ...kernelSum(k, w, l)];
  if (w.clipped) return [k.finish([...lines, ...w.clipped.store(k)].join('\n'), helper), ...w.clipped.kernels({ p, size, lines: head, index })];
  return [k.finish([...lines, `  let at = ${index};`, ...w.update(k, p)].join('\n'), helper)];
}

/** The name of clipping's first kernel of a parameter: its gradient into the scratch. */
const gradientName = (p: WgslParam): string => `gradient ${p.name}: summed over the member's rows and output cells, into scratch for clipnorm, one invocation per member and element`;

/** A conv bias's gradient (dz summed over the member's rows and output cells, in order; a shared bias's over every member's) and its update. */
function convBiasUpdate<K>(w: SpatialWriter<K>, l: SpatialLayer): K[] {
  const p = l.bias!;
  const head = p.layout === 'shared' ? ['  let f = idx;'] : [`  let m = idx / ${u(l.f)};`, `  let f = idx % ${u(l.f)};`];
  const loops = [`for (var b = 0u; b < ${u(w.batch)}; b++) {`, `  for (var cell = 0u; cell < ${u(l.g.oh * l.g.ow)}; cell++) {`, `    g = g + dz(m, b, cell * ${u(l.f)} + f);`, '  }', '}'];
  const lines = [...head, '  var g = 0.0;', ...overMembers(w, l, loops).map((s) => `  ${s}`)];
  if (p.layout === 'shared') return w.shared!(p, l.f, (k) => ({ lines, helper: w.dz(k, l) }));
  const k = w.kernel(w.clipped ? gradientName(p) : `update ${p.name}: its gradient and one optimizer step, one invocation per member and element`, w.n * l.f);
  const helper = w.dz(k, l);
  const index = `m * ${u(l.f)} + f`;
  if (w.clipped) return [k.finish([...lines, ...w.clipped.store(k)].join('\n'), helper), ...w.clipped.kernels({ p, size: l.f, lines: head, index })];
  return [k.finish([...lines, `  let at = ${index};`, ...w.update(k, p)].join('\n'), helper)];
}
