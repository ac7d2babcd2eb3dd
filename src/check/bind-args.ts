// Binds a call's arguments to an ArgSpec list and checks each value. Errors go to the sink; the result
// holds the valid values plus defaults, so checking can continue past a bad argument.
import type { Span } from '../diagnostics/diagnostic.js';
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { describeValue, type Arg, type Value } from '../syntax/ast.js';
import { describeRange, inRange, typeNoun, type ArgSpec, type BoundArgs, type BoundValue, type ArgType } from '../core/arg-spec.js';

export interface BindOptions {
  /** accept any number of extra positional label references (add, concat) */
  restLabels?: boolean;
}

export function bindArgs(
  what: string,
  args: readonly Arg[],
  specs: readonly ArgSpec[],
  sink: DiagnosticSink,
  callSpan: Span,
  options: BindOptions = {},
): BoundArgs {
  const bound: BoundArgs = { values: {}, spans: {}, rest: [] };
  const positional = specs.filter((s) => s.positional);
  let nextPositional = 0;
  let sawKeyword = false;
  for (const arg of args) {
    let spec: ArgSpec | undefined;
    if (arg.key) {
      sawKeyword = true;
      spec = specs.find((s) => s.name === arg.key!.name);
      if (!spec) {
        const names = specs.map((s) => s.name);
        sink.report(Messages.UnknownArgument, arg.key.span, what, arg.key.name, didYouMean(arg.key.name, names), names.join(', ') || '(none)');
        continue;
      }
    } else {
      spec = sawKeyword ? undefined : positional[nextPositional++];
      if (!spec) {
        if (options.restLabels && !sawKeyword && arg.value.kind === 'name') {
          bound.rest.push({ label: arg.value.name, span: arg.value.span });
          continue;
        }
        sink.report(Messages.TooManyArguments, arg.span, what, positional.length);
        continue;
      }
    }
    if (spec.name in bound.spans) {
      sink.report(Messages.ArgumentTwice, arg.span, spec.name);
      continue;
    }
    bound.spans[spec.name] = arg.value.span;
    const value = checkValue(`${what}: ${spec.name}`, spec.type, arg.value, sink);
    if (value !== undefined) bound.values[spec.name] = value;
  }
  for (const spec of specs) {
    if (spec.name in bound.spans) continue;
    if (spec.required) sink.report(Messages.MissingArgument, callSpan, what, spec.name);
    else if (spec.default !== undefined) bound.values[spec.name] = spec.default;
  }
  return bound;
}

/** Checks one value against a type; returns it in bound form, or undefined after reporting. */
export function checkValue(what: string, type: ArgType, v: Value, sink: DiagnosticSink): BoundValue | undefined {
  const wrong = () => {
    sink.report(Messages.WrongType, v.span, what, typeNoun(type), describeValue(v));
    return undefined;
  };
  const number = (t: ArgType): number | undefined => {
    if (v.kind !== 'number') return wrong();
    if (!inRange(t, v.value)) {
      sink.report(Messages.OutOfRange, v.span, what, describeRange(t), v.text);
      return undefined;
    }
    return v.value;
  };
  switch (type.kind) {
    case 'int':
    case 'number':
      return number(type);
    case 'bool':
      return v.kind === 'bool' ? v.value : wrong();
    case 'string':
      return v.kind === 'string' ? v.value : wrong();
    case 'choice': {
      const name = v.kind === 'name' ? v.name : v.kind === 'string' ? v.value : undefined;
      if (name === undefined) return wrong();
      if (!type.values.includes(name)) {
        sink.report(Messages.UnknownName, v.span, type.what, name, didYouMean(name, type.values), type.values.join(', '));
        return undefined;
      }
      return name;
    }
    case 'choices': {
      const items = v.kind === 'list' ? v.items : [v];
      const out: string[] = [];
      for (const item of items) {
        const name = checkValue(what, { kind: 'choice', values: type.values, what: type.what }, item, sink);
        if (typeof name !== 'string') return undefined;
        out.push(name);
      }
      return out;
    }
    case 'pair': {
      const items = v.kind === 'list' ? v.items : [v];
      if (items.length < 1 || items.length > 2) return wrong();
      const out: number[] = [];
      for (const item of items) {
        if (item.kind !== 'number' || !Number.isInteger(item.value)) return wrong();
        if (item.value < type.min) {
          sink.report(Messages.OutOfRange, item.span, what, `an integer >= ${type.min}`, item.text);
          return undefined;
        }
        out.push(item.value);
      }
      return out.length === 1 ? [out[0], out[0]] : out;
    }
    case 'shape': {
      if (v.kind !== 'list' || v.items.length === 0) return wrong();
      const out: number[] = [];
      for (const item of v.items) {
        if (item.kind !== 'number' || !Number.isInteger(item.value) || item.value < 1) {
          sink.report(Messages.OutOfRange, item.span, what, 'a list of positive integers', describeValue(item));
          return undefined;
        }
        out.push(item.value);
      }
      return out;
    }
    case 'numbers': {
      if (v.kind !== 'list' || (type.length !== undefined && v.items.length !== type.length)) return wrong();
      const out: number[] = [];
      for (const item of v.items) {
        if (item.kind !== 'number') return wrong();
        if (type.min !== undefined && (type.minExclusive ? item.value <= type.min : item.value < type.min)) {
          sink.report(Messages.OutOfRange, item.span, what, `a list of numbers ${type.minExclusive ? '>' : '>='} ${type.min}`, item.text);
          return undefined;
        }
        out.push(item.value);
      }
      return out;
    }
    case 'strings': {
      if (v.kind === 'string') return [v.value];
      if (v.kind !== 'list' || v.items.length === 0 || v.items.some((i) => i.kind !== 'string')) return wrong();
      return v.items.map((i) => (i.kind === 'string' ? i.value : ''));
    }
    case 'label':
      return v.kind === 'name' ? { label: v.name, span: v.span } : wrong();
    case 'interval': {
      if (v.kind !== 'quantity') {
        sink.report(Messages.BadInterval, v.span, what, describeValue(v));
        return undefined;
      }
      const unit = v.unit.name.replace(/s$/, '');
      if (unit !== 'epoch' && unit !== 'step') {
        sink.report(Messages.UnknownName, v.unit.span, 'interval unit', v.unit.name, didYouMean(v.unit.name, ['epochs', 'steps']), 'epochs, steps');
        return undefined;
      }
      const min = type.min ?? 1;
      if (!Number.isInteger(v.amount.value) || v.amount.value < min) {
        sink.report(Messages.OutOfRange, v.amount.span, what, `an integer >= ${min}`, v.amount.text);
        return undefined;
      }
      return { amount: v.amount.value, unit: unit === 'epoch' ? 'epochs' : 'steps' };
    }
  }
}
