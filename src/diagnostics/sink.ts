// Collects diagnostics for one file. Phases report through a sink and never throw for user mistakes.
import type { Diagnostic, Span } from './diagnostic.js';
import { formatMessage, type MessageDef } from './messages.js';

export class DiagnosticSink {
  readonly diagnostics: Diagnostic[] = [];

  constructor(readonly file: string) {}

  report(def: MessageDef, span: Span, ...args: (string | number)[]): void {
    this.diagnostics.push({
      code: def.code,
      category: def.category,
      file: this.file,
      start: span.start,
      length: Math.max(0, span.length),
      message: formatMessage(def, args),
    });
  }

  get errorCount(): number {
    return this.diagnostics.filter((d) => d.category === 'error').length;
  }
}
