// The typed AST. Every node carries the span of source it came from, so every later phase can point
// at the exact text a diagnostic is about.
import type { Span } from '../diagnostics/diagnostic.js';

export interface Node {
  span: Span;
}

export interface Name extends Node {
  kind: 'name';
  name: string;
}

export interface NumberValue extends Node {
  kind: 'number';
  value: number;
  text: string;
}

export interface StringValue extends Node {
  kind: 'string';
  value: string;
}

export interface BoolValue extends Node {
  kind: 'bool';
  value: boolean;
}

export interface ListValue extends Node {
  kind: 'list';
  items: Value[];
}

/** `name(args)` used as a value: `adam(lr: 0.01)`, `loguniform(1e-4, 1e-2)`, `mnist()` */
export interface CallValue extends Node {
  kind: 'call';
  callee: Name;
  args: Arg[];
}

/** `2 epochs`, `500 steps` */
export interface QuantityValue extends Node {
  kind: 'quantity';
  amount: NumberValue;
  unit: Name;
}

export type Value = Name | NumberValue | StringValue | BoolValue | ListValue | CallValue | QuantityValue;

export interface Arg extends Node {
  key?: Name;
  value: Value;
}

export interface LayerStatement extends Node {
  label?: Name;
  /** `shared` before the call: where it is written */
  shared?: Span;
  call: CallValue;
}

export interface ModelBlock extends Node {
  kind: 'model';
  keyword: Span;
  name: Name;
  params: Arg[];
  statements: LayerStatement[];
  /** true when the parser had to recover inside this block: shapes are then not inferred */
  incomplete: boolean;
}

export interface Entry extends Node {
  /** `vary a.b: ...` has `vary` set and a dotted path; a plain entry has one-element path */
  vary: boolean;
  path: Name[];
  value: Value;
}

export interface EntriesBlock extends Node {
  kind: 'ensemble' | 'train' | 'schedule';
  keyword: Span;
  /** schedule name, e.g. `pbt` */
  name?: Name;
  entries: Entry[];
  incomplete: boolean;
}

/** A block whose keyword is not one of the language's (reported by the checker). */
export interface UnknownBlock extends Node {
  kind: 'unknown';
  name: Name;
}

export type Block = ModelBlock | EntriesBlock | UnknownBlock;

export interface NetFile {
  path: string;
  source: string;
  blocks: Block[];
}

export function describeValue(v: Value): string {
  switch (v.kind) {
    case 'name':
      return `'${v.name}'`;
    case 'number':
      return v.text;
    case 'string':
      return JSON.stringify(v.value);
    case 'bool':
      return String(v.value);
    case 'list':
      return 'a list';
    case 'call':
      return `${v.callee.name}(...)`;
    case 'quantity':
      return `${v.amount.text} ${v.unit.name}`;
  }
}
