// The WGSL step's `shared` dense layers: one kernel and bias for every member (no member axis); a shared
// conv2d's gradient sums are src/wgsl/conv.ts's and a shared layernorm's src/wgsl/norm.ts's, stepped
// here (sharedParamUpdates).
//
//   forward    (src/wgsl/dense.ts' forward kernel, its index without a member) on members' own values: one invocation
//              per (member, row, unit); on the shared input, or on another shared layer's value there: the
//              value is every member's, computed once, [B, width], as the op path computes it once
//   dinput     a member's dense layer on a shared layer's value: one invocation per (row, input unit), its
//              gradient summed over every member's units, member after member, as the op path's wide
//              [B, in] x [in, N*out] product's gradient sums it
//   update     one invocation per element: its gradient summed over every member's rows, member after
//              member (the op path's one product over all members' rows folded into one batch; on the shared
//              input over the batch once), then one optimizer step with the file's hyperparameters (rows
//              `shared:KEY` of `hyper`, read at their first element); where any member clips, the file's
//              clipnorm clips it: its gradient into scratch, its norm, the clipped step
//   members' sum   a member's layer without a kernel (a norm, dropout, leaky_relu(alpha)) on a shared layer's
//              flat value: each member's gradient of the value [N, B, width], summed member after member
//              into the value's [B, width], as the op path's broadcast (a Tile) sums its gradient
//
// The members' sum is the one sum across members the WGSL step has: a shared layer's gradient is the
// members' by definition. What it shares with the step (the kernel text, the dz helper, the optimizer's rule)
// the step hands it as a SharedWriter.
import { u, type ChainValues, type WgslParam } from './chain.js';
import { type KernelWriter, paramBuffer, slotBuffer } from './kernel-text.js';

/** What the shared layers' kernels borrow from the step. */
export interface SharedWriter<K> {
  n: number;
  batch: number;
  optimizer: string;
  /** where any member clips: the scratch of one parameter's gradient and its norm */
  clip?: { gradsAt: number; normAt: number };
  kernel(name: string, invocations: number): KernelWriter<K>;
  /** member m's input element (row b, unit i) of a layer */
  input(k: KernelWriter<K>, l: ChainValues): string;
  /** the WGSL function dz(m, b, j) of a layer */
  dz(k: KernelWriter<K>, l: ChainValues): string;
  /** member m's element (i, j) of a dense layer's kernel, in its fused tensor */
  kernelIndex(l: ChainValues): string;
  /** the file's value of a hyperparameter key */
  fileHyper(k: KernelWriter<K>, key: string): string;
  /** the optimizer's rule on one element, from its gradient `g` */
  step(at: { w: string; slot(name: string): string; h(key: string): string }): string[];
}

/** dL/d(a shared layer's value on the shared input) [B, in] from a member's dense layer `l` that reads it. */
export function sharedDinput<K>(w: SharedWriter<K>, l: ChainValues, prev: Pick<ChainValues, 'op' | 'gradAt'>): K {
  const k = w.kernel(`backward ${l.op.name}: dL/d${prev.op.name} (the shared layer's value), summed over the members, one invocation per row and input unit`, w.batch * l.inWidth);
  const kernel = k.buf(paramBuffer(l.kernel!.name));
  const helper = w.dz(k, l);
  const body = [
    `  let b = idx / ${u(l.inWidth)};`,
    `  let i = idx % ${u(l.inWidth)};`,
    '  var acc = 0.0;',
    `  for (var m = 0u; m < ${u(w.n)}; m++) {`,
    `    for (var j = 0u; j < ${u(l.width)}; j++) {`,
    `      acc = fma(dz(m, b, j), ${kernel}[${w.kernelIndex(l)}], acc);`,
    '    }',
    '  }',
    `  ${k.buf('acts')}[${u(prev.gradAt)} + idx] = acc;`,
  ].join('\n');
  return k.finish(body, helper);
}

/** A shared dense layer's parameter: its gradient over every member's rows and one step with the file's hyperparameters (three kernels where members clip). */
export function sharedUpdates<K>(w: SharedWriter<K>, l: ChainValues, which: 'kernel' | 'bias'): K[] {
  const p = which === 'kernel' ? l.kernel! : l.bias!;
  const size = which === 'kernel' ? l.inWidth * l.width : l.width;
  // on the shared input the value (and its gradient) is one for every member
  const members = l.op.shared ? 1 : w.n;
  return sharedParamUpdates(w, p, size, (k) => {
    const helper = w.dz(k, l);
    const term = which === 'kernel' ? `      g = fma(${w.input(k, l)}, dz(m, b, j), g);` : '      g = g + dz(m, b, j);';
    const lines = which === 'kernel' ? [`  let i = idx / ${u(l.width)};`, `  let j = idx % ${u(l.width)};`] : ['  let j = idx;'];
    lines.push('  var g = 0.0;', `  for (var m = 0u; m < ${u(members)}; m++) {`, `    for (var b = 0u; b < ${u(w.batch)}; b++) {`, term, '    }', '  }');
    return { lines, helper };
  });
}

/**
 * A shared parameter's update, one invocation per element: `build`'s lines sum its gradient `g` over every
 * member's rows (a dense layer's above, a conv's in src/wgsl/conv.ts), then one optimizer step with the
 * file's hyperparameters; where members clip, the gradient into scratch, its norm, the clipped step.
 */
export function sharedParamUpdates<K>(w: SharedWriter<K>, p: WgslParam, size: number, build: (k: KernelWriter<K>) => { lines: string[]; helper: string }): K[] {
  const clip = w.clip;
  const k = w.kernel(`${clip ? 'gradient' : 'update'} ${p.name} (shared): its gradient over every member's rows${clip ? ', into scratch for clipnorm' : ` and one ${w.optimizer} step`}, one invocation per element`, size);
  const { lines, helper } = build(k);
  if (!clip) return [k.finish([...lines, '  let at = idx;', ...stepLines(w, k, p)].join('\n'), helper)];
  return [k.finish([...lines, `  ${k.buf('acts')}[${u(clip.gradsAt)} + idx] = g;`].join('\n'), helper), normKernel(w, p, size, clip), clippedUpdate(w, p, size, clip)];
}

/** The norm of a shared parameter's gradient (one for every member: Keras' clipnorm per tensor), its elements summed in order, one invocation. */
function normKernel<K>(w: SharedWriter<K>, p: WgslParam, size: number, clip: NonNullable<SharedWriter<K>['clip']>): K {
  const k = w.kernel(`norm ${p.name} (shared): the norm of its gradient, one invocation`, 1);
  const acts = k.buf('acts');
  const body = [
    '  var s = 0.0;',
    `  for (var e = 0u; e < ${u(size)}; e++) {`,
    `    let v = ${acts}[${u(clip.gradsAt)} + e];`,
    '    s = s + v * v;',
    '  }',
    `  ${acts}[${u(clip.normAt)}] = sqrt(s);`,
  ];
  return k.finish(body.join('\n'));
}

/** A shared parameter's clipped gradient from the scratch and its step, with the file's clipnorm (Infinity where it has none). */
function clippedUpdate<K>(w: SharedWriter<K>, p: WgslParam, size: number, clip: NonNullable<SharedWriter<K>['clip']>): K {
  const k = w.kernel(`update ${p.name} (shared): its clipped gradient and one ${w.optimizer} step, one invocation per element`, size);
  const acts = k.buf('acts');
  const body = [
    `  let g0 = ${acts}[${u(clip.gradsAt)} + idx];`,
    `  let norm = ${acts}[${u(clip.normAt)}];`,
    `  let limit = ${w.fileHyper(k, 'clip')};`,
    '  let g = select(g0, g0 * (limit / norm), norm > limit);',
    '  let at = idx;',
    ...stepLines(w, k, p),
  ];
  return k.finish(body.join('\n'));
}

/** The optimizer's step of element `at` of a shared parameter, from its gradient `g`, with the file's hyperparameters. */
function stepLines<K>(w: SharedWriter<K>, k: KernelWriter<K>, p: WgslParam): string[] {
  const param = k.buf(paramBuffer(p.name));
  return w.step({ w: `${param}[at]`, slot: (s) => `${k.buf(slotBuffer(p.name, s))}[at]`, h: (key) => w.fileHyper(k, key) });
}

/**
 * dL/d(a shared layer's value on the shared input) [B, width] from a member's layer without a kernel that
 * reads it (a norm, dropout, leaky_relu(alpha)): the members' gradients of it [N, B, width], from `from`,
 * summed member after member, as the op path's broadcast of the value to every member (a Tile) adds its
 * members' slices of the gradient in order. One invocation per row and unit.
 */
export function membersSum<K>(w: Pick<SharedWriter<K>, 'n' | 'batch' | 'kernel'>, into: Pick<ChainValues, 'op' | 'gradAt' | 'width'>, from: number): K {
  const k = w.kernel(`gradient ${into.op.name} (the shared layer's value): its members' gradients summed, one invocation per row and unit`, w.batch * into.width);
  const acts = k.buf('acts');
  const body = ['  var g = 0.0;', `  for (var m = 0u; m < ${u(w.n)}; m++) {`, `    g = g + ${acts}[${u(from)} + m * ${u(w.batch * into.width)} + idx];`, '  }', `  ${acts}[${u(into.gradAt)} + idx] = g;`];
  return k.finish(body.join('\n'));
}
