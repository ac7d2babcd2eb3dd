// `netc ir FILE --after fuse`: the structure of the generated training step, as text: what the one
// WebAssembly function does for each member, in order, the buffers it reads and writes, and its size.
import type { WideParam } from '../ensemble/ensemble-ir.js';
import type { BoundValue } from '../core/arg-spec.js';
import { hasRule } from '../layers/layer-kind.js';
import { layerKind } from '../layers/registry.js';
import { PER_MEMBER_MACS } from '../kernels/matmul.js';
import { optimizerSlots } from '../vocabulary/optimizers.js';
import { rowsInLanes } from '../wasm/blocks.js';
import type { GeneratedStep } from './generate.js';
import type { StepConfig } from './plan.js';

const product = (s: number[]) => s.reduce((a, b) => a * b, 1);
const shape = (s: number[]) => `[${s.join(', ')}]`;
const count = (n: number) => n.toLocaleString('en-US');

/** The fused step of a configuration, or why there is none. */
export type FusedPlan = { config: StepConfig; step: GeneratedStep } | { config: StepConfig; why: string };

export function printFusedStep(plan: FusedPlan): string {
  const e = plan.config.ensemble;
  const L: string[] = [];
  if ('why' in plan) {
    L.push(`no fused step for ${e.model.name}: the generated step does not cover ${plan.why}; netc train runs each step on TF.js ops`);
    return L.join('\n') + '\n';
  }
  const { config, step } = plan;
  const paramOf = new Map(e.params.map((p) => [p.name, p]));
  L.push(`fused step of ${e.model.name} (${e.lowering}): one WebAssembly call step(table, n, batch), ${count(step.bytes.length)} bytes, SIMD128, ${step.functions} functions (a layer's forward or backward pass, the loss or an update each; nonfinite(table, n, out), the divergence guard's scan of every member's own parameters; and steps(records, count, n, recordBytes, flags), up to count steps in one call, each from its own table)`);
  L.push(`  compiled for batches up to ${config.maxBatch}; N and the batch size are arguments: a halved population or a short last batch reuses it`);
  L.push(`  scratch: ${count(step.layout.arenaBytes)} bytes, reused by every member (nothing is kept between steps)`);
  L.push(`  per-member hyperparameters read: ${step.layout.hyper.join(', ')}`);
  if (step.layout.draws.length) L.push(`  uniform draws written by the host each step: ${step.layout.draws.map((d) => `${d.op} [N, B, ${d.width}]`).join(', ')}`);
  const shared = e.params.filter((p) => p.layout === 'shared' && p.trainable);
  L.push(shared.length ? "  for each member m (its arithmetic its own, but for the shared layers' gradients, which add up member after member):" : '  for each member m (its arithmetic its own: nothing is summed across members):');
  L.push('    forward');
  for (const op of e.ops) {
    if (op.id === 0) L.push(`      input       x ${shape(op.shape)}${op.shared ? ', shared by every member' : ", the member's own rows (its real ones: a short member's padding is not read)"}`);
    else L.push(`      ${op.name.padEnd(11)} ${describe(op.op, op.attrs, op.inputs.map((i) => e.ops[i].name))} -> ${shape(op.shape)}${ruleText(op.op, op.attrs, op.inputs.map((i) => e.ops[i].shape), config.maxBatch) ?? sequenceText(op.op, op.attrs, e.ops[op.inputs[0]].shape) ?? products(op.params.map((name) => paramOf.get(name)!), config.maxBatch, e.ops[op.inputs[0]].shape)}${perChannel(op.op, op.shape)}`);
  }
  const loss = config.loss.name;
  L.push(`    loss          ${loss}: the member's batch mean and dL/d(output)${config.metrics.length ? `; metrics ${config.metrics.join(', ')}` : ''}`);
  L.push('    backward');
  for (const op of [...e.ops].reverse()) {
    if (op.id === 0) continue;
    // the trainable parameters' gradients (batchnorm's running statistics have none)
    const trained = op.params.filter((name) => paramOf.get(name)?.trainable);
    const what = trained.length ? `d${trained.map((p) => p.slice(op.name.length + 1)).join(', d')}` : '';
    const into = op.inputs.filter((i) => i !== 0).map((i) => `d${e.ops[i].name}`);
    L.push(`      ${op.name.padEnd(11)} ${[what, ...into].filter(Boolean).join(', ') || '(no gradient needed)'}`);
  }
  const slots = optimizerSlots[config.optimizer].join(', ');
  L.push(`    update        ${config.optimizer}${config.clipping ? ' after clipnorm' : ''}, in place, with slots ${slots}:`);
  for (const p of e.params) if (p.trainable && p.layout !== 'shared') L.push(`      ${p.name.padEnd(22)} ${shape(p.shape)} ${layoutText(p)}`);
  const running = e.params.filter((p) => !p.trainable);
  if (running.length) L.push(`    running statistics, moved in their layer's forward code: ${running.map((p) => p.name).join(', ')}`);
  L.push(`    out           losses[m]${config.metrics.map((m) => `, ${m}[m]`).join('')}`);
  if (shared.length) {
    L.push(`  after the last member: ${config.optimizer}${config.clipping ? ' after clipnorm' : ''} on the shared layers' parameters, once, with the file's ${step.layout.shared.join(', ')}:`);
    for (const p of shared) L.push(`      ${p.name.padEnd(22)} ${shape(p.shape)} shared: one copy, which every member reads; its gradient the members' sum`);
  }
  return L.join('\n') + '\n';
}

function describe(kind: string, attrs: Record<string, unknown>, inputs: string[]): string {
  const from = inputs.length > 1 ? `(${inputs.join(', ')})` : '';
  if (kind === 'dense') return `dense(${attrs.units}, ${attrs.activation})`;
  if (kind === 'dropout') return `dropout(${attrs.rate})`;
  if (kind === 'embedding') return `embedding(${attrs.vocab}, ${attrs.dim}${attrs.positions === undefined ? '' : `, positions: ${attrs.positions}`})`;
  if (kind === 'lstm') return `lstm(${attrs.units}${attrs.sequences ? ', sequences' : ''})`;
  if (kind === 'gru') return `gru(${attrs.units}${attrs.sequences ? ', sequences' : ''}${attrs.reset_after ? '' : ', reset_after: false'})`;
  if (kind === 'leaky_relu') return `leaky_relu(${attrs.alpha})`;
  const pair = (v: unknown) => (v as number[]).join('x');
  if (kind === 'conv2d') return `conv2d(${attrs.filters}, ${pair(attrs.kernel)}, stride ${pair(attrs.stride)}, ${attrs.padding}, ${attrs.activation})`;
  if (kind === 'maxpool2d' || kind === 'avgpool2d') return `${kind}(${pair(attrs.size)}, stride ${pair(attrs.stride ?? attrs.size)}, ${attrs.padding})`;
  return `${kind}${from || '()'}`;
}

/** What the kind's wasm rule says its code does, where it says. */
function ruleText(kind: string, attrs: Record<string, BoundValue>, inputs: number[][], maxBatch: number): string | undefined {
  const rule = layerKind(kind)?.wasm;
  return rule && hasRule(rule) ? rule.text?.(attrs, inputs, maxBatch) : undefined;
}

/** What the embedding's, the lstm's and the gru's generated code does (src/layers/embedding.ts, lstm.ts, gru.ts), or undefined for other kinds. */
function sequenceText(kind: string, attrs: Record<string, unknown>, input: number[]): string | undefined {
  if (kind === 'embedding') return `; each token's row of the table (its id truncated and clamped into it)${attrs.positions === undefined ? '' : ' plus the positions\' row'}; backward, dy scattered onto the rows read, in order`;
  if (kind === 'gru') return gruText(attrs, input);
  if (kind !== 'lstm') return undefined;
  const [steps, features] = input;
  return `; over ${steps} steps, time-major: x · kernel of every step in one product (sums over ${features} inputs), then per step h · recurrent_kernel (over ${attrs.units}), each in the op path's order, the gates i, f, c, o and the cell row by row; backward through time from the last step, each step's shares of the gradients added in autodiff's order`;
}

function gruText(attrs: Record<string, unknown>, [steps, features]: number[]): string {
  const recurrent = attrs.reset_after ? 'h · recurrent_kernel + the recurrent bias' : "h · recurrent_kernel's z and r columns, then (r * h) · its candidate columns";
  return `; over ${steps} steps, time-major: x · kernel + bias of every step in one product (sums over ${features} inputs), then per step ${recurrent} (over ${attrs.units}), each in the op path's order, the gates z, r and the candidate row by row; backward through time from the last step, each step's shares of the gradients added in autodiff's order`;
}

/** batchnorm of an image: its statistics' rows, summed in order (src/layers/channels.ts). */
function perChannel(kind: string, s: number[]): string {
  if (kind !== 'batchnorm' || s.length === 1) return '';
  return `; statistics per channel over the batch's ${s.slice(0, -1).join('x')} pixels, example after example, in order`;
}

/**
 * How the op path sums a dense layer's products (the generated step sums in the same order); on a sequence
 * [T, F] its rows are every example's steps, B*T of them, as the op path folds them.
 */
function products(params: WideParam[], maxBatch: number, input: number[]): string {
  const kernel = params.find((p) => p.shape.length === 2);
  if (!kernel) return '';
  const steps = input.length === 2 ? input[0] : 1;
  const text = productOrder(kernel, maxBatch * steps);
  return steps > 1 ? `${text}; on B*${steps} rows, a row per step` : text;
}

function productOrder(kernel: WideParam, maxRows: number): string {
  const [rows, width] = kernel.shape;
  const blocked = kernel.layout === 'stacked' && maxRows * rows * width < PER_MEMBER_MACS;
  const order = blocked && rows > 48 ? 'in blocks of 48, as TF.js\'s batched product does' : 'in order';
  if (rowsInLanes(rows, width)) return `; sums over ${rows} inputs ${order}, ${width} output${width > 1 ? 's' : ''} for four rows at once (a row in each lane, x's rows turned into columns by shuffles), the rest row by row`;
  const lanes = [width >= 4 ? `${Math.floor(width / 4)} vector${width >= 8 ? 's' : ''}` : '', width % 4 ? `${width % 4} scalar` : ''].filter(Boolean).join(' + ');
  return `; sums over ${rows} inputs ${order}, ${width} outputs as ${lanes}`;
}

function layoutText(p: WideParam): string {
  if (p.layout === 'columns') return `columns: member m's block at column m * ${p.shape[p.shape.length - 1]} of each row (${product(p.shape)} floats)`;
  return `stacked: member m's ${product(p.shape)} float${product(p.shape) === 1 ? '' : 's'} at m * ${product(p.shape)}`;
}
