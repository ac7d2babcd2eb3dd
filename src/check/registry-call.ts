// Resolves a value that names something from a registry — `adam`, `adam(lr: 0.01)`, `mnist(limit: 100)`
// — and binds its arguments.
import type { Span } from '../diagnostics/diagnostic.js';
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { describeValue, type Value } from '../syntax/ast.js';
import type { ArgSpec } from '../core/arg-spec.js';
import { bindArgs } from './bind-args.js';
import type { CallConfig } from '../core/arg-spec.js';

export function resolveRegistryCall<S extends { name: string; args: ArgSpec[] }>(
  what: string,
  registry: readonly S[],
  value: Value,
  sink: DiagnosticSink,
): { spec: S; config: CallConfig; spans: Record<string, Span> } | undefined {
  const nameNode = value.kind === 'call' ? value.callee : value.kind === 'name' ? value : undefined;
  const names = registry.map((s) => s.name);
  if (!nameNode) {
    sink.report(Messages.WrongType, value.span, what, `one of ${names.join(', ')}`, describeValue(value));
    return undefined;
  }
  const spec = registry.find((s) => s.name === nameNode.name);
  if (!spec) {
    sink.report(Messages.UnknownName, nameNode.span, what, nameNode.name, didYouMean(nameNode.name, names), names.join(', '));
    return undefined;
  }
  const args = bindArgs(spec.name, value.kind === 'call' ? value.args : [], spec.args, sink, value.span);
  return { spec, config: { name: spec.name, args: args.values }, spans: args.spans };
}
