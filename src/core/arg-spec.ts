// Argument specifications shared by layers, optimizers, losses, data sources and schedules, and the
// binder that checks a call's arguments against them: names, types, ranges, required and unknown.
import type { Span } from '../diagnostics/diagnostic.js';

export type Shape = number[];

export type ArgType =
  | { kind: 'int'; min?: number; max?: number }
  | { kind: 'number'; min?: number; max?: number; minExclusive?: boolean; maxExclusive?: boolean }
  | { kind: 'bool' }
  | { kind: 'string' }
  /** a bare name from a fixed set, e.g. `padding: same`; `what` names the set in messages */
  | { kind: 'choice'; values: readonly string[]; what: string }
  /** a list of names from a fixed set (or one name), e.g. `metrics: [accuracy]` */
  | { kind: 'choices'; values: readonly string[]; what: string }
  /** an int, or a list of two ints: `kernel: 5`, `kernel: [5, 3]` */
  | { kind: 'pair'; min: number }
  /** a list of positive ints, e.g. an input shape */
  | { kind: 'shape' }
  /** a list of numbers, with an optional fixed length */
  | { kind: 'numbers'; length?: number; min?: number; minExclusive?: boolean }
  /** a list of strings or one string */
  | { kind: 'strings' }
  /** a reference to a labelled layer output */
  | { kind: 'label' }
  /** `2 epochs` / `500 steps`; the amount is an integer >= min (1 unless given) */
  | { kind: 'interval'; min?: number };

export interface ArgSpec {
  name: string;
  type: ArgType;
  /** may be given without its name, in this order */
  positional?: boolean;
  required?: boolean;
  default?: BoundValue;
  /** a numeric hyperparameter that `vary` may give each member its own value of */
  hyper?: boolean;
  /** changes parameter shapes, so members cannot differ in it */
  shapeAffecting?: boolean;
}

export interface Interval {
  amount: number;
  unit: 'epochs' | 'steps';
}

export interface LabelRef {
  label: string;
  span: Span;
}

export type BoundValue = number | boolean | string | number[] | string[] | LabelRef | Interval;

export interface BoundArgs {
  values: Record<string, BoundValue>;
  /** where each given argument's value is written, for diagnostics about it */
  spans: Record<string, Span>;
  /** extra positional label references (add, concat) */
  rest: LabelRef[];
}

/** A call the checker resolved: a name from one of the registries (optimizer, loss, data source, ...) and its bound arguments, defaults filled in. */
export interface CallConfig {
  name: string;
  args: BoundArgs['values'];
}

export function describeRange(t: ArgType): string {
  if (t.kind !== 'int' && t.kind !== 'number') return '';
  const { min, max } = t;
  const minEx = t.kind === 'number' && t.minExclusive;
  const maxEx = t.kind === 'number' && t.maxExclusive;
  const noun = t.kind === 'int' ? 'an integer' : 'a number';
  if (min !== undefined && max !== undefined) return `${noun} in ${minEx ? '(' : '['}${min}, ${max}${maxEx ? ')' : ']'}`;
  if (min !== undefined) return `${noun} ${minEx ? '>' : '>='} ${min}`;
  if (max !== undefined) return `${noun} ${maxEx ? '<' : '<='} ${max}`;
  return noun;
}

export function inRange(t: ArgType, v: number): boolean {
  if (t.kind === 'int' && !Number.isInteger(v)) return false;
  if (t.kind !== 'int' && t.kind !== 'number') return true;
  const minEx = t.kind === 'number' && t.minExclusive;
  const maxEx = t.kind === 'number' && t.maxExclusive;
  if (t.min !== undefined && (minEx ? v <= t.min : v < t.min)) return false;
  if (t.max !== undefined && (maxEx ? v >= t.max : v > t.max)) return false;
  return true;
}

export function typeNoun(t: ArgType): string {
  switch (t.kind) {
    case 'int':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'bool':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'choice':
      return `one of ${t.values.join(', ')}`;
    case 'choices':
      return `a list of ${t.what}s`;
    case 'pair':
      return 'an integer or a list of two integers';
    case 'shape':
      return 'a list of positive integers';
    case 'numbers':
      return t.length ? `a list of ${t.length} numbers` : 'a list of numbers';
    case 'strings':
      return 'a string or a list of strings';
    case 'label':
      return 'a label';
    case 'interval':
      return "an interval such as '2 epochs' or '500 steps'";
  }
}
