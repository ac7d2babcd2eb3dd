// Schedules change the population while it trains: PBT, successive halving, early stopping.
import type { ArgSpec } from '../core/arg-spec.js';

export interface ScheduleSpec {
  name: string;
  keys: ArgSpec[];
}

export const scheduleMetrics = ['loss', 'val_loss', 'accuracy', 'val_accuracy'] as const;
const metric: ArgSpec = { name: 'metric', type: { kind: 'choice', values: scheduleMetrics, what: 'metric' }, default: 'val_loss' };
const every: ArgSpec = { name: 'every', type: { kind: 'interval' }, required: true };

export const schedules: ScheduleSpec[] = [
  {
    name: 'pbt',
    keys: [
      every,
      metric,
      { name: 'quantile', type: { kind: 'number', min: 0, max: 0.5, minExclusive: true }, default: 0.25 },
      { name: 'perturb', type: { kind: 'numbers', length: 2, min: 0, minExclusive: true }, default: [0.8, 1.2] },
      { name: 'resample', type: { kind: 'number', min: 0, max: 1 }, default: 0.25 },
    ],
  },
  {
    name: 'halving',
    keys: [
      every,
      metric,
      { name: 'keep', type: { kind: 'number', min: 0, max: 1, minExclusive: true, maxExclusive: true }, default: 0.5 },
      { name: 'min_members', type: { kind: 'int', min: 1 }, default: 1 },
    ],
  },
  {
    name: 'early_stopping',
    keys: [
      metric,
      { name: 'patience', type: { kind: 'int', min: 1 }, required: true },
      { name: 'min_delta', type: { kind: 'number', min: 0 }, default: 0 },
      // Keras' restore_best_weights: a stopped member keeps the weights of its best epoch
      { name: 'restore_best', type: { kind: 'bool' }, default: false },
    ],
  },
];
