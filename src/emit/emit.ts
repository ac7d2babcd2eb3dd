// The emit pass: a compiled .net file -> the text of a readable TypeScript module that trains its ensemble
// on netc's runtime. The module embeds the configuration and the IR as data, and spells the fused forward
// pass out as straight-line code, one runtime op per line. Pure: the text depends on the compiled run and
// the info only (no clock, no files, no working directory), so golden files can pin it; src/emit/format.ts
// lays it out and the CLI writes it.
import type { StepCode } from '../step/step-code.js';
import { posix, relative, resolve, sep } from 'node:path';
import type { BoundValue } from '../core/arg-spec.js';
import type { EnsembleIR, WideOp } from '../ensemble/ensemble-ir.js';
import { slicingMap, type ParamSlicing } from '../ensemble/slicing-map.js';
import { formatAttr } from '../ir/print.js';
import { layerKind } from '../layers/registry.js';
import type { CompiledRun } from '../runtime/compiled-run.js';
import { varyKey } from '../runtime/hyper.js';
import type { ModuleEnsemble, ModuleVary } from './module-api.js';
import type { ModuleParam } from '../kernels/module-population.js';
import type { TF } from '../kernels/tf.js';
import { traceStep, type TracedStep } from './trace-step.js';
import { splitText } from '../vocabulary/splits.js';
import { textSources } from '../data/text.js';
import { tokenReader } from '../ir/token-reader.js';

export interface EmitInfo {
  /** the .net file as the user named it: shown in the header and kept in the module */
  file: string;
  /**
   * The folder the train block's data paths are relative to (the .net file's folder, as `netc train`
   * reads them): relative to the module's own folder when the module's location is known, so that the
   * two can move together; absolute otherwise (a module written to standard output).
   */
  dataDir: { relativeToModule: boolean; path: string };
  /** the output file as named on the command line, for the header's recompile command */
  out?: string;
  /** TF.js, to trace the step with (src/emit/trace-step.ts): the math the module writes out is what it runs */
  tf: TF;
}

/**
 * The EmitInfo for compiling `file` to `out` (undefined: standard output), both as named on the command
 * line, relative to `cwd`. Pure: `cwd` is passed in, not read.
 */
export function emitInfo(file: string, out: string | undefined, cwd: string, tf: TF): EmitInfo {
  const netDir = resolve(cwd, file, '..');
  if (out === undefined) return { file, tf, dataDir: { relativeToModule: false, path: netDir } };
  const rel = relative(resolve(cwd, out, '..'), netDir).split(sep).join('/');
  return { file, out, tf, dataDir: { relativeToModule: true, path: rel === '' ? '.' : rel } };
}

/** The text of the module (unformatted: format it with formatModule). */
export function emitModule(run: CompiledRun, step: StepCode, info: EmitInfo): string {
  const { program, model, ensemble } = run;
  if (!program.train) throw new Error('emitModule needs a program with a train block');
  const n = ensemble.members;
  const vary: ModuleVary[] = program.ensemble.vary.map((v) => ({ path: v.path, key: varyKey(v.target, model), target: v.target, space: v.space }));
  const names = variableNames(ensemble);
  const traced = traceStep({ tf: info.tf, program, ensemble, hyper: run.hyper, names });
  const ctx: ModuleContext = { run, info, n, vary, names, traced, fused: step.whyNotWasm() === undefined, script: commentText(info.out ? posix.basename(info.out.split(sep).join('/')) : 'MODULE.ts') };
  const parts = [header, configuration, forwardFunction, lossFunctions, optimizeFunction, stepFunction, populationFunctions, nodePart, dataDirFunction, scriptPart];
  return parts.map((part) => part(ctx).join('\n')).join('\n\n') + '\n';
}

interface ModuleContext {
  run: CompiledRun;
  info: EmitInfo;
  n: number;
  vary: ModuleVary[];
  names: string[];
  traced: TracedStep;
  /** whether the run's step plan has the generated WebAssembly step (on wasm, the module's step() is then one call of it) */
  fused: boolean;
  /** the module's file name, for comments */
  script: string;
}

function header({ run, info, n, script, traced, fused }: ModuleContext): string[] {
  const { program, model, ensemble } = run;
  const train = program.train!;
  const file = commentText(info.file);
  const input = ensemble.ops[0];
  const L: string[] = [];
  L.push(`// ${info.out ? `${script}: generated` : 'Generated'} by netc from ${file}: model ${model.name}, ${n} member${n === 1 ? '' : 's'}, lowering ${ensemble.lowering}.`);
  L.push(`// Recompile rather than edit: ${commentText(recompileCommand(run, info))}`);
  L.push('//');
  L.push(`// The fused training step of ${n} ${model.name} member${n === 1 ? '' : 's'} as TF.js code, traced by netc from the very rules \`netc train\` runs:`);
  L.push(`//   forward()           every member's network at once, layer by layer: x ${input.shared ? `[B, ${input.shape.join(', ')}]` : `[N, B, ${input.shape.join(', ')}]`} -> [N, B, ${ensemble.ops[model.output].shape.join(', ')}]`);
  L.push(`//   loss()              each member's mean ${train.loss.name} over the batch, [N]; step() takes the gradient of their sum,`);
  L.push(`//                       so that each member gets exactly its own`);
  L.push(`//   optimize()          the ${train.optimizer.name} update of every fused parameter, with each member's own hyperparameters`);
  L.push('//   step()              forward, loss, gradients (TF.js autodiff; netc/kernels where netc supplies the gradient), optimize');
  if (fused) L.push('//                       on the wasm backend, all of it is one call of netc\'s generated WebAssembly step (k.fusedStep)');
  L.push("//   createPopulation()  the members' initial weights, fused; extractMember(pop, i): member i's own weights back out");
  L.push('// N is the member count (halving may lower it) and B the batch size; they are read from the tensors.');
  const split = program.ensemble.split;
  if (split) L.push(`// Each member trains on examples of its own (split: ${splitText(split)}): x and y are [N, B, ...], member first.`);
  L.push('// Everything above the line "Node only" imports TF.js types and netc/kernels only, and runs in a browser as well;');
  L.push(`// below it, train() trains on the .net file's data as \`netc train ${file}\` does${program.schedules.length ? ` (schedules ${program.schedules.map((s) => s.name).join(', ')} included)` : ''}${train.lr_schedule && train.lr_schedule.name !== 'constant' ? `, lr_schedule ${train.lr_schedule.name}() included` : ''}, and:`);
  L.push(`//   npx tsx ${script} [--steps N | --epochs N] [--backend auto|node-gpu|node|webgpu|wasm|cpu] [--seed N]`);
  if (traced.ops.some((o) => o.evaluation)) L.push('// Ops that compute otherwise in training (dropout, batchnorm) branch on s.training.');
  L.push("import type { Scalar, Tensor } from '@tensorflow/tfjs';");
  L.push("import * as k from 'netc/kernels';");
  L.push(
    "import type { BackendName, EnsembleIR, ModuleEnsemble, ModuleParam, ModulePopulation as Population, ScheduleConfig, StepInputs, TF, TrainConfig, TrainResult } from 'netc/kernels';",
  );
  return L;
}

function configuration({ run, info, n, vary }: ModuleContext): string[] {
  const table = run.hyper;
  const { program, ensemble } = run;
  const split = program.ensemble.split;
  const ensembleConfig: ModuleEnsemble = { members: n, lowering: ensemble.lowering, seed: program.ensemble.seed, vary, ...(split ? { split } : {}) };
  const L: string[] = [];
  L.push(`/** The .net file this module was compiled from, as named to netc compile. */`);
  L.push(`export const netFile = ${literal(info.file)};`);
  L.push('');
  L.push(`/** The ensemble: its members${n !== program.ensemble.members ? ` (${n} from --members; the file says ${program.ensemble.members})` : ''}, lowering, seed and the hyperparameters that vary. */`);
  L.push(`export const ensembleConfig: ModuleEnsemble = ${literal(ensembleConfig)};`);
  L.push('');
  L.push('/** The train block as netc checked it, every default filled in. */');
  L.push(`export const trainConfig: TrainConfig = ${literal({ ...program.train! })};`);
  L.push('');
  L.push('/** The schedules that change the population between intervals (PBT, halving, early stopping): train() runs them. */');
  L.push(`export const schedules: ScheduleConfig[] = ${literal(program.schedules)};`);
  L.push('');
  const varied = Object.fromEntries(vary.map((v) => [v.key, Array.from({ length: n }, (_, m) => table.value(v.key, m))]));
  L.push('/**');
  L.push(` * The hyperparameters, by key: the file's value of each, and each member's own of those that vary${vary.length ? ` (${vary.map((v) => `${v.path} as ${v.key}`).join(', ')})` : ''},`);
  L.push(` * drawn for seed ${program.ensemble.seed}. A population reads them with pop.hyper(key).`);
  L.push(' */');
  L.push(`export const baseHyperparameters: Record<string, number> = ${literal(Object.fromEntries(table.keys.map((key) => [key, table.base(key)])))};`);
  L.push(`export const hyperparameters: Record<string, number[]> = ${literal(varied)};`);
  L.push('');
  L.push(`/** Each parameter of one member, and how the members' copies are fused (layout: ${layoutsText(ensemble)}). */`);
  const params: ModuleParam[] = ensemble.params.map((p) => ({ name: p.name, shape: p.shape, layout: p.layout, init: p.init, trainable: p.trainable }));
  L.push(`export const params: ModuleParam[] = ${literal(params)};`);
  return L;
}

const LAYOUTS: Record<string, string> = {
  stacked: "stacked: [N, ...shape]",
  columns: 'columns: the members side by side on the last axis',
  blockdiag: "blockdiag: [N*in, N*out], member i's block on the diagonal, kept there by a mask",
  separate: 'separate: one variable per member, name#i',
  shared: 'shared: one copy for every member',
};
const layoutsText = (e: EnsembleIR) => [...new Set(e.params.map((p) => p.layout))].map((l) => LAYOUTS[l]).join('; ');

/** A function's opening lines: the names its body reads from the population (and N, B from the tensors). */
function preamble(body: string[], from: string, available: Record<string, string>, sizes: Record<string, string>): string[] {
  const text = body.join('\n');
  const uses = (name: string) => new RegExp(`\\b${name.replace(/\$/g, '\\$')}\\b`).test(text);
  const picked = Object.entries(available).filter(([name]) => uses(name));
  const L = picked.length ? [`  const { ${picked.map(([name, field]) => (name === field ? name : `${field}: ${name}`)).join(', ')} } = ${from};`] : [];
  for (const [name, expr] of Object.entries(sizes)) if (uses(name)) L.push(`  const ${name} = ${expr};`);
  return L;
}

function forwardFunction({ run, traced, n }: ModuleContext): string[] {
  const ensemble = run.ensemble;
  const input = ensemble.ops[0];
  const output = ensemble.ops[run.model.output];
  const varied = new Set(run.program.ensemble.vary.map((v) => varyKey(v.target, run.model)));
  const body: string[] = [];
  for (const t of traced.ops) {
    body.push(`  // ${describeOp(ensemble, t.op, varied)}`);
    if (!t.evaluation) body.push(...t.lines.map((l) => `  ${l}`));
    else body.push(...branch(t.lines, t.evaluation, t.results));
  }
  body.push(...traced.output.map((l) => `  ${l}`));
  body.push(`  return ${traced.result};`);
  const L: string[] = [];
  L.push('/**');
  const x = input.shared ? `x [B, ${input.shape.join(', ')}], shared by every member` : `x [N, B, ${input.shape.join(', ')}], each member's own batch`;
  L.push(` * The fused forward pass of the N members (${n} as compiled): ${x}, to [N, B, ${output.shape.join(', ')}], member first.`);
  L.push(' * In training (s.training) each member draws its own dropout masks, and batchnorm pushes its new running');
  L.push(' * statistics to s.updates; step() applies them after the optimizer.');
  L.push(' */');
  L.push('export function forward(pop: Population, x: Tensor, s: StepInputs): Tensor {');
  if (ensemble.lowering === 'loop') L.push(...loopGuard(n));
  L.push(...preamble(body, 'pop', { tf: 'tf', p: 'params', m: 'masks' }, { N: 'pop.memberIds.length', B: `x.shape[${input.shared ? 0 : 1}]` }));
  L.push(...body);
  L.push('}');
  return L;
}

/**
 * The loop lowering writes each member's ops out, so its code is for the member count it was compiled
 * with; a population that halving or early stopping made smaller needs grouped or blockdiag, which read N.
 */
function loopGuard(n: number): string[] {
  return [
    `  if (pop.memberIds.length !== ${n}) {`,
    `    throw new Error(\`compiled with --lowering loop for ${n} members, and the population has \${pop.memberIds.length}: compile with --lowering grouped or blockdiag for a population that schedules make smaller\`);`,
    '  }',
  ];
}

/** An op that computes otherwise in training: its value assigned in each branch. */
function branch(training: string[], evaluation: string[], results: string[]): string[] {
  const assign = (lines: string[]) => lines.map((l) => `    ${results.reduce((line, r) => line.replace(new RegExp(`^const ${r} = `), `${r} = `), l)}`);
  return [`  let ${results.map((r) => `${r}: Tensor`).join(', ')};`, '  if (s.training) {', ...assign(training), '  } else {', ...assign(evaluation), '  }'];
}

function lossFunctions({ run, traced }: ModuleContext): string[] {
  const train = run.program.train!;
  const sizes = { N: 'out.shape[0]', B: 'out.shape[1]' };
  const fn = (name: string, doc: string, body: string[]) => [
    `/** ${doc} */`,
    `export function ${name}(tf: TF, out: Tensor, y: Tensor): Tensor {`,
    ...preamble(body, '', {}, sizes),
    ...body.map((l) => `  ${l}`),
    '}',
  ];
  const labels = run.ensemble.ops[0].shared ? 'y [B, ...], the same for every member' : "y [N, B, ...], each member's own";
  const L = fn('loss', `Each member's mean ${train.loss.name} over the batch, [N]: out [N, B, ...] against the labels ${labels}.`, traced.loss);
  const metrics = Object.keys(traced.metrics);
  for (const name of metrics) L.push('', ...fn(name, `Each member's ${name} on the batch, [N].`, traced.metrics[name]));
  L.push('');
  L.push("/** The metrics step() can report, by name: the train block's, and those a schedule ranks members by. */");
  L.push(`export const metricFunctions: Record<string, (tf: TF, out: Tensor, y: Tensor) => Tensor> = { ${metrics.join(', ')} };`);
  return L;
}

function optimizeFunction({ run, traced }: ModuleContext): string[] {
  const optimizer = run.program.train!.optimizer;
  const body = traced.optimize.map((l) => `  ${l}`);
  return [
    '/**',
    ` * The ${optimizer.name} update of every parameter from its gradient g(name): each member's hyperparameters come`,
    " * from pop.hyper(key), shaped to broadcast against the fused parameter, and Adam's bias corrections from",
    ' * pop.state. Call inside tf.tidy.',
    ' */',
    'export function optimize(pop: Population, g: (name: string) => Tensor): void {',
    ...preamble(body, 'pop', { tf: 'tf', p: 'params', slots: 'slots' }, { N: 'pop.memberIds.length' }),
    ...body,
    '}',
  ];
}

function stepFunction({ traced, run, fused }: ModuleContext): string[] {
  const derived = run.ensemble.params.filter((p) => p.trainable).map((p) => p.name);
  const list = derived.join() === traced.trainable.join() ? 'params.filter((p) => p.trainable).map((p) => p.name)' : literal(traced.trainable);
  return [
    "/** The trainable parameters, in the optimizer's order. */",
    `export const trainable: string[] = ${list};`,
    '',
    '/**',
    " * One training step on a batch: the members' losses [N] and each metric named in `metrics` [N] (the caller",
    ' * disposes them). x and y as forward() and loss() take them.',
    ' */',
    'export function step(pop: Population, x: Tensor, y: Tensor, metrics: readonly string[] = []): { losses: Tensor; metrics: Record<string, Tensor> } {',
    ...(run.ensemble.lowering === 'loop' ? loopGuard(run.ensemble.members) : []),
    ...(fused
      ? [
          "  // on wasm: the whole step below, generated as one WebAssembly function (the same code `netc train` runs)",
          // a shared layer steps with the file's hyperparameters
          `  const fused = k.fusedStep(pop, x, y, metrics, { ensemble: ir, loss: trainConfig.loss, optimizer: trainConfig.optimizer.name${run.ensemble.params.some((p) => p.layout === 'shared') ? ', base: baseHyperparameters' : ''} });`,
          '  if (fused) return fused;',
        ]
      : []),
    '  const { tf } = pop;',
    '  const s: StepInputs = { training: true, updates: [] };',
    '  let losses!: Tensor;',
    '  const values: Record<string, Tensor> = {};',
    '  const { value, grads } = tf.variableGrads(() => {',
    '    const out = forward(pop, x, s);',
    '    losses = tf.keep(loss(tf, out, y));',
    '    for (const name of metrics) {',
    "      if (!metricFunctions[name]) throw new Error(`this module computes ${Object.keys(metricFunctions).join(', ') || 'no metric'}, not ${name}`);",
    '      values[name] = tf.keep(metricFunctions[name](tf, out, y));',
    '    }',
    '    for (const [, t] of s.updates) tf.keep(t);',
    '    return tf.sum(losses) as Scalar;',
    '  }, trainable.map((name) => pop.params[name]));',
    '  value.dispose();',
    '  tf.tidy(() => {',
    '    optimize(pop, (name) => grads[pop.params[name].name]);',
    '    k.applyUpdates(pop, s.updates);',
    '  });',
    '  tf.dispose([...Object.values(grads), ...s.updates.map(([, t]) => t)]);',
    '  pop.step++;',
    '  return { losses, metrics: values };',
    '}',
  ];
}

function populationFunctions({ run }: ModuleContext): string[] {
  const ensemble = run.ensemble;
  const L: string[] = [];
  L.push("/** The model widened to its members (the ensemble IR, with the model's IR in it), as netc's runtime and the fused step read it: data. */");
  L.push(`const ir: EnsembleIR = JSON.parse(${quote(JSON.stringify(ensemble))});`);
  L.push('');
  L.push('/**');
  L.push(" * The population before training: each member's initial weights drawn as netc train draws them, fused by");
  L.push(" * the layouts of `params`, and zeroed optimizer slots; the members' hyperparameters from the tables above");
  L.push(' * (a constant learning rate: train() below follows the lr_schedule, where the file has one). Dispose it with');
  L.push(' * k.disposePopulation(pop).');
  L.push(' */');
  L.push('export function createPopulation(tf: TF, options: { memberIds?: number[] } = {}): Population {');
  L.push('  return k.createPopulation(tf, {');
  L.push('    params,');
  L.push('    memberIds: options.memberIds ?? Array.from({ length: ensembleConfig.members }, (_, i) => i),');
  L.push('    seed: ensembleConfig.seed,');
  L.push('    optimizer: trainConfig.optimizer.name,');
  L.push('    hyper: (key, member) => hyperparameters[key]?.[member] ?? baseHyperparameters[key],');
  L.push('  });');
  L.push('}');
  L.push('');
  L.push('/**');
  L.push(" * Member i's own weights (i: its position in the population), by parameter name: the inverse of the");
  L.push(' * widening, as slices of the fused variables. The caller disposes them.');
  L.push(' */');
  L.push('export function extractMember(pop: Population, i: number): Record<string, Tensor> {');
  L.push('  const { tf, params: p } = pop;');
  L.push('  return {');
  for (const p of slicingMap(ensemble).params) L.push(`    ${quote(p.name)}: ${memberExpression(p)},`);
  L.push('  };');
  L.push('}');
  return L;
}

/** Member i's slice of a fused parameter, as code: the slicing map's rule, tf.slice(T, begin + i * step, slice_size). */
function memberExpression(p: ParamSlicing): string {
  const v = `p[${quote(p.tensor)}]`;
  if (p.layout === 'shared') return `tf.clone(${v})`;
  if (p.layout === 'separate') return `tf.clone(p[\`${p.tensor.replace(/[`\\$]/g, '\\$&')}#\${i}\`])`;
  const term = (b: number, step: number) => [...(b ? [String(b)] : []), ...(step ? [step === 1 ? 'i' : `${step} * i`] : [])].join(' + ') || '0';
  const slice = `tf.slice(${v}, [${p.begin.map((b, a) => term(b, p.step[a])).join(', ')}], [${p.slice_size.join(', ')}])`;
  return p.slice_size.join() === p.shape.join() ? slice : `tf.reshape(${slice}, [${p.shape.join(', ')}])`;
}

/** The Node part: the IR as data, and train() around the module's step with netc's data, schedules and metrics. */
function nodePart({ run, info }: ModuleContext): string[] {
  const { ensemble } = run;
  const file = commentText(info.file);
  const L: string[] = [];
  L.push('// ---- Node only ------------------------------------------------------------------------------------------------');
  L.push("// train() and the script load netc's runtime with import(): the .net file's data, its batches and splits, the");
  L.push('// schedules, validation and metrics, exactly as `netc train` does, with step() and forward() above doing the math.');
  L.push('');
  L.push('/**');
  L.push(" * import() of a Node-only module (netc's runtime, node:*) by a name no bundler follows: a page's bundle of this");
  L.push(' * module leaves the Node part as it is, unresolved and never run, with nothing to mark external.');
  L.push(' */');
  L.push('function nodeImport<T>(name: string): Promise<T> {');
  L.push('  return import(/* webpackIgnore: true */ /* @vite-ignore */ name) as Promise<T>;');
  L.push('}');
  L.push('');
  L.push('export interface TrainOptions {');
  const train = run.program.train!;
  L.push(`  /** optimizer steps (default: the train block's ${train.steps !== undefined ? `steps, ${train.steps}` : `epochs, ${train.epochs}`}) */`);
  L.push('  steps?: number;');
  L.push('  /** epochs, instead of steps */');
  L.push('  epochs?: number;');
  L.push("  /** the TF.js backend, as `netc train --backend` (default 'auto') */");
  L.push("  backend?: BackendName | 'auto';");
  L.push('  /** replaces the ensemble seed: initial weights, varied hyperparameters, generated data, shuffling, dropout */');
  L.push('  seed?: number;');
  L.push('  /** receives the backend line and a line per epoch (default: nothing is logged) */');
  L.push('  log?: (line: string) => void;');
  L.push('}');
  L.push('');
  L.push('/**');
  L.push(` * Trains every member as \`netc train ${file}\` does (same data, split, batches, initial weights,`);
  L.push(' * hyperparameters and steps, so the same weights for the same seed and backend), with step() above as the');
  L.push(' * training step. The trained population is result.population: the caller owns it and disposes it.');
  L.push(' */');
  L.push('export async function train(options: TrainOptions = {}): Promise<TrainResult> {');
  L.push("  if (options.steps !== undefined && options.epochs !== undefined) throw new Error('give steps or epochs, not both');");
  L.push("  const netc = await nodeImport<typeof import('netc')>('netc');");
  L.push('  const log = options.log ?? (() => {});');
  L.push('  const seed = options.seed ?? ensembleConfig.seed;');
  L.push('  const program = { ensemble: { ...ensembleConfig, seed }, train: trainConfig };');
  L.push("  const backend = await netc.selectBackend(options.backend ?? 'auto', { log });");
  // holdout: shuffled draws the held-out examples from the seed, as netc train does
  const holdoutSeed = run.program.train!.holdout === 'shuffled' ? ', seed' : '';
  // a text source learns its vocabulary from the examples that train, as netc train's does
  const holdout = textSources.includes(run.program.train!.data.name) ? ', holdout: netc.holdoutOf(trainConfig, seed)' : '';
  // a model that reads token ids is given an npy x of uint8 as ids, not as pixels, as netc train gives it
  const tokenIds = tokenReader(run.model) ? ', tokenIds: true' : '';
  L.push(`  const data = netc.splitValidation(await netc.loadDataset(trainConfig.data, { baseDir: await dataDir(), seed${holdout}${tokenIds} }), trainConfig.validation, trainConfig.test${holdoutSeed});`);
  L.push('  const perEpoch = netc.batchesPerEpoch({ program, data });');
  L.push("  // as netc train: --steps, else --epochs, else the train block's");
  L.push('  const steps = options.steps ?? (options.epochs !== undefined ? options.epochs * perEpoch : (trainConfig.steps ?? trainConfig.epochs! * perEpoch));');
  L.push('  const epochs = Math.ceil(steps / perEpoch);');
  L.push('  log(`training ${ensembleConfig.members} members of ${ir.model.name} (${ensembleConfig.lowering}) on ${data.train.count} examples: ${steps} steps`);');
  L.push('  const keyOf = (path: string) => ensembleConfig.vary.find((v) => v.path === path)!.key;');
  L.push('  return netc.train(');
  L.push('    { tf: backend.tf, program, model: ir.model, ensemble: ir, hyper: netc.hyperTable(program, ir.model), data, steps, seed, forward, step, schedules: netc.makeSchedules(schedules, ensembleConfig.vary, keyOf, seed) },');
  L.push('    {');
  L.push('      onEpoch: (r) => log(`epoch ${r.epoch}/${epochs}: step ${r.step}/${steps}, best loss ${r.metrics.reduce((best, m) => (m.loss < best ? m.loss : best), Infinity).toFixed(4)}`),');
  L.push('      onEvent: (e) => log(JSON.stringify(e)),');
  L.push('    },');
  L.push('  );');
  L.push('}');
  return L;
}

function dataDirFunction({ info }: ModuleContext): string[] {
  const L: string[] = [];
  if (info.dataDir.relativeToModule) {
    L.push(`/** The folder the train block's data paths (csv, idx) are read from, as \`netc train\` reads them: the .net file's folder,`);
    L.push(` * written relative to this module's folder (${commentText(dirSlash(info.dataDir.path))}) so that the two can move together. */`);
    L.push('export async function dataDir(): Promise<string> {');
    L.push("  const { fileURLToPath } = await nodeImport<typeof import('node:url')>('node:url');");
    L.push(`  return fileURLToPath(new URL(${literal(urlPath(dirSlash(info.dataDir.path)))}, import.meta.url));`);
    L.push('}');
  } else {
    L.push(`/** The folder the train block's data paths (csv, idx) are read from, as \`netc train\` reads them: the .net file's folder,`);
    L.push(' * as an absolute path (this module was written to standard output); compile with -o to have it relative. */');
    L.push('export async function dataDir(): Promise<string> {');
    L.push(`  return ${literal(info.dataDir.path)};`);
    L.push('}');
  }
  return L;
}

function scriptPart({ info }: ModuleContext): string[] {
  const L: string[] = [];
  L.push(`/** Run as a script (npx tsx ${commentText(info.out ? posix.basename(info.out.split(sep).join('/')) : 'MODULE.ts')}): train, then print each member's hyperparameters and final metrics. */`);
  L.push('async function main(): Promise<void> {');
  L.push('  const started = performance.now();');
  L.push("  const { parseArgs } = await nodeImport<typeof import('node:util')>('node:util');");
  L.push("  const { values } = parseArgs({ options: { steps: { type: 'string' }, epochs: { type: 'string' }, backend: { type: 'string' }, seed: { type: 'string' } } });");
  L.push('  const int = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));');
  L.push('  const result = await train({');
  L.push('    steps: int(values.steps),');
  L.push('    epochs: int(values.epochs),');
  L.push("    backend: values.backend as BackendName | 'auto' | undefined,");
  L.push('    seed: int(values.seed),');
  L.push('    log: (line) => console.error(line),');
  L.push('  });');
  // the training time alone, and the whole run's (loading TF.js and the data included)
  L.push('  const total = (performance.now() - started) / 1000;');
  L.push('  console.log(`${result.steps} steps x ${ensembleConfig.members} members: trained in ${result.seconds.toFixed(1)} s, ${total.toFixed(1)} s in all (with loading TF.js and the data)`);');
  L.push('  result.final.forEach((metrics, m) => {');
  L.push('    const id = result.memberIds[m];');
  L.push('    const hyper = ensembleConfig.vary.map((v) => `${v.path} ${result.population.spec.hyper(v.key, id)}`);');
  L.push('    const scores = Object.entries(metrics).map(([name, value]) => `${name} ${Number(value).toFixed(4)}`);');
  L.push("    const stopped = result.retired.some((r) => r.member === id) ? ' (stopped early)' : '';");
  L.push("    console.log(`member ${id}${stopped}: ${[...hyper, ...scores].join(', ')}`);");
  L.push('  });');
  L.push('  result.population.dispose();');
  L.push('}');
  L.push('');
  L.push('// run as a script under Node (in a browser, or imported, nothing runs)');
  L.push("if (typeof process !== 'undefined' && process.argv?.[1] !== undefined) {");
  L.push("  void nodeImport<typeof import('node:url')>('node:url').then(({ pathToFileURL }) => {");
  L.push('    if (import.meta.url !== pathToFileURL(process.argv[1]).href) return;');
  L.push('    main().catch((error: unknown) => {');
  L.push('      console.error(error);');
  L.push('      process.exitCode = 1;');
  L.push('    });');
  L.push('  });');
  L.push('}');
  return L;
}

function recompileCommand(run: CompiledRun, info: EmitInfo): string {
  const e = run.ensemble;
  const parts = ['netc compile', info.file];
  if (e.lowering !== 'grouped') parts.push(`--lowering ${e.lowering}`);
  if (e.members !== run.program.ensemble.members) parts.push(`--members ${e.members}`);
  if (info.out) parts.push(`-o ${info.out}`);
  return parts.join(' ');
}

/** Text safe inside a line comment or a block comment: one line, no comment end. */
const commentText = (s: string) => s.replace(/\r\n|\r|\n|\u2028|\u2029/g, ' ').replaceAll('*/', '*\\/');

/** A relative folder as a URL path: every segment but `.` and `..` percent-encoded (`#`, `?`, `%`, spaces). */
const urlPath = (path: string) =>
  path
    .split('/')
    .map((part) => (part === '.' || part === '..' ? part : encodeURIComponent(part)))
    .join('/');

const dirSlash = (path: string) => (path === '.' ? './' : path.startsWith('.') ? `${path}/` : `./${path}/`);

// ---- the forward pass's comments and names ---------------------------------------------------------

/** The op's widened output as printEnsembleIR shows it, e.g. `[N=15, B, 20]`, `[B, N*32]`, `N x [B, 128]`. */
function valueShape(e: EnsembleIR, op: WideOp): string {
  const batch = `[B, ${op.shape.join(', ')}]`;
  if (op.shared) return batch;
  switch (e.lowering) {
    case 'grouped':
      return `[N=${e.members}, ${batch.slice(1)}`;
    case 'blockdiag':
      return `[B, ${op.shape.map((d, i) => (i === op.shape.length - 1 ? `N*${d}` : String(d))).join(', ')}]`;
    case 'loop':
      return `N x ${batch}`;
  }
}

/** `h = dense_1: dense(32, relu) -> [N=10, B, 32], per member` */
function describeOp(e: EnsembleIR, op: WideOp, varied: Set<string>): string {
  const where = `${valueShape(e, op)}, ${op.shared ? 'shared' : 'per member'}`;
  if (op.op === 'input') return `${op.name} -> ${where}`;
  // layers that read labelled outputs (add, concat) name them
  const reads = layerKind(op.op)?.reads === 'labels' ? op.inputs.map((i) => e.ops[i].label ?? e.ops[i].name) : [];
  return `${op.label ? `${op.label} = ` : ''}${op.name}: ${op.op}(${[...reads, ...keyAttributes(op, varied)].join(', ')}) -> ${where}`;
}

/**
 * Positional arguments by value, the activation by name, other arguments only where not the default;
 * an argument that `vary` gives each member its own value of as `name: varied`.
 */
function keyAttributes(op: WideOp, varied: Set<string>): string[] {
  const out: string[] = [];
  for (const spec of layerKind(op.op)?.args ?? []) {
    const value = op.attrs[spec.name];
    if (value === undefined) continue;
    const text = compact(value);
    if (varied.has(`${op.name}.${spec.name}`)) out.push(`${spec.name}: varied`);
    else if (spec.positional) out.push(text);
    else if (spec.default !== undefined && JSON.stringify(spec.default) === JSON.stringify(value)) continue;
    else out.push(spec.name === 'activation' ? text : `${spec.name}: ${text}`);
  }
  return out;
}

/** A pair of equal numbers as the one number the .net file may write (`kernel: 5`). */
function compact(v: BoundValue): string {
  if (Array.isArray(v) && v.length === 2 && v[0] === v[1] && typeof v[0] === 'number') return String(v[0]);
  return formatAttr(v);
}

const reserved = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'import in instanceof new null return super switch this throw true try typeof var void while with yield let static ' +
    'implements interface package private protected public await arguments eval undefined NaN Infinity ' +
    // forward()'s own names, and the module's
    'x tf k p m s N B pop out y g slots Tensor Scalar TF Population StepInputs netFile dataDir ensembleConfig trainConfig hyperparameters ' +
    'baseHyperparameters params schedules ir forward loss optimize step trainable metricFunctions accuracy mse mae createPopulation ' +
    'extractMember train main'
  ).split(' '),
);

/** A variable per op: its label, or its name; made a valid, unused identifier. */
function variableNames(e: EnsembleIR): string[] {
  const used = new Set<string>();
  return e.ops.map((op) => {
    let name = (op.label ?? op.name).replace(/[^\w$]/g, '_');
    if (/^\d/.test(name)) name = `_${name}`;
    while (reserved.has(name) || used.has(name)) name += '_';
    used.add(name);
    return name;
  });
}

// ---- data as TypeScript literals --------------------------------------------------------------------

/** A JSON-like value as a TypeScript literal: single quotes, bare keys where they can be. */
function literal(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  switch (typeof v) {
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      return Object.is(v, -0) ? '-0' : String(v);
    case 'string':
      return quote(v);
    case 'boolean':
      return String(v);
    case 'object': {
      const entries = Object.entries(v as object).filter(([, value]) => value !== undefined);
      return entries.length ? `{ ${entries.map(([k, value]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : quote(k)}: ${literal(value)}`).join(', ')} }` : '{}';
    }
  }
  throw new Error(`emit: cannot write ${typeof v} as a literal`);
}

const quote = (s: string) => `'${JSON.stringify(s).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`;
