// Checks a schedule block against its kind's keys (pbt, halving, early_stopping).
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { EntriesBlock } from '../syntax/ast.js';
import { schedules } from '../vocabulary/schedules.js';
import { bindArgs } from './bind-args.js';
import { entriesAsArgs } from './entries.js';
import type { ScheduleConfig } from './program.js';

export function checkSchedule(block: EntriesBlock, sink: DiagnosticSink): ScheduleConfig | undefined {
  const name = block.name;
  if (!name) return undefined; // a syntax error, already reported
  const spec = schedules.find((s) => s.name === name.name);
  const names = schedules.map((s) => s.name);
  if (!spec) {
    sink.report(Messages.UnknownSchedule, name.span, name.name, didYouMean(name.name, names), names.join(', '));
    return undefined;
  }
  const errorsBefore = sink.errorCount;
  const keys = spec.keys.map((k) => k.name);
  const { args } = entriesAsArgs(block, sink);
  const known = args.filter((a) => {
    if (keys.includes(a.key!.name)) return true;
    sink.report(Messages.UnknownScheduleKey, a.key!.span, spec.name, a.key!.name, didYouMean(a.key!.name, keys), keys.join(', '));
    return false;
  });
  const bound = bindArgs(`schedule ${spec.name}`, known, spec.keys, sink, name.span);
  return sink.errorCount > errorsBefore ? undefined : { name: spec.name, args: bound.values, span: block.span };
}
