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

/** Columns of a source line an excerpt shows at most; a longer line is windowed around the span. */
export const EXCERPT_WIDTH = 100;
/** Diagnostics printed per file at most; the rest are counted. */
export const MAX_DIAGNOSTICS = 50;
// columns of the line an excerpt keeps before a span that starts far into a long line
const CONTEXT = 20;

// Characters that could drive a terminal or hide text: C0 and C1 controls, DEL, line and paragraph
// separators, bidirectional overrides and isolates, lone surrogates. `\n` and `\t` are handled apart.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const escapeChar = (c: string): string => {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** `text` with every control character written as an escape (`\x07`, `\u202e`); tabs and newlines stay. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, escapeChar);
}

/** What each character of a line shows as, and at which column each code unit starts (one more at the end). */
function displayCells(text: string): { cells: { text: string; col: number }[]; columns: number[] } {
  const cells: { text: string; col: number }[] = [];
  const columns: number[] = [];
  let col = 0;
  for (const ch of text) {
    const shown = ch === '\t' ? ' ' : escapeControls(ch);
    for (let k = 0; k < ch.length; k++) columns.push(col);
    cells.push({ text: shown, col });
    col += [...shown].length;
  }
  columns.push(col);
  return { cells, columns };
}

/** The columns [from, to) of a line `width` wide that an excerpt of the span [start, end) shows. */
function excerptWindow(start: number, width: number): { from: number; to: number } {
  if (width <= EXCERPT_WIDTH) return { from: 0, to: width };
  const from = Math.max(0, Math.min(start - CONTEXT, width - EXCERPT_WIDTH));
  return { from, to: Math.min(width, from + EXCERPT_WIDTH) };
}

/**
 * A source line and the underline of columns `col`..`col + length` (1-based, code units), with control
 * characters escaped and a long line windowed around the span (an ellipsis marks what is cut off).
 */
function excerpt(text: string, col: number, length: number): { line: string; underline: string } {
  const { cells, columns } = displayCells(text);
  const width = columns[text.length];
  const start = columns[Math.min(col - 1, text.length)];
  const end = Math.max(start + 1, columns[Math.min(col - 1 + length, text.length)]);
  const window = excerptWindow(start, width);
  const shown = cells.filter((c) => c.col >= window.from && c.col + [...c.text].length <= window.to);
  const from = shown[0]?.col ?? window.from;
  const to = shown.length ? shown[shown.length - 1].col + [...shown[shown.length - 1].text].length : window.to;
  const before = from > 0 ? '…' : '';
  const after = to < width ? '…' : '';
  const first = Math.min(Math.max(start, from), Math.max(to, start));
  const tildes = Math.max(1, Math.min(end, Math.max(to, start + 1)) - first);
  return { line: before + shown.map((c) => c.text).join('') + after, underline: ' '.repeat(before.length + first - from) + '~'.repeat(tildes) };
}

/** One diagnostic: the header line, the source line and the underline. */
export function formatDiagnostic(d: Diagnostic, source: string, starts = lineStarts(source)): string {
  const offset = Math.min(Math.max(0, d.start), source.length);
  const { line, col } = offsetToLineCol(starts, offset);
  const lineStart = starts[line - 1];
  let lineEnd = source.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = source.length;
  const text = source.slice(lineStart, lineEnd).replace(/\r$/, '');
  const shown = excerpt(text, col, d.length);
  const gutter = String(line).padStart(4);
  return `${formatHeader(d, line, col)}\n${gutter} | ${shown.line}\n${' '.repeat(gutter.length)} | ${shown.underline}`;
}

/** `file.net(LINE,COL): error NET2001: message`, control characters escaped. */
export function formatHeader(d: Diagnostic, line: number, col: number): string {
  return escapeControls(`${d.file}(${line},${col}): ${d.category} ${formatCode(d)}: ${d.message}`);
}

/** A file's diagnostics, at most `max` of them, then a line counting the rest. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[], source: string, max = MAX_DIAGNOSTICS): string {
  const starts = lineStarts(source);
  const shown = diagnostics.slice(0, max).map((d) => formatDiagnostic(d, source, starts));
  const rest = diagnostics.slice(max);
  if (rest.length) shown.push(notShown(rest));
  return shown.join('\n\n');
}

function notShown(rest: readonly Diagnostic[]): string {
  const errors = rest.filter((d) => d.category === 'error').length;
  const warnings = rest.length - errors;
  const count = (n: number, what: string) => `${n} more ${what}${n === 1 ? '' : 's'}`;
  const parts = [errors && count(errors, 'error'), warnings && count(warnings, 'warning')].filter(Boolean);
  return escapeControls(`${rest[0].file}: ${parts.join(' and ')} ${rest.length === 1 ? 'is' : 'are'} not shown`);
}

export function formatSummary(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.category === 'error').length;
  const warnings = diagnostics.length - errors;
  const parts = [`${errors} error${errors === 1 ? '' : 's'}`];
  if (warnings) parts.push(`${warnings} warning${warnings === 1 ? '' : 's'}`);
  return parts.join(', ');
}
