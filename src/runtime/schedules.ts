// Schedules change the population between training intervals: PBT (the bottom quantile copies a member
// of the top quantile and perturbs or resamples its varied hyperparameters), successive halving (the
// worst members stop), per-member early stopping (patience). Each returns decisions; the trainer
// carries them out by gathering along the member axis, so nothing leaves the device or goes to files.
import type { ScheduleConfig, Space, Vary } from '../check/program.js';
import type { Interval } from '../check/arg-spec.js';
import { drawFromSpace } from './hyper.js';
import { Rng } from './rng.js';

export type ScheduleMetric = 'loss' | 'val_loss' | 'accuracy' | 'val_accuracy';

export interface StopDecision {
  member: number;
  reason: string;
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
}

const higherIsBetter = (m: ScheduleMetric) => m.endsWith('accuracy');

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
          else if (v.space.kind === 'uniform' || v.space.kind === 'loguniform') {
            // perturbed, and kept inside the space the user gave
            const factor = a.perturb[rng.int(a.perturb.length)];
            hyperparameters[v.key] = Math.min(Math.max(inherited * factor, v.space.low), v.space.high);
          } else hyperparameters[v.key] = inherited * a.perturb[rng.int(a.perturb.length)];
        }
        return { member, source, hyperparameters };
      });
      return { stop: [], exploit };
    },
  };
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
  const a = config.args as { metric: ScheduleMetric; patience: number; min_delta: number };
  const best = new Map<number, number>();
  const waited = new Map<number, number>();
  return {
    name: 'early_stopping',
    metric: a.metric,
    everySteps: (perEpoch) => perEpoch,
    decide(ctx) {
      const stop: StopDecision[] = [];
      ctx.members.forEach((member, i) => {
        const v = higherIsBetter(a.metric) ? ctx.metric[i] : -ctx.metric[i];
        const b = best.get(member);
        if (b === undefined || v > b + a.min_delta) {
          best.set(member, v);
          waited.set(member, 0);
        } else {
          const w = (waited.get(member) ?? 0) + 1;
          waited.set(member, w);
          if (w >= a.patience) stop.push({ member, reason: `early stopping: ${a.metric} did not improve for ${w} epochs` });
        }
      });
      return { stop, exploit: [] };
    },
  };
}

export function makeSchedules(configs: ScheduleConfig[], vary: readonly Pick<Vary, 'path' | 'space'>[], keyOf: (path: string) => string, seed: number): Schedule[] {
  const varied = vary.map((v) => ({ key: keyOf(v.path), path: v.path, space: v.space }));
  return configs.map((c) => (c.name === 'pbt' ? pbt(c, varied, seed) : c.name === 'halving' ? halving(c) : earlyStopping(c)));
}
