// Per-member hyperparameters. Every optimizer hyperparameter and every numeric layer hyperparameter
// has one value per member: the file's value, unless `vary` gives each member its own. Member i's
// value depends on (seed, path, i) only: lists cycle over members, spaces draw from the seed. Under
// `split: kfold(k)` the k members of a setting (floor(i / k)) share their values: lists cycle over the
// settings and spaces draw per setting, so each value is trained on all k folds. The
// lr_schedule's arguments are hyperparameters too (`lr_schedule.min`), intervals by their amount.
import type { BoundValue, Interval } from '../core/arg-spec.js';
import type { Program, Space, Vary, VaryTarget } from '../check/program.js';
import type { IrOp, ModelIR } from '../ir/model-ir.js';
import { layerKind } from '../layers/registry.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { lrSchedules } from '../vocabulary/lr-schedules.js';
import { Rng } from '../util/rng.js';
import { settingOf, type MemberSplit } from '../vocabulary/splits.js';

/** Hyperparameter values per member id, by key: optimizer args by name (`lr`), layer args as `op.arg`. */
export interface HyperTable {
  /** keys in a fixed order: optimizer first, then layers */
  keys: string[];
  /** the keys that `vary` names, and the path the user wrote for each (`drop.rate` for `dropout_1.rate`) */
  varied: Map<string, string>;
  /** value of key for member id */
  value(key: string, member: number): number;
  /** the file's value of key, what no `vary` or PBT changes: a shared layer's parameters train with it */
  base(key: string): number;
  /** overrides a member's value (PBT) */
  set(key: string, member: number, value: number): void;
  /** the unit of each key whose value is an interval's amount (`lr_schedule.warmup`: steps or epochs) */
  units: Map<string, Interval['unit']>;
}

export function drawFromSpace(space: Space, seed: number, path: string, member: number): number {
  const pick = (values: BoundValue[], i: number) => toNumber(values[i]);
  switch (space.kind) {
    case 'list':
      return pick(space.values, member % space.values.length);
    case 'choice':
      return pick(space.values, Rng.of(seed, 'vary', path, member).int(space.values.length));
    case 'uniform':
      return Rng.of(seed, 'vary', path, member).range(space.low, space.high);
    case 'loguniform':
      return Math.exp(Rng.of(seed, 'vary', path, member).range(Math.log(space.low), Math.log(space.high)));
  }
}

/** A hyperparameter's value as a number: true/false as 1/0, an interval as its amount (the table keeps its unit). */
const toNumber = (v: BoundValue) => (typeof v === 'boolean' ? Number(v) : isInterval(v) ? v.amount : (v as number));
const isInterval = (v: BoundValue): v is Interval => typeof v === 'object' && v !== null && 'unit' in v;

/** The table's key of what a vary line names: `lr`, `dropout_1.rate` (a layer by its op name), `lr_schedule.min`. */
export function varyKey(target: VaryTarget, model: ModelIR): string {
  if (target.kind === 'optimizer') return target.arg;
  if (target.kind === 'lr_schedule') return `lr_schedule.${target.arg}`;
  return `${model.ops[target.layer + 1].name}.${target.arg}`;
}

/** What the table reads of a program: the seed, the vary lines and the optimizer. */
export interface HyperSource {
  ensemble: { seed: number; vary: readonly Pick<Vary, 'path' | 'target' | 'space'>[]; split?: MemberSplit };
  train?: Pick<NonNullable<Program['train']>, 'optimizer' | 'lr_schedule'>;
}

export function hyperTable(program: HyperSource, model: ModelIR): HyperTable {
  const seed = program.ensemble.seed;
  const base = new Map<string, number>();
  const optimizer = program.train?.optimizer ?? { name: 'adam', args: {} };
  const spec = optimizers.find((o) => o.name === optimizer.name)!;
  for (const a of spec.args) if (a.hyper || a.type.kind === 'bool') base.set(a.name, toNumber(optimizer.args[a.name] ?? a.default!));
  for (const op of model.ops.slice(1)) {
    for (const a of layerKind(op.op)!.args) if (a.hyper) base.set(`${op.name}.${a.name}`, toNumber(op.attrs[a.name] ?? a.default!));
  }
  const units = new Map<string, Interval['unit']>();
  const schedule = program.train?.lr_schedule;
  for (const a of lrSchedules.find((l) => l.name === schedule?.name)?.args ?? []) {
    if (!a.hyper) continue;
    const value = schedule!.args[a.name] ?? a.default!;
    base.set(`lr_schedule.${a.name}`, toNumber(value));
    if (isInterval(value)) units.set(`lr_schedule.${a.name}`, value.unit);
  }
  const spaces = new Map<string, { space: Space; path: string }>();
  for (const v of program.ensemble.vary) {
    const key = varyKey(v.target, model);
    spaces.set(key, { space: v.space, path: v.path });
    // a varied interval's values share one unit (the checker sees to it): it replaces the train block's
    const first = 'values' in v.space ? v.space.values[0] : undefined;
    if (first !== undefined && isInterval(first)) units.set(key, first.unit);
  }
  const overrides = new Map<string, number>();
  const keyOf = (key: string, member: number) => `${key}#${member}`;
  return {
    keys: [...base.keys()],
    varied: new Map([...spaces].map(([k, v]) => [k, v.path])),
    units,
    value(key, member) {
      const o = overrides.get(keyOf(key, member));
      if (o !== undefined) return o;
      const s = spaces.get(key);
      if (s) return drawFromSpace(s.space, seed, s.path, settingOf(program.ensemble.split, member));
      const b = base.get(key);
      if (b === undefined) throw new Error(`no hyperparameter ${key}`);
      return b;
    },
    base(key) {
      const b = base.get(key);
      if (b === undefined) throw new Error(`no hyperparameter ${key}`);
      return b;
    },
    set(key, member, value) {
      overrides.set(keyOf(key, member), value);
    },
  };
}

/**
 * The hyperparameters a member is shown with (tables, metrics.jsonl, events): the varied ones, by the path
 * the file wrote (`drop.rate`); when nothing varies and `orLr` is set, lr. `value` gives a key's value.
 */
export function shownHyperparameters(table: Pick<HyperTable, 'varied'>, value: (key: string) => number | undefined, orLr = true): Record<string, number> {
  const varied = [...table.varied];
  const pairs = varied.length ? varied.map(([key, path]) => [path, value(key)] as const) : orLr ? [['lr', value('lr')] as const] : [];
  return Object.fromEntries(pairs.filter(([, v]) => v !== undefined)) as Record<string, number>;
}

/** Every hyperparameter of member `id`, by key: its row of a checkpoint's `hyperparameters`. */
export function memberHyperparameters(table: Pick<HyperTable, 'keys' | 'value'>, id: number): Record<string, number> {
  return Object.fromEntries(table.keys.map((key) => [key, table.value(key, id)]));
}

/** One member's hyperparameters by key, as the checkpoint keeps them: `lr`, `dropout_1.rate`, ... */
export type MemberHyperparameters = Readonly<Record<string, number>>;

/** The member's hyperparameters lack a layer argument of the model: they belong to another model. */
export class MissingHyperparameterError extends Error {
  override name = 'MissingHyperparameterError';
}

/**
 * The op's arguments as this member has them: the file's values, with every argument that `vary` may give
 * a member its own (a `hyper` argument) replaced by the member's value, keyed `${op.name}.${arg}`.
 */
export function memberArgs(op: IrOp, hyper: MemberHyperparameters): Record<string, BoundValue> {
  const args = { ...op.attrs };
  for (const a of layerKind(op.op)?.args ?? []) {
    if (!a.hyper) continue;
    const value = hyper[`${op.name}.${a.name}`];
    if (value === undefined) throw new MissingHyperparameterError(`${op.name}: the member's hyperparameters have no '${op.name}.${a.name}'`);
    args[a.name] = value;
  }
  return args;
}
