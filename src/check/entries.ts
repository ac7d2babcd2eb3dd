// Turns a block's `key: value` entries into named arguments, reporting repeated keys and stray `vary`.
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import type { Arg, EntriesBlock, Entry } from '../syntax/ast.js';

export function entriesAsArgs(block: EntriesBlock, sink: DiagnosticSink, allowVary = false): { args: Arg[]; vary: Entry[] } {
  const seen = new Set<string>();
  const args: Arg[] = [];
  const vary: Entry[] = [];
  for (const e of block.entries) {
    if (e.vary) {
      if (allowVary) vary.push(e);
      else sink.report(Messages.VaryOutsideEnsemble, e.span);
      continue;
    }
    const key = e.path[0];
    if (seen.has(key.name)) {
      sink.report(Messages.DuplicateKey, key.span, key.name);
      continue;
    }
    seen.add(key.name);
    args.push({ key, value: e.value, span: e.span });
  }
  return { args, vary };
}
