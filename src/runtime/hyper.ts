// Per-member hyperparameters. Every optimizer hyperparameter and every numeric layer hyperparameter
// has one value per member: the file's value, unless `vary` gives each member its own. Member i's
// value depends on (seed, path, i) only: lists cycle over members, spaces draw from the seed.
import type { BoundValue } from '../check/arg-spec.js';
import type { Program, Space, Vary } from '../check/program.js';
import type { ModelIR } from '../ir/model-ir.js';
import { layerKind } from '../layers/registry.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { Rng } from './rng.js';

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

const toNumber = (v: BoundValue) => (typeof v === 'boolean' ? Number(v) : (v as number));

/** What the table reads of a program: the seed, the vary lines and the optimizer. */
export interface HyperSource {
  ensemble: { seed: number; vary: readonly Pick<Vary, 'path' | 'target' | 'space'>[] };
  train?: Pick<NonNullable<Program['train']>, 'optimizer'>;
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
  const spaces = new Map<string, { space: Space; path: string }>();
  for (const v of program.ensemble.vary) {
    const key = v.target.kind === 'optimizer' ? v.target.arg : `${model.ops[v.target.layer + 1].name}.${v.target.arg}`;
    spaces.set(key, { space: v.space, path: v.path });
  }
  const overrides = new Map<string, number>();
  const keyOf = (key: string, member: number) => `${key}#${member}`;
  return {
    keys: [...base.keys()],
    varied: new Map([...spaces].map(([k, v]) => [k, v.path])),
    value(key, member) {
      const o = overrides.get(keyOf(key, member));
      if (o !== undefined) return o;
      const s = spaces.get(key);
      if (s) return drawFromSpace(s.space, seed, s.path, member);
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
