// `lr_schedule: plateau(...)`: Keras' ReduceLROnPlateau, per member. At every epoch end each member's
// metric is compared with its best; after `patience` epochs without an improvement of more than
// `min_delta`, the member's factor is multiplied by `factor`, never taking its learning rate below
// `min_lr` (and not at all once it is there). The member's learning rate is lr * factor. Its memory
// (factor, best, epochs waited) goes into checkpoints through state()/restore(), and a PBT exploit gives
// the member its source's (copied()), as it gives it the source's weights.
import type { CallConfig } from '../core/arg-spec.js';
import { fromJsonNumber, higherIsBetter, jsonNumber, type Schedule, type ScheduleContext, type ScheduleMetric } from './schedules.js';

export interface PlateauSchedule extends Schedule {
  /** member id's current multiplier of its lr (1 until it is first reduced) */
  factor(member: number): number;
}

interface MemberState {
  factor: number;
  /** the best metric so far, signed so that higher is better (Keras starts from the worst value, -Infinity here) */
  best: number;
  wait: number;
}

export function plateau(config: CallConfig): PlateauSchedule {
  const metric = config.args.metric as ScheduleMetric;
  let members = new Map<number, MemberState>();
  const of = (id: number): MemberState => members.get(id) ?? { factor: 1, best: -Infinity, wait: 0 };

  const step = (ctx: ScheduleContext, id: number, value: number): MemberState => {
    const arg = (name: string) => ctx.hyper(`lr_schedule.${name}`, id);
    const s = { ...of(id) };
    const v = higherIsBetter(metric) ? value : -value;
    // as Keras compares: NaN never improves
    if (v > s.best + arg('min_delta')) return { ...s, best: v, wait: 0 };
    s.wait++;
    if (s.wait < arg('patience')) return s;
    const lr = ctx.hyper('lr', id);
    const minLr = arg('min_lr');
    // as Keras compares the optimizer's float32 rate with float32(min_lr): a rate at the floor stays there
    if (Math.fround(lr * s.factor) > Math.fround(minLr)) return { ...s, factor: Math.max(s.factor * arg('factor'), minLr / lr), wait: 0 };
    return s;
  };

  return {
    name: 'plateau',
    metric,
    everySteps: (perEpoch) => perEpoch,
    factor: (id) => of(id).factor,
    decide(ctx) {
      ctx.members.forEach((id, i) => members.set(id, step(ctx, id, ctx.metric[i])));
      return { stop: [], exploit: [] };
    },
    copied(copies) {
      const sources = copies.map((c) => ({ ...of(c.source) }));
      copies.forEach((c, i) => members.set(c.member, sources[i]));
    },
    state: () => [...members].map(([id, s]) => [id, s.factor, jsonNumber(s.best), s.wait]),
    restore(state) {
      const rows = state as [number, number, number | string, number][];
      members = new Map(rows.map(([id, factor, best, wait]) => [id, { factor, best: fromJsonNumber(best), wait }]));
    },
  };
}
