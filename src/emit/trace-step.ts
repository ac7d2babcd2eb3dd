// Traces the fused training step of a compiled program: the forward pass op by op (in training and in
// evaluation), the loss, the metrics and the optimizer update, each as lines of TF.js code for the emitted
// module (src/emit/emit.ts). It runs netc's runtime Population on small zero tensors with a recording
// TF.js (src/emit/trace.ts), so the code is the very sequence of ops `netc train` runs.
import type { EnsembleIR, WideOp } from '../ensemble/ensemble-ir.js';
import { layerKind } from '../layers/registry.js';
import type { Act } from '../layers/forward.js';
import { encodedLabelWidth, labelEncoding } from '../data/batches.js';
import { memberLosses, memberMetric } from '../kernels/losses.js';
import { Population, programSpec, type Value } from '../runtime/population.js';
import type { TF, Tensor, Variable } from '../kernels/tf.js';
import type { Program } from '../check/program.js';
import type { HyperTable } from '../runtime/hyper.js';
import { computedMetrics, losses } from '../vocabulary/losses.js';
import { batchPoints, generalise, TRACE_POINTS, withoutUnread, type TracePoint } from './batch-size.js';
import { Trace, type Symbolic } from './trace.js';

export interface TracedOp {
  op: WideOp;
  /** the op's lines; where training and evaluation differ, both (the value assigned to `name` in each) */
  lines: string[];
  evaluation?: string[];
  /** the names the op's value is given (one per member under the loop lowering) */
  results: string[];
}

export interface TracedStep {
  /** the forward pass's ops, the input first; then the member-first output */
  ops: TracedOp[];
  output: string[];
  /** the expression forward() returns */
  result: string;
  /** whether the input is shared by every member, [B, ...] (else [N, B, ...]) */
  sharedInput: boolean;
  loss: string[];
  /** the metrics netc train computes for the program, by name */
  metrics: Record<string, string[]>;
  optimize: string[];
  /** the trainable parameters (and per-member copies under loop), in the optimizer's order */
  trainable: string[];
}

export interface TraceSetup {
  tf: TF;
  program: Program;
  ensemble: EnsembleIR;
  hyper: HyperTable;
  /** the identifier each op's value is called by */
  names: string[];
}

/** Hyperparameters that may differ between members and change while training: traced as distinct values. */
function movingKeys(setup: TraceSetup): Set<string> {
  return new Set(['lr', ...setup.hyper.varied.keys()]);
}

/**
 * A population of zeros to trace with. The moving hyperparameters get a distinct value per member (the
 * values do not matter, only where they are read), so the code reads each member's own.
 */
function tracePopulation(setup: TraceSetup, tf: TF, members: number): Population {
  const { program, hyper } = setup;
  const ensemble = { ...setup.ensemble, members };
  const moving = movingKeys(setup);
  const zeros = new Map(ensemble.model.params.map((p) => [p.name, new Float32Array(p.shape.reduce((a, b) => a * b, 1))]));
  const spec = programSpec(tf, program, ensemble, hyper, () => zeros);
  spec.hyper = (key, m) => (moving.has(key) ? distinct(hyper.value(key, m), m) : hyper.value(key, m));
  return new Population(spec);
}

/**
 * A member's value made its own: no other member's, not a whole number (a zero becomes a small one; the
 * rules compute the same with either where the value is 0: a clip at Infinity, a decay by 0).
 */
const distinct = (v: number, m: number) => (v === 0 ? (m + 1) / 2 ** 20 : v * (1 + (m + 1) / 1024));

/** Names the population's values as the emitted module reads them. */
function nameValues(trace: Trace, pop: Population, watch: boolean): void {
  trace.name(pop.module, 'pop');
  trace.name(pop.module.memberIds, 'pop.memberIds');
  trace.name(pop.module.state, 'pop.state');
  for (const [key, v] of Object.entries(pop.module.params)) (watch ? trace.watchAssign(v, `p['${key}']`) : trace.name(v, `p['${key}']`));
  for (const [key, t] of Object.entries(pop.module.masks)) trace.name(t, `m['${key}']`);
  for (const [key, v] of Object.entries(pop.module.slots)) trace.watchAssign(v as Variable, `slots['${key}']`);
}

/** A value derived from a hyperparameter's per-member values: its name's prefix and how it is computed. */
type Form = [prefix: string, expr: (e: string) => string, value: (v: number) => number];
const FORMS: Form[] = [
  ['', (e) => e, (v) => v],
  ['one_minus_', (e) => `${e}.map((v) => 1 - v)`, (v) => 1 - v],
  ['minus_', (e) => `${e}.map((v) => -v)`, (v) => -v],
  ['', (e) => `${e}.map((v) => (v > 0 ? v : Infinity))`, (v) => (v > 0 ? v : Infinity)],
];
const SUFFIXES = ['', '', '', '_or_infinity'];

/**
 * The names values of the population are read by, declared where first read: arrays of every key's
 * per-member values (and 1 - v, -v, clipnorm's v or Infinity), members' numbers of the moving keys, and
 * Adam's bias corrections.
 */
function symbolic(trace: Trace, pop: Population, keys: string[], moving: Set<string>): Symbolic {
  const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  const array = (key: string, form: number) => {
    const [prefix, expr] = FORMS[form];
    const base = trace.declare(key.replace(/\W/g, '_'), `pop.hyper('${key}')`);
    return form === 0 ? base : trace.declare(`${prefix}${base}${SUFFIXES[form]}`, expr(base));
  };
  const correction = (b: string) => trace.declare(`correction${b}`, `pop.state.accBeta${b}.map((a) => 1 - a)`);
  return (value, position) => {
    const state = pop.state;
    if (typeof value === 'number') {
      if (position !== 'values' && Number.isInteger(value)) return undefined;
      for (const key of keys.filter((k) => moving.has(k))) {
        const values = pop.hyper(key);
        for (const form of [0, 1, 2]) {
          const m = values.findIndex((v) => Object.is(FORMS[form][2](v), value));
          if (m >= 0) return `${array(key, form)}[${m}]`;
        }
      }
      for (const b of ['1', '2']) {
        if (Object.is(value, 1 - state[`sharedAccBeta${b}` as 'sharedAccBeta1'])) return `1 - pop.state.sharedAccBeta${b}`;
        const m = state[`accBeta${b}` as 'accBeta1'].findIndex((a) => Object.is(value, 1 - a));
        if (m >= 0) return `${correction(b)}[${m}]`;
      }
      return undefined;
    }
    if (position !== 'values' && value.every((v) => Number.isInteger(v))) return undefined;
    for (const key of keys) {
      const values = pop.hyper(key);
      for (let form = 0; form < FORMS.length; form++) if (same(values.map(FORMS[form][2]), value)) return array(key, form);
    }
    for (const b of ['1', '2']) if (same(state[`accBeta${b}` as 'accBeta1'].map((a) => 1 - a), value)) return correction(b);
    return undefined;
  };
}

/** The keys of an op's hyperparameter arguments (`dropout_1.rate`). */
function opKeys(op: WideOp): string[] {
  const kind = layerKind(op.op);
  return (kind?.args ?? []).filter((a) => a.hyper).map((a) => `${op.name}.${a.name}`);
}

interface Section {
  lines: string[];
  /** the names of the section's result tensors */
  results: string[];
}

/** One forward pass traced at batch size b, in training or evaluation: a section per op, then the output. */
function traceForward(setup: TraceSetup, [n, b]: TracePoint, training: boolean): { ops: Section[]; output: Section } {
  const { tf, ensemble, names } = setup;
  const trace = new Trace(tf);
  const pop = tracePopulation(setup, trace.tf, n);
  const moving = movingKeys(setup);
  try {
    return scoped(tf, () => {
      nameValues(trace, pop, false);
      const updates: [string, Tensor][] = [];
      trace.watchPush(updates, 's.updates');
      const input = ensemble.ops[0];
      const x = tf.zeros(input.shared ? [b, ...input.shape] : [n, b, ...input.shape]);
      trace.name(x, 'x');
      const pass = pop.pass(training, updates);
      const values: Value[] = [];
      const ops: Section[] = [];
      for (const op of ensemble.ops) {
        trace.symbolic = symbolic(trace, pop, opKeys(op), moving);
        const run = () => (op.op === 'input' ? pass.input(x) : pass.op(op.id, op.inputs.map((i) => values[i])));
        const { value, section } = traced(trace, names[op.id], run);
        values[op.id] = value;
        ops.push(section);
      }
      const out = traced(trace, 'out', () => pass.output(values[ensemble.model.output]) as unknown as Value, false);
      return { ops, output: out.section };
    });
  } finally {
    pop.dispose();
  }
}

/** Runs one section of a trace; its result is renamed to `name` (`name_m0`... per member under loop). */
function traced(trace: Trace, name: string, run: () => Value, alias = true): { value: Value; section: Section } {
  trace.prefix = name;
  trace.resetNames();
  const start = trace.lines.length;
  const value = trace.run(run);
  const tensors = Array.isArray(value) ? value : [(value as Act).t ?? (value as unknown as Tensor)];
  const lines = trace.lines.slice(start);
  const results = tensors.map((t, m) => {
    const target = tensors.length > 1 || Array.isArray(value) ? `${name}_m${m}` : name;
    const current = trace.nameOf(t)!;
    if (current === 'x' || (!alias && !current.startsWith(`${name}_`))) return current;
    if (current.startsWith(`${name}_`) && /^\d+$/.test(current.slice(name.length + 1))) {
      const re = new RegExp(`\\b${current.replace(/\$/g, '\\$')}\\b`, 'g');
      for (let i = 0; i < lines.length; i++) lines[i] = lines[i].replace(re, target);
    } else lines.push(`const ${target} = ${current};`);
    trace.name(t, target);
    return target;
  });
  return { value, section: { lines, results } };
}

/** Loss or metric lines at batch size b: `f(tf, out, y)` with out [N, b, ...] and the labels y. */
function traceLoss(setup: TraceSetup, [n, b]: TracePoint, f: (tf: TF, out: Tensor, y: Tensor) => Tensor): string[] {
  const { tf, ensemble, program } = setup;
  const trace = new Trace(tf);
  return scoped(tf, () => {
    const outShape = ensemble.ops[ensemble.model.output].shape;
    const out = tf.zeros([n, b, ...outShape]);
    const width = labelWidth(program, outShape);
    const y = tf.zeros(ensemble.ops[0].shared ? [b, width] : [n, b, width]);
    trace.name(out, 'out');
    trace.name(y, 'y');
    trace.prefix = 'v';
    const result = trace.run(() => f(trace.tf, out, y));
    return [...trace.lines, `return ${trace.render(result)};`];
  });
}

/** The labels' width per example, as the batches carry them (src/data/batches.ts). */
function labelWidth(program: Program, outShape: number[]): number {
  const train = program.train!;
  const labels = train.dataShape?.labels;
  const units = outShape[outShape.length - 1];
  if (!labels) return units;
  const expects = losses.find((l) => l.name === train.loss.name)!.expects;
  return encodedLabelWidth(labelEncoding(expects, labels), labels.kind === 'classes' ? labels.classes : units, labels.kind === 'values' ? labels.columns : units);
}

/** The optimizer update, traced once: `optimize(pop, g)` with g(key) each slot's gradient. */
function traceOptimize(setup: TraceSetup, [n]: TracePoint): { lines: string[]; trainable: string[] } {
  const { tf, program } = setup;
  const trace = new Trace(tf);
  const pop = tracePopulation(setup, trace.tf, n);
  try {
    return scoped(tf, () => {
      nameValues(trace, pop, true);
      // distinct powers, so that the code reads the bias corrections from the population's state
      // (the same for every member unless the betas vary: members that took as many steps share them)
      const varies = (key: string) => setup.hyper.varied.has(key);
      pop.state.accBeta1 = pop.memberIds.map((m) => 0.5 + (varies('beta1') ? m + 1 : 1) / 4096);
      pop.state.accBeta2 = pop.memberIds.map((m) => 0.25 + (varies('beta2') ? m + 1 : 1) / 4096);
      pop.state.sharedAccBeta1 = 0.375;
      pop.state.sharedAccBeta2 = 0.125;
      const grads = new Map(pop.slots.map((s) => [s.key, tf.zerosLike(s.variable)]));
      for (const [key, g] of grads) trace.name(g, `g('${key}')`);
      trace.symbolic = symbolic(trace, pop, Object.keys(program.train!.optimizer.args), movingKeys(setup));
      trace.prefix = 'u';
      const keys = pop.slots.map((slot) => slot.key);
      trace.shortArray = (items) => shortForm(items, keys);
      trace.run(() => pop.optimize(grads));
      return { lines: trace.lines, trainable: pop.slots.map((s) => s.key) };
    });
  } finally {
    pop.dispose();
  }
}

/**
 * An array naming every trainable parameter's gradient or slot, in order, written as a map over
 * `trainable` (the emitted module's list of them).
 */
function shortForm(items: string[], keys: string[]): string | undefined {
  if (items.length !== keys.length) return undefined;
  if (items.every((item, i) => item === `g('${keys[i]}')`)) return 'trainable.map(g)';
  const slot = /^slots\['.*:(\w+)'\]$/.exec(items[0])?.[1];
  if (slot && items.every((item, i) => item === `slots['${keys[i]}:${slot}']`)) return `trainable.map((name) => slots[\`\${name}:${slot}\`])`;
  return undefined;
}

/** The whole step, traced. */
export function traceStep(setup: TraceSetup): TracedStep {
  const { ensemble, program } = setup;
  // the loop lowering writes each member out: its code grows with N, which stays as it is
  const points = ensemble.lowering === 'loop' ? batchPoints(ensemble.members) : TRACE_POINTS;
  const train = points.map((p) => traceForward(setup, p, true));
  const evaluation = points.map((p) => traceForward(setup, p, false));
  const ops = ensemble.ops.map((op, i) => {
    const lines = generalise(train.map((t) => t.ops[i].lines), points);
    const evalLines = generalise(evaluation.map((t) => t.ops[i].lines), points);
    const same = lines.join('\n') === evalLines.join('\n') && train[0].ops[i].results.join() === evaluation[0].ops[i].results.join();
    const results = train[0].ops[i].results;
    return same ? { op, lines, results } : { op, lines, evaluation: evalLines, results };
  });
  const output = generalise(train.map((t) => t.output.lines), points);
  const { loss: lossConfig } = program.train!;
  const loss = generalise(points.map((p) => traceLoss(setup, p, (tf, out, y) => memberLosses(tf, lossConfig.name, lossConfig.args, out, y))), points);
  // the metrics netc train computes for this program (the train block's, and those its schedules rank by)
  const config = program.train!;
  const ranked = [...program.schedules, ...(config.lr_schedule ? [config.lr_schedule] : [])].map((s) => ({ metric: String(s.args.metric ?? '') }));
  const metrics = Object.fromEntries(
    computedMetrics(config.metrics, ranked).map((name) => [name, generalise(points.map((p) => traceLoss(setup, p, (tf, out, y) => memberMetric(tf, name, lossConfig.name, out, y))), points)]),
  );
  const optimizers = points.map((p) => traceOptimize(setup, p));
  return {
    ops,
    output,
    result: train[0].output.results[0],
    sharedInput: ensemble.ops[0].shared,
    loss,
    metrics,
    optimize: withoutUnread(generalise(optimizers.map((o) => o.lines), points)),
    trainable: optimizers.find((_, i) => points[i][0] === ensemble.members)?.trainable ?? optimizers[0].trainable,
  };
}

/** Runs f, then disposes every tensor it made (tf.tidy, for results that are not tensors). */
function scoped<T>(tf: TF, f: () => T): T {
  tf.engine().startScope();
  try {
    return f();
  } finally {
    tf.engine().endScope();
  }
}
