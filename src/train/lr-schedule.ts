// Learning-rate schedules at run time: member i's learning rate in optimizer step t (from 0) is
// lr_i * f_i(t), with f given by the train block's lr_schedule and the member's own values of its
// arguments (`lr_schedule.min`, ...; intervals in epochs are converted to steps). T, the horizon of cosine
// and linear, is the run's total steps. plateau follows no formula: it is a schedule that acts at epoch
// ends (src/train/plateau.ts) and f is its per-member factor.
import type { CallConfig } from '../core/arg-spec.js';
import { lrSchedules } from '../vocabulary/lr-schedules.js';
import type { HyperTable } from '../runtime/hyper.js';
import { plateau } from './plateau.js';
import type { Schedule } from './schedules.js';

/** The arguments of a step-following schedule for one member, intervals in steps. */
export interface ScheduleArgs {
  every?: number;
  gamma?: number;
  warmup?: number;
  min?: number;
}

/** f(t) of a step-following schedule; `total` is the run's total steps T. */
export function scheduleFactor(name: string, a: ScheduleArgs, t: number, total: number): number {
  switch (name) {
    case 'step':
      return Math.pow(a.gamma!, Math.floor(t / a.every!));
    case 'exponential':
      return Math.pow(a.gamma!, t / a.every!);
    case 'cosine':
    case 'linear': {
      const warmup = a.warmup ?? 0;
      if (t < warmup) return (t + 1) / warmup;
      // a run no longer than its warmup never gets here, except to report the rate of a run of no steps (p = 0)
      const p = total > warmup ? (t - warmup) / (total - warmup) : 0;
      const min = a.min ?? 0;
      return name === 'cosine' ? min + ((1 - min) * (1 + Math.cos(Math.PI * p))) / 2 : 1 - (1 - min) * p;
    }
    default:
      return 1;
  }
}

/** How a run's learning rates move: nothing to do (no schedule, constant()), a factor per member and step, and plateau's schedule. */
export interface LrPlan {
  /** member id's multiplier of its lr in step t; absent: 1 throughout, and the optimizer caches its rates */
  factor?: (member: number, t: number) => number;
  /** plateau, which acts at epoch ends with the population schedules */
  schedule?: Schedule;
}

/**
 * The plan for a run of `total` steps of `perEpoch` batches, reading each member's schedule arguments from
 * the table (so a PBT exploit that changes them changes the member's schedule from then on).
 */
export function lrPlan(config: CallConfig | undefined, hyper: HyperTable, total: number, perEpoch: number): LrPlan {
  if (!config || config.name === 'constant') return {};
  if (config.name === 'plateau') {
    const p = plateau(config);
    return { factor: (member) => p.factor(member), schedule: p };
  }
  const names = lrSchedules.find((s) => s.name === config.name)!.args.map((a) => a.name);
  const arg = (name: string, member: number) => {
    const key = `lr_schedule.${name}`;
    const value = hyper.value(key, member);
    return hyper.units.get(key) === 'epochs' ? value * perEpoch : value;
  };
  return {
    factor: (member, t) => scheduleFactor(config.name, Object.fromEntries(names.map((n) => [n, arg(n, member)])), t, total),
  };
}

/** Member id's learning rate in step t under a plan: what the optimizer applies, and what metrics.jsonl records. */
export function memberLr(hyper: Pick<HyperTable, 'value'>, plan: LrPlan, member: number, t: number): number {
  const lr = hyper.value('lr', member);
  return plan.factor ? lr * plan.factor(member, t) : lr;
}
