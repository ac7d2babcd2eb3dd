// Prints diagnostics as `file.net(LINE,COL): error NET2001: message`, then the source line with the span
// underlined by `~`, like TypeScript's error baselines.
import type { Diagnostic } from './diagnostic.js';

export interface LineCol {
  line: number; // 1-based
  col: number; // 1-based
}

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

export function offsetToLineCol(starts: readonly number[], offset: number): LineCol {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, col: offset - starts[lo] + 1 };
}

export function formatCode(d: Diagnostic): string {
  return `NET${d.code}`;
}

/** One diagnostic: the header line, the source line and the underline. */
export function formatDiagnostic(d: Diagnostic, source: string, starts = lineStarts(source)): string {
  const offset = Math.min(Math.max(0, d.start), source.length);
  const { line, col } = offsetToLineCol(starts, offset);
  const header = `${d.file}(${line},${col}): ${d.category} ${formatCode(d)}: ${d.message}`;
  const lineStart = starts[line - 1];
  let lineEnd = source.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = source.length;
  const text = source.slice(lineStart, lineEnd).replace(/\r$/, '').replace(/\t/g, ' ');
  const width = Math.max(1, Math.min(d.length, text.length - (col - 1)));
  const underline = ' '.repeat(col - 1) + '~'.repeat(width);
  const gutter = String(line).padStart(4);
  return `${header}\n${gutter} | ${text}\n${' '.repeat(gutter.length)} | ${underline}`;
}

export function formatDiagnostics(diagnostics: readonly Diagnostic[], source: string): string {
  const starts = lineStarts(source);
  return diagnostics.map((d) => formatDiagnostic(d, source, starts)).join('\n\n');
}

export function formatSummary(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.category === 'error').length;
  const warnings = diagnostics.length - errors;
  const parts = [`${errors} error${errors === 1 ? '' : 's'}`];
  if (warnings) parts.push(`${warnings} warning${warnings === 1 ? '' : 's'}`);
  return parts.join(', ');
}
