// Arguments shared by several layer kinds.
import type { ArgSpec } from '../core/arg-spec.js';
import { activations } from '../vocabulary/activations.js';
import { initializers } from '../vocabulary/initializers.js';

export const activationArg: ArgSpec = { name: 'activation', type: { kind: 'choice', values: activations, what: 'activation' }, default: 'linear' };
export const biasArg: ArgSpec = { name: 'bias', type: { kind: 'bool' }, default: true };
export const initArg: ArgSpec = { name: 'init', type: { kind: 'choice', values: initializers, what: 'initializer' }, default: 'glorot_uniform' };
export const biasInitArg: ArgSpec = { name: 'bias_init', type: { kind: 'choice', values: initializers, what: 'initializer' }, default: 'zeros' };

/** activation, bias, init and bias_init: what every layer with a kernel accepts */
export const weightedArgs: ArgSpec[] = [activationArg, biasArg, initArg, biasInitArg];

export const paddingArg: ArgSpec = { name: 'padding', type: { kind: 'choice', values: ['valid', 'same'], what: 'padding' }, default: 'valid', shapeAffecting: true };
