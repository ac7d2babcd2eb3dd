// Losses and what each expects of the labels; `huber` takes its `delta`.
import type { ArgSpec } from '../core/arg-spec.js';

export interface LossSpec {
  name: string;
  args: ArgSpec[];
  /** 'probabilities' losses want a sigmoid or softmax output */
  expects: 'binary' | 'categorical' | 'sparse' | 'regression';
}

export const losses: LossSpec[] = [
  { name: 'mse', args: [], expects: 'regression' },
  { name: 'mae', args: [], expects: 'regression' },
  { name: 'huber', args: [{ name: 'delta', type: { kind: 'number', min: 0, minExclusive: true }, positional: true, default: 1 }], expects: 'regression' },
  { name: 'binary_crossentropy', args: [], expects: 'binary' },
  { name: 'categorical_crossentropy', args: [], expects: 'categorical' },
  { name: 'sparse_categorical_crossentropy', args: [], expects: 'sparse' },
];

export const metrics = ['accuracy', 'loss', 'mse', 'mae'] as const;

/** The metrics computed besides the loss (when asked for), in the order every table shows them. */
export const extraMetrics = ['accuracy', 'mse', 'mae'] as const;

/**
 * The metrics computed besides the loss: those the train block asks for and those a schedule ranks by
 * (its `metric`, val_ or not), in the order shown. The trainer computes these; a compiled module writes them.
 */
export function computedMetrics(requested: readonly string[], schedules: readonly { metric: string }[] = []): string[] {
  const wanted = new Set([...requested, ...schedules.map((s) => s.metric.replace(/^val_/, ''))]);
  return extraMetrics.filter((m) => wanted.has(m));
}

/** Every metric a run can report: the training values, then the validation values (`val_`). */
export const metricColumns: readonly string[] = [...['loss', ...extraMetrics], ...['loss', ...extraMetrics].map((m) => `val_${m}`)];
