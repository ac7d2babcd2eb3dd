// One open .net file as the language server sees it: its text compiled by the same pipeline as `netc check`
// (to the verified ensemble IR; the generated step adds no diagnostics), and the AST even when the file has
// errors (the parser recovers), so that labels, symbols and completion work on half-written files.
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Host } from '../data/sources.js';
import { Messages } from '../diagnostics/messages.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { compile, type CompileState } from '../pipeline.js';
import type { NetFile } from '../syntax/ast.js';
import { parse } from '../syntax/parse.js';
import { findBinaryData } from '../syntax/source-bytes.js';

export interface Analysis {
  doc: TextDocument;
  /** the path diagnostics name (the file's path for a file: URI) */
  path: string;
  state: CompileState;
  ast: NetFile;
}

/** Compiles a document as `netc check` does its file; a bug in a pass (an exception) leaves the parse alone, never the server down. */
export function analyze(doc: TextDocument, path: string, host: Host | undefined): Analysis {
  const source = doc.getText();
  const binary = findBinaryData(Buffer.from(source, 'utf8'));
  if (binary) {
    // what netc check says of a file that is not text (the offset in bytes; the span at the text before it)
    const before = Buffer.from(source, 'utf8').subarray(0, binary.offset).toString('utf8');
    const sink = new DiagnosticSink(path);
    sink.report(Messages.BinaryFile, { start: before.length, length: 0 }, path, binary.offset, binary.what);
    return { doc, path, state: { path, source, diagnostics: sink.diagnostics }, ast: { path, source, blocks: [] } };
  }
  if (source.length > ANALYSIS_CHARS) return tooLarge(doc, path, source);
  let state: CompileState;
  try {
    state = compile(source, path, { host, after: 'verify-ensemble' });
  } catch {
    const parsed = parse(source, path);
    state = { path, source, diagnostics: parsed.diagnostics, ast: parsed.file };
  }
  return { doc, path, state, ast: state.ast ?? parse(source, path).file };
}

/**
 * The largest document analysed as it is edited (64 KiB; a real .net file is a few KB): the parser takes
 * seconds on a file many times that size, and the server answers nothing else meanwhile.
 */
export const ANALYSIS_CHARS = 64 * 1024;

/** A document too large to analyse: one warning at its start, and no AST for the features to work on. */
function tooLarge(doc: TextDocument, path: string, source: string): Analysis {
  const sink = new DiagnosticSink(path);
  sink.report(Messages.DocumentTooLarge, { start: 0, length: 0 }, Math.ceil(source.length / 1024), ANALYSIS_CHARS / 1024);
  return { doc, path, state: { path, source, diagnostics: sink.diagnostics }, ast: { path, source, blocks: [] } };
}

/** Whether `offset` falls in [start, start + length] (the end included: a cursor just after a word is on it). */
export const within = (span: { start: number; length: number }, offset: number): boolean => offset >= span.start && offset <= span.start + span.length;

/** The text a span covers. */
export const textOf = (a: Analysis, span: { start: number; length: number }): string => a.state.source.slice(span.start, span.start + span.length);

export const rangeOf = (doc: TextDocument, span: { start: number; length: number }) => ({ start: doc.positionAt(span.start), end: doc.positionAt(span.start + span.length) });
