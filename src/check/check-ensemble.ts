// Checks the ensemble block: members, seed, and each `vary PATH: SPACE` — that the path names a real
// optimizer or layer hyperparameter, and that the space is valid for it.
import { spanUnion, type Span } from '../diagnostics/diagnostic.js';
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { layerKind } from '../layers/registry.js';
import { describeValue, type EntriesBlock, type Entry, type ModelBlock } from '../syntax/ast.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { describeRange, inRange, type ArgSpec, type ArgType, type BoundValue } from '../core/arg-spec.js';
import { bindArgs, checkValue } from './bind-args.js';
import { entriesAsArgs } from './entries.js';
import { intervalUnits, lrScheduleArg, type LrScheduleScope } from './check-lr-schedule.js';
import type { EnsembleConfig, Space, Vary, VaryTarget } from './program.js';
import { resolveRegistryCall } from './registry-call.js';
import { splits, type MemberSplit } from '../vocabulary/splits.js';

export const ensembleKeys: ArgSpec[] = [
  { name: 'members', type: { kind: 'int', min: 1 }, default: 1 },
  { name: 'seed', type: { kind: 'int', min: 0 }, default: 0 },
];

export interface VaryScope {
  model?: ModelBlock;
  /** the optimizer the train block names (adam when it names none); undefined when it is unknown */
  optimizer?: string;
  /** the train block's lr_schedule, for `vary lr_schedule.ARG` */
  lrSchedule?: LrScheduleScope;
}

/** `seed`: the command line's (--seed), in place of the block's. */
export function checkEnsemble(block: EntriesBlock | undefined, scope: VaryScope, sink: DiagnosticSink, seed?: number): EnsembleConfig | undefined {
  if (!block) return { members: 1, seed: seed ?? 0, vary: [] };
  const errorsBefore = sink.errorCount;
  const { args, vary } = entriesAsArgs(block, sink, true);
  const splitArg = args.find((a) => a.key!.name === 'split');
  const split = splitArg && resolveRegistryCall('split', splits, splitArg.value, sink)?.config;
  const known = args.filter((a) => {
    const key = a.key!;
    if (ensembleKeys.some((k) => k.name === key.name)) return true;
    if (key.name === 'split') return false;
    const names = [...ensembleKeys.map((k) => k.name), 'split', 'vary'];
    sink.report(Messages.UnknownEnsembleKey, key.span, key.name, didYouMean(key.name, names), names.join(', '));
    return false;
  });
  const bound = bindArgs('ensemble', known, ensembleKeys, sink, block.keyword);
  const seen = new Set<string>();
  const varies: Vary[] = [];
  for (const entry of vary) {
    const path = entry.path.map((p) => p.name).join('.');
    const span = entry.path.slice(1).reduce((s, p) => spanUnion(s, p.span), entry.path[0].span);
    if (seen.has(path)) {
      sink.report(Messages.VaryTwice, span, path);
      continue;
    }
    seen.add(path);
    const resolved = resolveVaryPath(entry, path, span, scope, sink);
    if (!resolved) continue;
    const space = checkSpace(`vary ${path}`, resolved.spec.type, entry, sink);
    // each member's value of a varied interval is a number of one unit
    const mixed = space && 'values' in space ? intervalUnits(space.values) : undefined;
    if (mixed) sink.report(Messages.BadSpace, entry.value.span, `vary ${path}: ${mixed}`);
    else if (space) varies.push({ path, target: resolved.target, space, span: entry.span });
  }
  if (sink.errorCount > errorsBefore) return undefined;
  return {
    members: bound.values.members as number,
    seed: seed ?? (bound.values.seed as number),
    vary: varies,
    ...(split ? { split: memberSplit(split.name, split.args), splitSpan: splitArg!.value.span } : {}),
    ...(bound.spans.members ? { membersSpan: bound.spans.members } : {}),
  };
}

/** The checked `split:` call as the runtime takes it. */
function memberSplit(name: string, args: Record<string, unknown>): MemberSplit {
  return name === 'kfold' ? { kind: 'kfold', k: args.k as number } : { kind: 'bootstrap' };
}

function resolveVaryPath(entry: Entry, path: string, span: Span, scope: VaryScope, sink: DiagnosticSink): { spec: ArgSpec; target: VaryTarget } | undefined {
  const fail = (why: string) => {
    sink.report(Messages.UnknownVaryPath, span, path, why);
    return undefined;
  };
  const hyperOnly = (spec: ArgSpec, owner: string) => {
    if (spec.shapeAffecting) {
      sink.report(Messages.VaryChangesShape, span, path, spec.name);
      return false;
    }
    if (!spec.hyper) {
      fail(`'${spec.name}' of ${owner} is not a numeric hyperparameter, so it cannot differ between members`);
      return false;
    }
    return true;
  };
  if (entry.path.length === 1) {
    if (!scope.optimizer) return undefined; // the optimizer itself is wrong, and reported
    const optimizer = optimizers.find((o) => o.name === scope.optimizer)!;
    const spec = optimizer.args.find((a) => a.name === path);
    if (!spec) {
      if (['batch', 'epochs', 'steps', 'data', 'shuffle'].includes(path)) return fail(`'${path}' is shared by all members: they train together on the same batches`);
      const hypers = optimizer.args.filter((a) => a.hyper).map((a) => a.name);
      return fail(`${optimizer.name} has no hyperparameter '${path}'${didYouMean(path, hypers)}; vary one of: ${hypers.join(', ')}, or LABEL.ARG of a labelled layer`);
    }
    return hyperOnly(spec, optimizer.name) ? { spec, target: { kind: 'optimizer', arg: spec.name } } : undefined;
  }
  if (entry.path.length !== 2) return fail('a path is an optimizer hyperparameter (lr), LABEL.ARG of a labelled layer (drop.rate) or lr_schedule.ARG');
  const [label, arg] = entry.path.map((p) => p.name);
  if (label === 'lr_schedule') {
    const spec = lrScheduleArg(arg, scope.lrSchedule, fail);
    return spec && hyperOnly(spec, 'the lr_schedule') ? { spec, target: { kind: 'lr_schedule', arg } } : undefined;
  }
  const statements = scope.model?.statements ?? [];
  const index = statements.findIndex((s) => s.label?.name === label);
  if (index < 0) {
    const labels = statements.flatMap((s) => (s.label ? [s.label.name] : []));
    return fail(`no layer is labelled '${label}'${didYouMean(label, labels)}${labels.length ? `; the labels are: ${labels.join(', ')}` : '; label one with `name = layer(...)`'}`);
  }
  const kind = layerKind(statements[index].call.callee.name);
  if (!kind) return undefined; // an unknown layer, already reported
  const spec = kind.args.find((a) => a.name === arg);
  if (!spec) {
    const hypers = kind.args.filter((a) => a.hyper).map((a) => a.name);
    return fail(`${kind.name} has no argument '${arg}'${didYouMean(arg, kind.args.map((a) => a.name))}${hypers.length ? `; it can vary: ${hypers.join(', ')}` : '; it has no hyperparameter that can vary'}`);
  }
  if (!hyperOnly(spec, kind.name)) return undefined;
  if (statements[index].shared) {
    sink.report(Messages.VarySharedLayer, span, path, label);
    return undefined;
  }
  return { spec, target: { kind: 'layer', layer: index, arg } };
}

const spaceForms = 'a list, uniform(a, b), loguniform(a, b) or choice(...)';

function checkSpace(what: string, type: ArgType, entry: Entry, sink: DiagnosticSink): Space | undefined {
  const v = entry.value;
  if (v.kind === 'list') {
    if (v.items.length === 0) {
      sink.report(Messages.BadSpace, v.span, `${what}: the list is empty`);
      return undefined;
    }
    const values = v.items.map((item) => checkValue(what, type, item, sink));
    return values.every((x): x is BoundValue => x !== undefined) ? { kind: 'list', values } : undefined;
  }
  if (v.kind !== 'call' || !['uniform', 'loguniform', 'choice'].includes(v.callee.name)) {
    const callee = v.kind === 'call' ? v.callee : undefined;
    if (callee) sink.report(Messages.UnknownName, callee.span, 'space', callee.name, didYouMean(callee.name, ['uniform', 'loguniform', 'choice']), 'uniform, loguniform, choice');
    else sink.report(Messages.BadSpace, v.span, `${what} needs ${spaceForms}, got ${describeValue(v)}`);
    return undefined;
  }
  if (v.callee.name === 'choice') {
    if (v.args.length === 0 || v.args.some((a) => a.key)) {
      sink.report(Messages.BadSpace, v.span, `${what}: choice(...) takes one or more values, without names`);
      return undefined;
    }
    const values = v.args.map((a) => checkValue(what, type, a.value, sink));
    return values.every((x): x is BoundValue => x !== undefined) ? { kind: 'choice', values } : undefined;
  }
  if (type.kind !== 'number') {
    const takes = type.kind === 'bool' ? 'true or false' : type.kind === 'int' ? 'integers' : 'other values';
    sink.report(Messages.BadSpace, v.span, `${what}: ${v.callee.name}(a, b) draws real numbers, but this hyperparameter takes ${takes}; use a list or choice(...)`);
    return undefined;
  }
  const bounds: ArgSpec[] = [
    { name: 'low', type: { kind: 'number' }, positional: true, required: true },
    { name: 'high', type: { kind: 'number' }, positional: true, required: true },
  ];
  const errorsBefore = sink.errorCount;
  const b = bindArgs(v.callee.name, v.args, bounds, sink, v.callee.span);
  if (sink.errorCount > errorsBefore) return undefined;
  const low = b.values.low as number;
  const high = b.values.high as number;
  if (v.callee.name === 'loguniform' && !(low > 0 && low < high)) {
    sink.report(Messages.BadSpace, v.span, `${what}: loguniform(a, b) needs 0 < a < b, got a = ${low}, b = ${high}`);
    return undefined;
  }
  if (!(low < high)) {
    sink.report(Messages.BadSpace, v.span, `${what}: uniform(a, b) needs a < b, got a = ${low}, b = ${high}`);
    return undefined;
  }
  // every draw must be a valid value: both ends inside the hyperparameter's range
  const endsOk = inRange({ ...type, kind: 'number' }, low) && (inRange({ ...type, kind: 'number' }, high) || (type.kind === 'number' && type.maxExclusive && high === type.max));
  if (!endsOk) {
    sink.report(Messages.BadSpace, v.span, `${what}: every value must be ${describeRange({ ...type, kind: 'number' })}, but the space spans [${low}, ${high}]`);
    return undefined;
  }
  return { kind: v.callee.name as 'uniform' | 'loguniform', low, high };
}
