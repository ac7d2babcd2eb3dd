// Losses and what each expects of the labels; `huber` takes its `delta`.
import type { ArgSpec } from '../check/arg-spec.js';

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

/** Every metric a run can report: the training values, then the validation values (`val_`). */
export const metricColumns: readonly string[] = [...['loss', ...extraMetrics], ...['loss', ...extraMetrics].map((m) => `val_${m}`)];
