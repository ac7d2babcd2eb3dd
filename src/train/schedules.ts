// Schedules change the population between training intervals: PBT (the bottom quantile copies a member
// of the top quantile and perturbs or resamples its varied hyperparameters), successive halving (the
// worst members stop), per-member early stopping (patience). Each returns decisions; the trainer
// carries them out by gathering along the member axis, so nothing leaves the device or goes to files.
// What a schedule remembers between intervals (early stopping's best values) is exported with
// state() and put back with restore(), so that a checkpoint carries it and a resumed run decides the same.
import type { ScheduleConfig, Space, Vary } from '../check/program.js';
import type { Interval } from '../core/arg-spec.js';
import { drawFromSpace } from '../runtime/hyper.js';
import { Rng } from '../util/rng.js';
import { plural } from '../util/plural.js';

export type ScheduleMetric = 'loss' | 'val_loss' | 'accuracy' | 'val_accuracy';

export interface StopDecision {
  member: number;
  reason: string;
  /** the member retires with the parameters of its best epoch (early stopping's restore_best), not its last */
  restore?: boolean;
}

export interface ExploitDecision {
  member: number;
  source: number;
  /** the new values of the member's varied hyperparameters, by key */
  hyperparameters: Record<string, number>;
}

export interface Decisions {
  stop: StopDecision[];
  exploit: ExploitDecision[];
  /** members whose metric is their best so far: the trainer keeps a copy of their parameters (restore_best) */
  best?: number[];
}

export interface ScheduleContext {
  step: number;
  /** active member ids, in population order */
  members: number[];
  /** the schedule's metric for each active member, in population order */
  metric: number[];
  /** current value of a varied hyperparameter key for a member id */
  hyper(key: string, member: number): number;
}

export interface Schedule {
  name: string;
  metric: ScheduleMetric;
  /** the interval in steps, given the steps per epoch (early stopping acts at every epoch end) */
  everySteps(perEpoch: number): number;
  decide(ctx: ScheduleContext): Decisions;
  /** what decide() remembers between calls, as JSON (undefined: nothing) */
  state?(): unknown;
  restore?(state: unknown): void;
  /** a PBT exploit copied each source member into member: what the schedule remembers of a member goes with it */
  copied?(copies: { member: number; source: number }[]): void;
}

export const higherIsBetter = (m: ScheduleMetric) => m.endsWith('accuracy');

/** Member ids best first; non-finite scores last. */
function ranked(ctx: ScheduleContext, metric: ScheduleMetric): number[] {
  const score = (i: number) => {
    const v = ctx.metric[i];
    return Number.isFinite(v) ? (higherIsBetter(metric) ? v : -v) : -Infinity;
  };
  return ctx.members.map((_, i) => i).sort((a, b) => score(b) - score(a) || ctx.members[a] - ctx.members[b]).map((i) => ctx.members[i]);
}

const stepsOf = (every: Interval, perEpoch: number) => (every.unit === 'epochs' ? every.amount * perEpoch : every.amount);

export interface VariedHyper {
  key: string;
  path: string;
  space: Space;
}

export function pbt(config: ScheduleConfig, varied: VariedHyper[], seed: number): Schedule {
  const a = config.args as { every: Interval; metric: ScheduleMetric; quantile: number; perturb: number[]; resample: number };
  return {
    name: 'pbt',
    metric: a.metric,
    everySteps: (perEpoch) => stepsOf(a.every, perEpoch),
    decide(ctx) {
      const order = ranked(ctx, a.metric);
      const q = Math.max(1, Math.floor(order.length * a.quantile));
      if (order.length < 2 || 2 * q > order.length) return { stop: [], exploit: [] };
      const top = order.slice(0, q);
      const bottom = order.slice(order.length - q);
      const exploit = bottom.map((member) => {
        const rng = Rng.of(seed, 'pbt', ctx.step, member);
        const source = top[rng.int(top.length)];
        const hyperparameters: Record<string, number> = {};
        for (const v of varied) {
          const inherited = ctx.hyper(v.key, source);
          if (rng.uniform() < a.resample) hyperparameters[v.key] = drawFromSpace(v.space, seed, `${v.path}@pbt${ctx.step}`, member);
          else hyperparameters[v.key] = perturb(v.space, inherited, a.perturb, rng);
        }
        return { member, source, hyperparameters };
      });
      return { stop: [], exploit };
    },
  };
}

/**
 * A perturbed value that stays where a draw from the space could land: numeric spaces multiply by one of
 * the factors and clamp to [low, high) (a draw never reaches high, which the checker may exclude: a
 * dropout rate of 1); lists and choices move to a neighbouring value, as Ray Tune does, never beyond the ends.
 */
export function perturb(space: Space, inherited: number, factors: number[], rng: Rng): number {
  if (space.kind === 'uniform' || space.kind === 'loguniform') {
    const factor = factors[rng.int(factors.length)];
    return Math.min(Math.max(inherited * factor, space.low), below(space.high));
  }
  const values = space.values.map(spaceNumber);
  const at = nearest(values, inherited);
  const to = at + (rng.uniform() < 0.5 ? -1 : 1);
  return values[Math.min(Math.max(to, 0), values.length - 1)];
}

/** A list value as the hyperparameter table holds it: true/false as 1/0, an interval (`10 steps`) as its amount. */
const spaceNumber = (v: unknown) => (typeof v === 'boolean' ? Number(v) : typeof v === 'object' && v !== null && 'amount' in v ? (v as Interval).amount : (v as number));

/** The largest float64 below x (x > 0 or x < 0; for 0, the largest negative subnormal). */
function below(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigInt64(0, view.getBigInt64(0) + (x > 0 ? -1n : 1n));
  return view.getFloat64(0);
}

/** The index of the value closest to v (the first of equals). */
function nearest(values: number[], v: number): number {
  let best = 0;
  values.forEach((x, i) => {
    if (Math.abs(x - v) < Math.abs(values[best] - v)) best = i;
  });
  return best;
}

export function halving(config: ScheduleConfig): Schedule {
  const a = config.args as { every: Interval; metric: ScheduleMetric; keep: number; min_members: number };
  return {
    name: 'halving',
    metric: a.metric,
    everySteps: (perEpoch) => stepsOf(a.every, perEpoch),
    decide(ctx) {
      const order = ranked(ctx, a.metric);
      const keep = Math.max(a.min_members, Math.ceil(order.length * a.keep));
      const stop = order.slice(keep).map((member) => ({ member, reason: `halving: not in the best ${keep} by ${a.metric} at step ${ctx.step}` }));
      return { stop, exploit: [] };
    },
  };
}

export function earlyStopping(config: ScheduleConfig): Schedule {
  const a = config.args as { metric: ScheduleMetric; patience: number; min_delta: number; restore_best?: boolean };
  let best = new Map<number, number>();
  let waited = new Map<number, number>();
  return {
    name: 'early_stopping',
    metric: a.metric,
    everySteps: (perEpoch) => perEpoch,
    decide(ctx) {
      const stop: StopDecision[] = [];
      const improved: number[] = [];
      ctx.members.forEach((member, i) => {
        const v = higherIsBetter(a.metric) ? ctx.metric[i] : -ctx.metric[i];
        const b = best.get(member);
        if (b === undefined || v > b + a.min_delta) {
          best.set(member, v);
          waited.set(member, 0);
          improved.push(member);
        } else {
          const w = (waited.get(member) ?? 0) + 1;
          waited.set(member, w);
          if (w >= a.patience) stop.push({ member, reason: `early stopping: ${a.metric} did not improve for ${plural(w, 'epoch')}`, ...(a.restore_best ? { restore: true } : {}) });
        }
      });
      return { stop, exploit: [], ...(a.restore_best ? { best: improved } : {}) };
    },
    state: () => ({ best: [...best].map(([id, v]) => [id, jsonNumber(v)]), waited: [...waited] }),
    restore(state) {
      const s = state as { best: [number, number | string][]; waited: [number, number][] };
      best = new Map(s.best.map(([id, v]) => [id, fromJsonNumber(v)]));
      waited = new Map(s.waited);
    },
  };
}

/** A number for JSON, which has no NaN or Infinity: those become strings. */
export const jsonNumber = (v: number): number | string => (Number.isFinite(v) ? v : String(v));
export const fromJsonNumber = (v: number | string | null): number => (typeof v === 'number' ? v : v === null ? NaN : Number(v));

export function makeSchedules(configs: ScheduleConfig[], vary: readonly Pick<Vary, 'path' | 'space'>[], keyOf: (path: string) => string, seed: number): Schedule[] {
  const varied = vary.map((v) => ({ key: keyOf(v.path), path: v.path, space: v.space }));
  return configs.map((c) => (c.name === 'pbt' ? pbt(c, varied, seed) : c.name === 'halving' ? halving(c) : earlyStopping(c)));
}
