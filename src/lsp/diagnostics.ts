// Diagnostics for the editor: the compiler's own, each at its span, with its stable code (NET2005), the same
// message and category as `netc check` prints.
import { DiagnosticSeverity, type Diagnostic as LspDiagnostic } from 'vscode-languageserver';
import { formatCode } from '../diagnostics/format.js';
import { rangeOf, type Analysis } from './document.js';

export function diagnosticsOf(a: Analysis): LspDiagnostic[] {
  const length = a.state.source.length;
  return a.state.diagnostics.map((d) => {
    const start = Math.min(Math.max(0, d.start), length);
    return {
      range: rangeOf(a.doc, { start, length: Math.max(0, Math.min(d.length, length - start)) }),
      severity: d.category === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
      code: formatCode(d),
      source: 'netc',
      message: d.message,
    };
  });
}
