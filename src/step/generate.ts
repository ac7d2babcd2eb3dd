// The generated training step: one WebAssembly call, step(table, n, batch), that trains every member
// of a population one step, member after member — the forward pass, the loss, the backward pass, clipping
// and the optimizer update, and the member's loss and metrics — reading and writing the population's
// tensors where they lie in memory. Each member's arithmetic is its own: nothing is summed across members,
// and a member's numbers do not depend on N or on its position. Shapes are constants; N and the batch
// size are arguments, so halving a population, or a short last batch, needs no new module.
//
// The host writes the table (i32 addresses, in `StepLayout.table` order) and the members' hyperparameters
// (f32 arrays [N], one per `StepLayout.hyper` key) before each call; scratch space is `arenaBytes` at the
// table's `arena` entry, reused by every member. Members on rows of their own (a per-member input) read a
// `rows` entry too: 0, or each member's real rows, i32 [N], the first of its B (a short member under kfold
// pads an epoch's last batch); every layer, the loss and the metrics of member m then run over its rows alone.
import type { EnsembleIR, WideOp, WideParam } from '../ensemble/ensemble-ir.js';
import { layerKind } from '../layers/registry.js';
import type { WasmBackwardContext, WasmContext, WasmRule } from '../layers/wasm-rule.js';
import { hasRule } from '../layers/layer-kind.js';
import { ModuleBuilder, type Code, type Local } from '../wasm/module.js';
import { addInto, zeroFloats, type Mat, type ParamMat } from '../wasm/blocks.js';
import { emitLoss } from '../wasm/losses.js';
import { emitClip, emitUpdate } from '../wasm/optimizer-update.js';
import { optimizerHyper, optimizerSlots } from '../vocabulary/optimizers.js';
import type { StepConfig } from './plan.js';
import { emitScan } from './scan.js';
import { emitSteps } from './steps.js';
import { PER_MEMBER_MACS } from '../kernels/matmul.js';
import { populationBufferName, type PopulationBuffer } from '../core/step-buffers.js';

/**
 * One entry of the step's table: an i32 the host writes before each call, an address but for the strides.
 * `metric`, `hyper` and `shared` say which of theirs by `index` (in the metrics, StepLayout.hyper and
 * StepLayout.shared), so that the host finds its value without parsing a name.
 */
export type TableEntry =
  | { kind: 'arena' | 'x' | 'y' | 'xStride' | 'yStride' | 'rows' | 'losses' }
  | (Extract<PopulationBuffer, { kind: 'metric' }> & { index: number })
  | Exclude<PopulationBuffer, { kind: 'metric' }>
  | { kind: 'hyper' | 'shared'; key: string; index: number }
  | { kind: 'draws'; op: string };

/** An entry's name, as the generator keys its locals and `netc ir` may print it: `param:NAME`, `slot:NAME:SLOT`, `hyper:KEY`, ... */
function entryName(e: TableEntry): string {
  switch (e.kind) {
    case 'metric':
    case 'param':
    case 'slot':
      return populationBufferName(e);
    case 'hyper':
    case 'shared':
      return `${e.kind}:${e.key}`;
    case 'draws':
      return `draws:${e.op}`;
    default:
      return e.kind;
  }
}

export interface StepLayout {
  /** the table's entries, in order: arena, x, y, xStride, yStride, rows (members on their own rows only), losses, each metric, each parameter and its slots, each hyperparameter, each shared value, each draws */
  table: TableEntry[];
  /** the per-member hyperparameter arrays the step reads, by key (`lr`, `-lr`, `bc1`, `leaky_relu_1.alpha`, ...) */
  hyper: string[];
  /** the file's values (one float each, at `shared:<key>`) with which the shared layers' parameters step, where there are any */
  shared: string[];
  /** the scratch space the step needs, in bytes */
  arenaBytes: number;
  /** the ops whose uniform draws the host writes before each call ([N, B, width] at `draws:<op>`), drawn as the op path's memberDraws */
  draws: { op: string; width: number }[];
}

export interface GeneratedStep {
  bytes: Uint8Array<ArrayBuffer>;
  layout: StepLayout;
  /** the module's functions: the exported step and the ones it calls (Code.outlined), and nonfinite (step/scan.ts) */
  functions: number;
}

const product = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** Scratch buffers, bump-allocated at constant offsets from the arena's address. */
class Arena {
  bytes = 0;
  constructor(
    private readonly base: Local,
    private readonly rows: number,
  ) {}
  mat(width: number, rows = this.rows): Mat {
    const m = { base: this.base, offset: this.bytes, width };
    this.bytes += Math.ceil((width * rows * 4) / 16) * 16;
    return m;
  }
}

/** How one member's copy of a parameter sits in its fused tensor. */
interface ParamPlace {
  param: WideParam;
  rows: number;
  width: number;
  /** bytes from member m's copy to member m+1's */
  memberBytes: number;
  /** columns: row r of member m at r * N * width floats; stacked: at r * width */
  columns: boolean;
  /** a shared layer's: one copy that every member reads (memberBytes 0), its gradient the sum of theirs */
  shared: boolean;
}

function placeOf(p: WideParam): ParamPlace {
  const width = p.shape[p.shape.length - 1];
  const rows = product(p.shape) / width;
  const columns = p.layout === 'columns';
  const shared = p.layout === 'shared';
  return { param: p, rows, width, memberBytes: shared ? 0 : (columns ? width : product(p.shape)) * 4, columns, shared };
}

/** The hyperparameter keys the step reads: the optimizer's (and clipnorm's), and each layer's own. */
function hyperKeys(cfg: StepConfig): string[] {
  const keys = [...optimizerHyper[cfg.optimizer], ...(cfg.clipping ? ['clip'] : [])];
  // each layer's own hyperparameters (dropout's rate, leaky_relu's alpha, layernorm's epsilon), per member
  for (const op of cfg.ensemble.ops.slice(1)) for (const arg of layerKind(op.op)!.args) if (arg.hyper) keys.push(`${op.name}.${arg.name}`);
  return keys;
}

export function generateStep(cfg: StepConfig): GeneratedStep {
  const e = cfg.ensemble;
  const places = e.params.map(placeOf);
  const slotNames = optimizerSlots[cfg.optimizer];
  const hyper = hyperKeys(cfg);
  const training = cfg.training !== false;
  const draws = training ? cfg.ensemble.ops.filter((op) => op.id > 0 && wasmRule(op).draws).map((op) => ({ op: op.name, width: product(op.shape) })) : [];
  const shared = places.some((p) => p.shared) ? [...optimizerHyper[cfg.optimizer], ...(cfg.clipping ? ['clip'] : [])] : [];
  const table: TableEntry[] = [
    ...(['arena', 'x', 'y', 'xStride', 'yStride'] as const).map((kind) => ({ kind })),
    // each member's real rows, i32 [N], or 0 where all B are (members on their own data: a short member's batch is padded)
    ...(ownRows(cfg.ensemble) ? [{ kind: 'rows' as const }] : []),
    { kind: 'losses' },
    ...cfg.metrics.map((metric, index) => ({ kind: 'metric' as const, metric, index })),
    // running statistics (batchnorm's) have no optimizer slots: their layer's forward code moves them
    ...places.flatMap((p) => [{ kind: 'param' as const, param: p.param.name }, ...(p.param.trainable ? slotNames.map((slot) => ({ kind: 'slot' as const, param: p.param.name, slot })) : [])]),
    ...hyper.map((key, index) => ({ kind: 'hyper' as const, key, index })),
    ...shared.map((key, index) => ({ kind: 'shared' as const, key, index })),
    ...draws.map((d) => ({ kind: 'draws' as const, op: d.op })),
  ];
  const ranged = cfg.ranged === true;
  if (ranged && shared.length) throw new Error("internal error: the threaded step does not cover shared layers (their gradient is every member's sum)");
  const mb = new ModuleBuilder(ranged);
  let arenaBytes = 0;
  // the ranged variant's functions take the member range [first, end) after their own arguments
  const range: ('i32')[] = ranged ? ['i32', 'i32'] : [];
  const step = mb.func(['i32', 'i32', 'i32', ...range], [], (c) => {
    arenaBytes = emitStep(c, cfg, { table, places, placeOf: new Map(places.map((p) => [p.param.name, p])), slotNames, hyper, shared });
  }, 'step');
  // every member's own parameters (not the shared layers': one copy, which every member reads)
  const entryIndex = new Map(table.map((e, i) => [entryName(e), i]));
  const scanned = places.filter((p) => !p.shared).map((p) => ({ ...p, entry: entryIndex.get(`param:${p.param.name}`)! }));
  const scan = mb.func(['i32', 'i32', 'i32', ...range], [], (c) => emitScan(c, scanned, ranged), 'nonfinite');
  mb.func(['i32', 'i32', 'i32', 'i32', 'i32', ...range], ['i32'], (c) => emitSteps(c, { step, scan, tableLength: table.length, losses: entryIndex.get('losses')!, ranged }), 'steps');
  return { bytes: mb.bytes(), layout: { table, hyper, shared, arenaBytes, draws }, functions: mb.count };
}

interface Plan {
  table: TableEntry[];
  places: ParamPlace[];
  /** each parameter's place, by its name */
  placeOf: Map<string, ParamPlace>;
  slotNames: string[];
  hyper: string[];
  shared: string[];
}

/** Whether each member reads rows of its own (the input is per member), and so may have fewer real rows than B. */
const ownRows = (e: EnsembleIR) => !e.ops[0].shared;

/** The step function's body; returns the scratch space it uses. */
function emitStep(c: Code, cfg: StepConfig, plan: Plan): number {
  const e = cfg.ensemble;
  const [tablePtr, n, batch] = [c.param(0), c.param(1), c.param(2)];
  // the members this call trains: [first, end) in the ranged variant, else all N
  const [first, end] = cfg.ranged ? [() => c.get(c.param(3)), () => c.get(c.param(4))] : [() => c.i32(0), () => c.get(n)];
  const entry = new Map<string, Local>();
  plan.table.forEach((e, i) => {
    const l = c.local('i32');
    c.get(tablePtr).loadI32(i * 4).set(l);
    entry.set(entryName(e), l);
  });
  const at = (name: string) => entry.get(name)!;
  const arena = new Arena(at('arena'), cfg.maxBatch);
  // the row stride of each parameter: N * width floats for columns, width for stacked
  const rowStride = new Map<string, Local>();
  for (const p of plan.places) {
    const l = c.local('i32');
    if (p.columns) c.get(n).i32(p.width * 4).i32Mul().set(l);
    else c.i32(p.width * 4).set(l);
    rowStride.set(p.param.name, l);
  }
  // per member: where its copies are, its hyperparameters
  // each parameter's and slot's entry, with the place whose member stride it steps by
  const placed = plan.table.flatMap((e) => (e.kind === 'param' || e.kind === 'slot' ? [{ name: entryName(e), place: plan.placeOf.get(e.param)! }] : []));
  const memberBase = new Map<string, Local>(placed.map((t) => [t.name, c.local('i32')]));
  const hyperValue = new Map<string, Local>(plan.hyper.map((k) => [k, c.local('f32')]));
  const hyperRecord = Object.fromEntries(hyperValue);
  const m = c.local('i32');
  // the member's rows: its real ones where the host says it has fewer than B (the rest is padding, never read)
  const memberBatch = ownRows(e) ? c.local('i32') : batch;
  const xBase = c.local('i32');
  const yBase = c.local('i32');
  const trained = plan.places.filter((p) => p.param.trainable);
  const grads = new Map(trained.filter((p) => !p.shared).map((p) => [p.param.name, arena.mat(p.width, p.rows)]));
  // a shared parameter's gradient: each member's added on in turn, member after member, then one step
  const sharedGrads = new Map(trained.filter((p) => p.shared).map((p) => [p.param.name, arena.mat(p.width, p.rows)]));
  const training = cfg.training !== false;
  if (training) for (const p of trained) if (p.shared) zeroFloats(c, sharedGrads.get(p.param.name)!, p.rows * p.width);
  const values = new Map<number, Mat>();
  const dValues = new Map<number, Mat>();
  const saved = new Map<string, Mat>();
  const needsGrad = dependsOnParams(e);
  c.for(m, first, end, () => {
    c.get(at('x')).get(m).get(at('xStride')).i32Mul().i32Add().set(xBase);
    c.get(at('y')).get(m).get(at('yStride')).i32Mul().i32Add().set(yBase);
    if (memberBatch !== batch) c.get(at('rows')).if(() => c.get(at('rows')).get(m).i32(4).i32Mul().i32Add().loadI32().set(memberBatch), () => c.get(batch).set(memberBatch));
    for (const { name, place } of placed) c.get(at(name)).get(m).i32(place.memberBytes).i32Mul().i32Add().set(memberBase.get(name)!);
    for (const [key, local] of hyperValue) c.get(at(`hyper:${key}`)).get(m).i32(4).i32Mul().i32Add().loadF32().set(local);
    values.set(0, { base: xBase, offset: 0, width: product(e.ops[0].shape) });
    const buffers: Buffers = { training, maxBatch: cfg.maxBatch, member: m, entry: at, batch: memberBatch, fullBatch: batch, arena, values, saved, memberBase, rowStride, hyperValue, plan, shapes: e.ops.map((o) => o.shape) };
    const contexts = e.ops.slice(1).map((op) => context(c, op, buffers));
    // each layer's code, the loss and each update a function of its own (Code.outlined says why)
    for (const [op, k] of contexts) c.outlined(() => wasmRule(op).forward(k));
    const out = e.model.output;
    const outMat = values.get(out)!;
    dValues.set(out, arena.mat(outMat.width));
    const lossOut = c.local('i32');
    c.get(at('losses')).get(m).i32(4).i32Mul().i32Add().set(lossOut);
    const metricOut: Record<string, Local> = {};
    for (const name of cfg.metrics) {
      const l = c.local('i32');
      c.get(at(`metric:${name}`)).get(m).i32(4).i32Mul().i32Add().set(l);
      metricOut[name] = l;
    }
    const terms = arena.mat(outMat.width);
    c.outlined(() => emitLoss(c, cfg.loss.name, cfg.loss.args, outMat.width, { batch: memberBatch, p: outMat, y: yBase, dp: dValues.get(out)!, lossOut, metricOut, terms }));
    if (!training) return;
    backward(c, contexts, { arena, values, dValues, needsGrad, grads, sharedGrads, consumers: consumerCounts(e) });
    for (const p of trained) if (!p.shared) c.outlined(() => update(c, cfg, plan, p, { grads, memberBase, rowStride, hyperValue, hyperRecord }));
  });
  if (training) {
    const sharedHyper = sharedHyperValues(c, plan, at);
    updateShared(c, cfg, plan, trained.filter((p) => p.shared), { grads: sharedGrads, memberBase: new Map(placed.map((t) => [t.name, at(t.name)])), rowStride, hyperValue: sharedHyper, hyperRecord: Object.fromEntries(sharedHyper) });
  }
  return arena.bytes;
}

/**
 * Whether the op path sums this kernel's products in blocks of 48: a stacked kernel meets its members'
 * own inputs in TF.js's batched product, unless the product is large enough to run member by member
 * (XNNPACK, one run); a columns kernel meets a shared input in one 2-D product (XNNPACK).
 */
function sumsInBlocks(place: ParamPlace, maxBatch: number): boolean {
  // a shared kernel meets its input in one 2-D product, on the shared input or on all members' rows folded
  return !place.columns && !place.shared && maxBatch * place.rows * place.width < PER_MEMBER_MACS;
}

interface Buffers {
  training: boolean;
  maxBatch: number;
  member: Local;
  entry(name: string): Local;
  /** the member's rows */
  batch: Local;
  /** B, every member's rows with padding: the layout of the host's draws */
  fullBatch: Local;
  arena: Arena;
  values: Map<number, Mat>;
  saved: Map<string, Mat>;
  memberBase: Map<string, Local>;
  rowStride: Map<string, Local>;
  hyperValue: Map<string, Local>;
  plan: Plan;
  /** each op's shape of one example, by id */
  shapes: number[][];
}

/** The op's kind's rule for the generated step: whyNotFused has made sure there is one. */
function wasmRule(op: WideOp): WasmRule {
  const rule = layerKind(op.op)!.wasm;
  if (!hasRule(rule)) throw new Error(`internal error: the ${op.op} layer has no rule for the generated step (${rule.unsupported})`);
  return rule;
}

/** A layer's kernel context for the current member: its inputs' values, its output buffer, its parameters. */
function context(c: Code, op: WideOp, b: Buffers): [WideOp, WasmContext] {
  const width = product(op.shape);
  // a reshape's value is its input's buffer; every other op writes one of its own
  b.values.set(op.id, wasmRule(op).alias ? b.values.get(op.inputs[0])! : (b.values.get(op.id) ?? b.arena.mat(width)));
  const params: Record<string, ParamMat | Local> = {};
  for (const name of op.params) {
    const place = b.plan.placeOf.get(name)!;
    const base = b.memberBase.get(`param:${name}`)!;
    const short = name.slice(op.name.length + 1);
    params[short] = place.param.shape.length === 1 ? base : { base, rowStride: b.rowStride.get(name)!, rows: place.rows, width: place.width, blocked: sumsInBlocks(place, b.maxBatch), ...(place.columns ? {} : { stride: place.width * 4 }) };
  }
  const k: WasmContext = {
    code: c,
    batch: b.batch,
    maxBatch: b.maxBatch,
    training: b.training,
    attrs: op.attrs,
    inputs: op.inputs.map((i) => b.values.get(i)!),
    inputShapes: op.inputs.map((i) => b.shapes[i]),
    shape: op.shape,
    output: b.values.get(op.id)!,
    params,
    hyper: (arg) => b.hyperValue.get(`${op.name}.${arg}`)!,
    draws: () => {
      // the member's block of the host's draws: [N, B, width], member m at m * B * width floats
      const at = c.local('i32');
      c.get(b.entry(`draws:${op.name}`)).get(b.member).get(b.fullBatch).i32Mul().i32(width * 4).i32Mul().i32Add().set(at);
      return { base: at, offset: 0, width };
    },
    saved: (name, w) => {
      const key = `${op.id}/${name}`;
      if (!b.saved.has(key)) b.saved.set(key, b.arena.mat(w));
      return b.saved.get(key)!;
    },
  };
  return [op, k];
}

/** The ops whose value depends on a parameter: a gradient must reach them. */
function dependsOnParams(e: EnsembleIR): Set<number> {
  const out = new Set<number>();
  for (const op of e.ops) if (op.params.length || op.inputs.some((i) => out.has(i))) out.add(op.id);
  return out;
}

function consumerCounts(e: EnsembleIR): Map<number, number> {
  const counts = new Map<number, number>();
  for (const op of e.ops) for (const i of op.inputs) counts.set(i, (counts.get(i) ?? 0) + 1);
  return counts;
}

interface BackwardBuffers {
  arena: Arena;
  values: Map<number, Mat>;
  dValues: Map<number, Mat>;
  needsGrad: Set<number>;
  grads: Map<string, Mat>;
  /** the shared parameters' gradients, summed over the members so far */
  sharedGrads: Map<string, Mat>;
  consumers: Map<number, number>;
}

/**
 * The backward pass, op after op from the output: each hands its inputs their gradients. An input read by
 * more than one op gets the first one's directly and the others' added to it.
 */
function backward(c: Code, contexts: [WideOp, WasmContext][], b: BackwardBuffers): void {
  const written = new Set<number>();
  for (const [op, k] of [...contexts].reverse()) {
    const dOutput = b.dValues.get(op.id);
    if (!dOutput) continue; // nothing downstream needs this op's gradient
    const kernel = wasmRule(op);
    const dInputs = op.inputs.map((i) => {
      if (!b.needsGrad.has(i)) return undefined;
      const width = b.values.get(i)!.width;
      if (kernel.alias) return dOutput;
      if (!written.has(i)) {
        if (!b.dValues.has(i)) b.dValues.set(i, b.arena.mat(width));
        return b.dValues.get(i)!;
      }
      return b.arena.mat(width); // a second reader's share, added below
    });
    if (kernel.alias) {
      if (dInputs[0]) b.dValues.set(op.inputs[0], dOutput);
    } else {
      const grads: Record<string, Mat> = {};
      // a shared layer's gradients add on to the members' before, in its own summing order
      const accumulate = op.params.some((name) => b.sharedGrads.has(name));
      for (const name of op.params) {
        const g = b.sharedGrads.get(name) ?? b.grads.get(name);
        if (g) grads[name.slice(op.name.length + 1)] = g;
      }
      const ctx: WasmBackwardContext = { ...k, dOutput, dInputs, grads, accumulate };
      c.outlined(() => kernel.backward(ctx));
    }
    op.inputs.forEach((i, j) => {
      const d = dInputs[j];
      if (!d) return;
      if (written.has(i) && d !== b.dValues.get(i)) c.outlined(() => addInto(c, k.batch, d, b.dValues.get(i)!));
      written.add(i);
    });
  }
}

/** The file's hyperparameters for the shared layers' step, loaded once. */
function sharedHyperValues(c: Code, plan: Plan, at: (name: string) => Local): Map<string, Local> {
  return new Map(plan.shared.map((key) => {
    const l = c.local('f32');
    c.get(at(`shared:${key}`)).loadF32().set(l);
    return [key, l];
  }));
}

/** After every member: clipping and one optimizer step on each shared parameter, with the file's hyperparameters. */
function updateShared(c: Code, cfg: StepConfig, plan: Plan, places: ParamPlace[], u: UpdateBuffers): void {
  for (const p of places) c.outlined(() => update(c, cfg, plan, p, u));
}

interface UpdateBuffers {
  grads: Map<string, Mat>;
  memberBase: Map<string, Local>;
  rowStride: Map<string, Local>;
  hyperValue: Map<string, Local>;
  /** hyperValue as the optimizer's update reads it, made once */
  hyperRecord: Record<string, Local>;
}

/** Clipping and the optimizer step on one member's copy of a parameter, row by row (one run where it is contiguous). */
function update(c: Code, cfg: StepConfig, plan: Plan, p: ParamPlace, u: UpdateBuffers): void {
  const name = p.param.name;
  const grad = u.grads.get(name)!;
  const g = c.local('i32');
  c.get(grad.base).i32(grad.offset).i32Add().set(g);
  if (cfg.clipping) emitClip(c, p.rows * p.width, g, u.hyperValue.get('clip')!);
  const rows = p.columns ? p.rows : 1;
  const run = p.columns ? p.width : p.rows * p.width;
  const w = c.local('i32');
  const gRow = c.local('i32');
  const slots: Record<string, Local> = Object.fromEntries(plan.slotNames.map((s) => [s, c.local('i32')]));
  const r = c.local('i32');
  const h = u.hyperRecord;
  c.get(u.memberBase.get(`param:${name}`)!).set(w);
  c.get(g).set(gRow);
  for (const s of plan.slotNames) c.get(u.memberBase.get(`slot:${name}:${s}`)!).set(slots[s]);
  c.for(r, () => c.i32(0), () => c.i32(rows), () => {
    emitUpdate(c, cfg.optimizer, run, { w, g: gRow, slots }, h);
    const stride = u.rowStride.get(name)!;
    c.get(w).get(stride).i32Add().set(w);
    for (const s of plan.slotNames) c.get(slots[s]).get(stride).i32Add().set(slots[s]);
    c.get(gRow).i32(run * 4).i32Add().set(gRow);
  });
}
