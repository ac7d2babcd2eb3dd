// Learning-rate schedules (`lr_schedule:` in the train block): member i's learning rate in optimizer step
// t is lr_i * f(t). Every argument is a hyperparameter `vary lr_schedule.ARG` may give each member its own
// value of; intervals (`every`, `warmup`) are written `N steps` or `N epochs`. plateau is Keras'
// ReduceLROnPlateau: it acts at epoch ends on a metric instead of following the step.
import type { ArgSpec } from '../core/arg-spec.js';
import { scheduleMetrics } from './schedules.js';

export interface LrScheduleSpec {
  name: string;
  args: ArgSpec[];
}

const every: ArgSpec = { name: 'every', type: { kind: 'interval' }, required: true, hyper: true };
const gamma = (value?: number): ArgSpec => ({
  name: 'gamma',
  type: { kind: 'number', min: 0, max: 1, minExclusive: true },
  ...(value === undefined ? { required: true } : { default: value }),
  hyper: true,
});
const warmup: ArgSpec = { name: 'warmup', type: { kind: 'interval', min: 0 }, default: { amount: 0, unit: 'steps' }, hyper: true };
const min: ArgSpec = { name: 'min', type: { kind: 'number', min: 0, max: 1 }, default: 0, hyper: true };

export const lrSchedules: LrScheduleSpec[] = [
  { name: 'constant', args: [] },
  { name: 'step', args: [every, gamma(0.1)] },
  { name: 'exponential', args: [every, gamma()] },
  { name: 'cosine', args: [warmup, min] },
  { name: 'linear', args: [warmup, min] },
  {
    // Keras' defaults
    name: 'plateau',
    args: [
      { name: 'metric', type: { kind: 'choice', values: scheduleMetrics, what: 'metric' }, default: 'val_loss' },
      { name: 'patience', type: { kind: 'int', min: 1 }, default: 10, hyper: true },
      { name: 'factor', type: { kind: 'number', min: 0, max: 1, minExclusive: true, maxExclusive: true }, default: 0.1, hyper: true },
      { name: 'min_delta', type: { kind: 'number', min: 0 }, default: 1e-4, hyper: true },
      { name: 'min_lr', type: { kind: 'number', min: 0 }, default: 0, hyper: true },
    ],
  },
];
