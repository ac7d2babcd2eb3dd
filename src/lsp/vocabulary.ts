// What the language server knows of the language's names, all from the registries the checker binds against:
// which registry a block key's value comes from (`loss:` the losses, `optimizer:` the optimizers, ...), each
// block's keys, and an argument's description for hover.
import { describeRange, typeNoun, type ArgSpec, type BoundValue } from '../core/arg-spec.js';
import { ensembleKeys } from '../check/check-ensemble.js';
import { trainKeys } from '../check/check-train.js';
import { dataSources } from '../data/sources.js';
import { layerKind } from '../layers/registry.js';
import { losses, metrics } from '../vocabulary/losses.js';
import { lrSchedules } from '../vocabulary/lr-schedules.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { schedules } from '../vocabulary/schedules.js';
import { splits } from '../vocabulary/splits.js';
import type { DocContext } from './language-docs.js';

export interface CallSpec {
  name: string;
  args: readonly ArgSpec[];
}

export type BlockKind = 'model' | 'ensemble' | 'train' | 'schedule';

/** The registry a block key's value is a call (or bare name) from: `train { loss: ... }` the losses. */
export function registryOf(block: BlockKind, key: string): { context: DocContext; specs: readonly CallSpec[] } | undefined {
  if (block === 'train') {
    if (key === 'loss') return { context: 'loss', specs: losses };
    if (key === 'optimizer') return { context: 'optimizer', specs: optimizers };
    if (key === 'data') return { context: 'data', specs: dataSources };
    if (key === 'lr_schedule') return { context: 'lr_schedule', specs: lrSchedules };
  }
  if (block === 'ensemble' && key === 'split') return { context: 'split', specs: splits };
  return undefined;
}

/** The spaces a `vary` line draws from (a list is written `[...]`). */
export const spaces: readonly CallSpec[] = [
  { name: 'uniform', args: [] },
  { name: 'loguniform', args: [] },
  { name: 'choice', args: [] },
];

/** The keys a block takes (a schedule's by its kind), with their specs where the checker has them. */
export function blockKeys(block: BlockKind, scheduleName?: string): { name: string; spec?: ArgSpec }[] {
  switch (block) {
    case 'train':
      return trainKeys.map((name) => ({ name, spec: name === 'metrics' ? { name, type: { kind: 'choices', values: metrics, what: 'metric' } } : undefined }));
    case 'ensemble':
      return [...ensembleKeys.map((spec) => ({ name: spec.name, spec })), { name: 'split' }];
    case 'schedule':
      return (schedules.find((s) => s.name === scheduleName)?.keys ?? []).map((spec) => ({ name: spec.name, spec }));
    case 'model':
      return [];
  }
}

/** The argument specs of a layer call. */
export const layerArgs = (name: string): readonly ArgSpec[] | undefined => layerKind(name)?.args;

const showValue = (v: BoundValue): string =>
  Array.isArray(v) ? `[${v.join(', ')}]` : typeof v === 'object' ? ('unit' in v ? `${v.amount} ${v.unit}` : v.label) : String(v);

/** `lr`: a number > 0, positional, default 0.001. */
export function describeArg(spec: ArgSpec): string {
  const parts = [describeRange(spec.type) || typeNoun(spec.type)];
  if (spec.positional) parts.push('positional');
  if (spec.required) parts.push('required');
  if (spec.default !== undefined) parts.push(`default ${showValue(spec.default)}`);
  if (spec.hyper) parts.push('may vary per member');
  if (spec.shapeAffecting) parts.push('shapes the parameters (cannot vary)');
  return `\`${spec.name}\`: ${parts.join(', ')}`;
}
