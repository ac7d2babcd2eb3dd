// The emit pass: a compiled .net file -> the text of a readable TypeScript module that trains its ensemble
// on netc's runtime. The module embeds the configuration and the IR as data, and spells the fused forward
// pass out as straight-line code, one runtime op per line. Pure: the text depends on the state and the
// info only (no clock, no files, no working directory), so golden files can pin it; src/emit/format.ts
// lays it out and the CLI writes it.
import { posix, relative, resolve, sep } from 'node:path';
import { slicingMap } from '../ensemble/slicing-map.js';
import type { BoundValue } from '../check/arg-spec.js';
import { hasSharedParams, type EnsembleIR, type WideOp } from '../ensemble/ensemble-ir.js';
import { formatAttr } from '../ir/print.js';
import { layerKind } from '../layers/registry.js';
import type { CompileState } from '../pipeline.js';
import { hyperTable, varyKey } from '../runtime/hyper.js';
import type { ModuleEnsemble } from './module-api.js';
import { splitText } from '../vocabulary/splits.js';

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
}

/**
 * The EmitInfo for compiling `file` to `out` (undefined: standard output), both as named on the command
 * line, relative to `cwd`. Pure: `cwd` is passed in, not read.
 */
export function emitInfo(file: string, out: string | undefined, cwd: string): EmitInfo {
  const netDir = resolve(cwd, file, '..');
  if (out === undefined) return { file, dataDir: { relativeToModule: false, path: netDir } };
  const rel = relative(resolve(cwd, out, '..'), netDir).split(sep).join('/');
  return { file, out, dataDir: { relativeToModule: true, path: rel === '' ? '.' : rel } };
}

/** The text of the module (unformatted: format it with formatModule). */
export function emitModule(state: CompileState, info: EmitInfo): string {
  const { program, ir: model, ensemble } = state;
  if (!program || !model || !ensemble || !program.train) throw new Error('emitModule needs a cleanly compiled program with a train block');
  const train = program.train;
  const n = ensemble.members;
  const table = hyperTable(program, model);
  const vary: ModuleEnsemble['vary'] = program.ensemble.vary.map((v) => ({
    path: v.path,
    key: varyKey(v.target, model),
    target: v.target,
    space: v.space,
  }));
  const split = program.ensemble.split;
  const ensembleConfig: ModuleEnsemble = { members: n, lowering: ensemble.lowering, seed: program.ensemble.seed, vary, ...(split ? { split } : {}) };
  const trainConfig = { ...train };
  const hyperparameters = Object.fromEntries(vary.map((v) => [v.path, Array.from({ length: n }, (_, m) => table.value(v.key, m))]));
  const moduleName = info.out ? posix.basename(info.out.split(sep).join('/')) : undefined;
  const input = ensemble.ops[0];
  const output = ensemble.ops[model.output];
  const script = commentText(moduleName ?? 'MODULE.ts');
  const file = commentText(info.file);
  const L: string[] = [];

  // ---- header
  L.push(`// ${moduleName ? `${script}: generated` : 'Generated'} by netc from ${file}: model ${model.name}, ${n} member${n === 1 ? '' : 's'}, lowering ${ensemble.lowering}.`);
  L.push(`// Recompile rather than edit: ${commentText(recompileCommand(state, info))}`);
  L.push('//');
  L.push(`// forward() is the fused forward pass of the ${n} members as straight-line code, one runtime op per line,`);
  L.push(`// in the order of the ensemble IR; train() loads the data and trains every member exactly as`);
  L.push(`// \`netc train ${file}\` does. Run as a script, it trains and prints each member's final metrics:`);
  L.push(`//   npx tsx ${script} [--steps N | --epochs N] [--backend auto|node-gpu|node|webgpu|wasm|cpu] [--seed N]`);
  if (train.lr_schedule && train.lr_schedule.name !== 'constant') {
    L.push(`// Learning rates follow lr_schedule ${train.lr_schedule.name}(): train() sets each member's rate before every step, as netc train does.`);
  }
  if (split) {
    L.push(`// Each member trains on examples of its own (split: ${splitText(split)}): train() gathers every member's own batch,`);
    L.push(`// [N, B, ...], and validates each member on its own held-out examples, as netc train does.`);
  }
  if (program.schedules.length) {
    L.push(`// The file's schedules (${program.schedules.map((s) => s.name).join(', ')}) act between intervals in train(), as in netc train.`);
  }
  // Only types are imported from netc here: its code is loaded with import() where it is needed. netc is an
  // ES module, and import() loads it as one even where this module runs as CommonJS (tsx, in a package
  // without "type": "module"), where a static import would become require(). For the same reason the module
  // has no top-level await, and it takes TF.js from netc (loadTF) rather than importing its own copy.
  L.push(`import { ${info.dataDir.relativeToModule ? 'fileURLToPath, ' : ''}pathToFileURL } from 'node:url';`);
  L.push(`import { parseArgs } from 'node:util';`);
  L.push(
    'import type { BackendName, EnsembleIR, ForwardPass, ModelIR, ModuleEnsemble, Population, ScheduleConfig, SlicingMap, Tensor, TF, ' +
      "TrainConfig, TrainResult } from 'netc';",
  );
  L.push('');

  // ---- configuration
  L.push(`/** The .net file this module was compiled from, as named to netc compile. */`);
  L.push(`export const netFile = ${literal(info.file)};`);
  L.push('');
  if (info.dataDir.relativeToModule) {
    L.push('/**');
    L.push(" * The folder the train block's data paths (csv, idx) are read from, as `netc train` reads them: the .net");
    L.push(` * file's folder, written relative to this module's folder (${commentText(dirSlash(info.dataDir.path))}) so the two can move together.`);
    L.push(' */');
    L.push(`export const dataDir = fileURLToPath(new URL(${literal(urlPath(dirSlash(info.dataDir.path)))}, import.meta.url));`);
  } else {
    L.push('/**');
    L.push(" * The folder the train block's data paths (csv, idx) are read from, as `netc train` reads them: the .net");
    L.push(" * file's folder, as an absolute path (this module was written to standard output, so its own folder was");
    L.push(' * not known); compile with -o to have it written relative to the module.');
    L.push(' */');
    L.push(`export const dataDir = ${literal(info.dataDir.path)};`);
  }
  L.push('');
  L.push(`/** The ensemble: its members${n !== program.ensemble.members ? ` (${n} from --members; the file says ${program.ensemble.members})` : ''}, lowering, seed and the hyperparameters that vary. */`);
  L.push(`export const ensembleConfig: ModuleEnsemble = ${literal(ensembleConfig)};`);
  L.push('');
  L.push('/** The train block as netc checked it, every default filled in. */');
  L.push(`export const trainConfig: TrainConfig = ${literal(trainConfig)};`);
  L.push('');
  if (vary.length) {
    L.push('/**');
    L.push(` * Each member's value of every varied hyperparameter, by the path the .net file gives it: drawn at compile`);
    L.push(` * time by hyperTable() for seed ${program.ensemble.seed}, as train() draws them at run time (another seed draws others).`);
    L.push(' */');
  } else {
    L.push(`/** Nothing varies: every member trains with the .net file's hyperparameters. */`);
  }
  L.push(`export const hyperparameters: Record<string, number[]> = ${literal(hyperparameters)};`);
  L.push('');
  L.push(`/** One member's network: the model IR. */`);
  L.push(`export const model: ModelIR = ${literal(model)};`);
  L.push('');
  L.push('/** The schedules that change the population between intervals (PBT, halving, early stopping). */');
  L.push(`export const schedules: ScheduleConfig[] = ${literal(program.schedules)};`);
  L.push('');
  L.push(`/** The model widened to ${n} members (the ensemble IR), as the runtime executes it. */`);
  L.push(
    `export const ensembleIR: EnsembleIR = { model, lowering: ${literal(ensemble.lowering)}, members: ${n}, ops: ${literal(ensemble.ops)}, params: ${literal(ensemble.params)} };`,
  );
  L.push('');
  L.push('/**');
  L.push(' * The inverse of widening, one rule per parameter: member i\'s copy is tf.slice(fused, begin + i * step, slice_size),');
  L.push(' * reshaped to shape (memberParamSlice(param, i) from netc computes it; blockdiag kernels also name their mask).');
  L.push(' */');
  L.push(`export const slicingMap: SlicingMap = ${literal(slicingMap(ensemble))};`);
  L.push('');

  // ---- forward
  const names = variableNames(ensemble);
  const variedKeys = new Set(vary.map((v) => v.key));
  L.push('/**');
  const inputs = input.shared ? `x ${valueShape(ensemble, input)}, shared by every member` : `x [N=${n}, B, ${input.shape.join(', ')}], each member's own batch`;
  L.push(` * The fused forward pass: ${inputs}, to ${memberFirst(ensemble, output)}, member first.`);
  L.push(' * One call per op of ensembleIR, in order: pass.op(id, inputs) runs op `id` on the values of its inputs.');
  L.push(' */');
  L.push('export function forward(pass: ForwardPass, x: Tensor): Tensor {');
  for (const op of ensemble.ops) {
    L.push(`  // ${describeOp(ensemble, op, variedKeys)}`);
    const call = op.op === 'input' ? 'pass.input(x)' : `pass.op(${op.id}, [${op.inputs.map((i) => names[i]).join(', ')}])`;
    L.push(`  const ${names[op.id]} = ${call};`);
  }
  L.push(`  return pass.output(${names[model.output]});`);
  L.push('}');
  L.push('');

  // ---- population
  L.push('/**');
  L.push(` * The population before training: each member's initial weights drawn by initMember for \`seed\` (default`);
  L.push(` * ${program.ensemble.seed}, the ensemble's), fused into the widened variables of ensembleIR, with forward() as its forward`);
  L.push(" * pass. `tf` defaults to netc's own TF.js (loadTF()), on its active backend. The caller disposes it.");
  L.push(' */');
  L.push('export async function createPopulation(options: { tf?: TF; seed?: number; memberIds?: number[] } = {}): Promise<Population> {');
  L.push("  const netc = await import('netc');");
  L.push('  const seed = options.seed ?? ensembleConfig.seed;');
  L.push('  const table = netc.hyperTable({ ensemble: { ...ensembleConfig, seed }, train: trainConfig }, model);');
  L.push('  return new netc.Population({');
  L.push('    tf: options.tf ?? (await netc.loadTF()),');
  L.push('    ensemble: ensembleIR,');
  L.push('    memberIds: options.memberIds ?? Array.from({ length: ensembleConfig.members }, (_, i) => i),');
  L.push('    seed,');
  L.push('    optimizer: trainConfig.optimizer.name,');
  L.push('    loss: trainConfig.loss,');
  L.push('    hyper: (key, member) => table.value(key, member),');
  // the shared layers' parameters train with the file's hyperparameters
  if (hasSharedParams(ensemble)) L.push('    base: (key) => table.base(key),');
  L.push('    initial: (member) => netc.initMember(model, seed, member),');
  L.push('    forward,');
  L.push('  });');
  L.push('}');
  L.push('');

  // ---- train
  L.push('export interface TrainOptions {');
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
  L.push(' * hyperparameters and steps, so the same weights for the same seed and backend), with forward() as the');
  L.push(' * forward pass. The trained population is result.population: the caller owns it and disposes it.');
  L.push(' */');
  L.push('export async function train(options: TrainOptions = {}): Promise<TrainResult> {');
  L.push("  if (options.steps !== undefined && options.epochs !== undefined) throw new Error('give steps or epochs, not both');");
  L.push("  const netc = await import('netc');");
  L.push('  const log = options.log ?? (() => {});');
  L.push('  const seed = options.seed ?? ensembleConfig.seed;');
  L.push('  const program = { ensemble: { ...ensembleConfig, seed }, train: trainConfig };');
  L.push("  const backend = await netc.selectBackend(options.backend ?? 'auto', { log });");
  L.push('  const data = netc.splitValidation(await netc.loadDataset(trainConfig.data, { baseDir: dataDir, seed }), trainConfig.validation, trainConfig.test);');
  L.push('  const perEpoch = netc.batchesPerEpoch({ program, data });');
  L.push('  // as netc train: --steps, else --epochs, else the train block\'s');
  L.push('  const steps = options.steps ?? (options.epochs !== undefined ? options.epochs * perEpoch : (trainConfig.steps ?? trainConfig.epochs! * perEpoch));');
  L.push('  const epochs = Math.ceil(steps / perEpoch);');
  L.push('  log(`training ${ensembleConfig.members} members of ${model.name} (${ensembleConfig.lowering}) on ${data.train.count} examples: ${steps} steps`);');
  L.push('  const keyOf = (path: string) => ensembleConfig.vary.find((v) => v.path === path)!.key;');
  L.push('  return netc.train(');
  L.push('    { tf: backend.tf, program, model, ensemble: ensembleIR, hyper: netc.hyperTable(program, model), data, steps, seed, forward, schedules: netc.makeSchedules(schedules, ensembleConfig.vary, keyOf, seed) },');
  L.push('    {');
  L.push('      onEpoch: (r) => log(`epoch ${r.epoch}/${epochs}: step ${r.step}/${steps}, best loss ${Math.min(...r.metrics.map((m) => m.loss).filter(Number.isFinite)).toFixed(4)}`),');
  L.push('      onEvent: (e) => log(JSON.stringify(e)),');
  L.push('    },');
  L.push('  );');
  L.push('}');
  L.push('');

  // ---- script
  L.push(`/** Run as a script (npx tsx ${script}): train, then print each member's hyperparameters and final metrics. */`);
  L.push('async function main(): Promise<void> {');
  L.push("  const { values } = parseArgs({ options: { steps: { type: 'string' }, epochs: { type: 'string' }, backend: { type: 'string' }, seed: { type: 'string' } } });");
  L.push('  const int = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));');
  L.push('  const result = await train({');
  L.push('    steps: int(values.steps),');
  L.push('    epochs: int(values.epochs),');
  L.push("    backend: values.backend as BackendName | 'auto' | undefined,");
  L.push('    seed: int(values.seed),');
  L.push('    log: (line) => console.error(line),');
  L.push('  });');
  L.push('  console.log(`${result.steps} steps x ${ensembleConfig.members} members in ${result.seconds.toFixed(1)} s`);');
  L.push('  result.final.forEach((metrics, m) => {');
  L.push('    const id = result.memberIds[m];');
  L.push('    const hyper = ensembleConfig.vary.map((v) => `${v.path} ${result.population.spec.hyper(v.key, id)}`);');
  L.push('    const scores = Object.entries(metrics).map(([name, value]) => `${name} ${Number(value).toFixed(4)}`);');
  L.push('    const stopped = result.retired.some((r) => r.member === id) ? \' (stopped early)\' : \'\';');
  L.push('    console.log(`member ${id}${stopped}: ${[...hyper, ...scores].join(\', \')}`);');
  L.push('  });');
  L.push('  result.population.dispose();');
  L.push('}');
  L.push('');
  L.push('if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {');
  L.push('  main().catch((error: unknown) => {');
  L.push('    console.error(error);');
  L.push('    process.exitCode = 1;');
  L.push('  });');
  L.push('}');
  return L.join('\n') + '\n';
}

function recompileCommand(state: CompileState, info: EmitInfo): string {
  const e = state.ensemble!;
  const parts = ['netc compile', info.file];
  if (e.lowering !== 'grouped') parts.push(`--lowering ${e.lowering}`);
  if (e.members !== state.program!.ensemble.members) parts.push(`--members ${e.members}`);
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

/** What pass.output() returns for op: always member first. */
const memberFirst = (e: EnsembleIR, op: WideOp) => `[N=${e.members}, B, ${op.shape.join(', ')}]`;

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
    'pass x tf netFile dataDir ensembleConfig trainConfig hyperparameters model ensembleIR forward createPopulation train'
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
