// Optimizers and their hyperparameters, positional in the order docs/language.md lists them
// (`sgd(lr, momentum, nesterov)`, `adam(lr, beta1, beta2, epsilon)`, ...). Every `hyper` argument may be varied per member. Defaults
// follow tf.train / Keras.
import type { ArgSpec } from '../core/arg-spec.js';

export interface OptimizerSpec {
  name: string;
  args: ArgSpec[];
  /** the state it keeps per parameter, each the parameter's shape (the op path's and the generated steps' slots) */
  slots: string[];
  /**
   * the member's hyperparameters its update reads (src/math/optimizers.ts), by key, in the order the generated
   * steps lay them out: `lr`, `-lr`, `beta1`, `1-beta1`, ..., `bc1`/`bc2` (Adam's bias corrections 1 - beta^t)
   */
  hyper: string[];
}

const lr = (value: number): ArgSpec => ({ name: 'lr', type: { kind: 'number', min: 0, minExclusive: true }, positional: true, default: value, hyper: true });
const epsilon: ArgSpec = { name: 'epsilon', type: { kind: 'number', min: 0, minExclusive: true }, positional: true, default: 1e-7, hyper: true };
const beta = (name: string, value: number): ArgSpec => ({ name, type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, positional: true, default: value, hyper: true });
const momentum: ArgSpec = { name: 'momentum', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, positional: true, default: 0, hyper: true };
/** gradient clipping by global norm, per member; 0 turns it off */
const clipnorm: ArgSpec = { name: 'clipnorm', type: { kind: 'number', min: 0 }, default: 0, hyper: true };
const weightDecay = (value: number, positional = false): ArgSpec => ({ name: 'weight_decay', type: { kind: 'number', min: 0 }, positional, default: value, hyper: true });

export const optimizers: OptimizerSpec[] = [
  {
    name: 'sgd',
    args: [lr(0.01), momentum, { name: 'nesterov', type: { kind: 'bool' }, positional: true, default: false }, weightDecay(0), clipnorm],
    slots: ['accum'],
    hyper: ['lr', '-lr', 'momentum', 'nesterov', 'weight_decay'],
  },
  { name: 'adam', args: [lr(0.001), beta('beta1', 0.9), beta('beta2', 0.999), epsilon, clipnorm], slots: ['m', 'v'], hyper: ['-lr', 'beta1', '1-beta1', 'beta2', '1-beta2', 'epsilon', 'bc1', 'bc2'] },
  {
    name: 'adamw',
    args: [lr(0.001), weightDecay(0.004, true), beta('beta1', 0.9), beta('beta2', 0.999), epsilon, clipnorm],
    slots: ['m', 'v'],
    hyper: ['lr', '-lr', 'beta1', '1-beta1', 'beta2', '1-beta2', 'epsilon', 'bc1', 'bc2', 'weight_decay'],
  },
  { name: 'rmsprop', args: [lr(0.001), beta('rho', 0.9), momentum, epsilon, clipnorm], slots: ['ms', 'mom'], hyper: ['lr', 'rho', '1-rho', 'momentum', 'epsilon'] },
];

/** The state each optimizer keeps per parameter, by name. */
export const optimizerSlots: Record<string, string[]> = Object.fromEntries(optimizers.map((o) => [o.name, o.slots]));

/** The member's hyperparameters each optimizer's update reads, by name (see OptimizerSpec.hyper). */
export const optimizerHyper: Record<string, string[]> = Object.fromEntries(optimizers.map((o) => [o.name, o.hyper]));
