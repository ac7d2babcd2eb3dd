// The public entry of the syntax phase: text in, AST and diagnostics out. Never throws for bad input.
import type { ILexingError, IRecognitionException, IToken } from 'chevrotain';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { Messages } from '../diagnostics/messages.js';
import { netLexer, UnterminatedString } from './tokens.js';
import { netParser } from './parser.js';
import { buildFile } from './build-ast.js';
import { capNesting, maxNesting } from './nesting.js';
import type { NetFile } from './ast.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';

export interface ParseResult {
  file: NetFile;
  diagnostics: Diagnostic[];
}

export function parse(source: string, path = 'input.net'): ParseResult {
  const sink = new DiagnosticSink(path);
  const lexed = netLexer.tokenize(source);
  reportLexErrors(lexed.errors, source, sink);
  const capped = capNesting(lexed.tokens);
  for (const t of capped.tooDeep) sink.report(Messages.NestingTooDeep, { start: t.startOffset, length: 1 }, maxNesting);
  const tokens = capped.tokens.filter((t) => {
    if (t.tokenType !== UnterminatedString) return true;
    sink.report(Messages.UnterminatedString, { start: t.startOffset, length: t.image.length });
    return false;
  });
  netParser.input = tokens;
  const cst = netParser.file();
  // After an error the parser re-synchronises; an error on the same line, or within two tokens of the
  // previous one, is almost always an echo of it and is not reported.
  let lastLine = -1;
  let lastIndex = -Infinity;
  for (const e of netParser.errors) {
    const line = lineOf(source, tokenSpanOrEnd(e.token, tokens, source).start);
    const index = Number.isFinite(e.token.startOffset) ? tokens.indexOf(e.token) : tokens.length;
    const echo = line === lastLine || (index >= 0 && index - lastIndex <= 2);
    lastLine = line;
    lastIndex = index >= 0 ? index : lastIndex;
    if (!echo) reportParseError(e, tokens, source, sink);
  }
  return { file: buildFile(cst, path, source), diagnostics: sink.diagnostics };
}

function reportLexErrors(errors: ILexingError[], source: string, sink: DiagnosticSink) {
  for (const e of errors) {
    // chevrotain reports a run of unknown characters as one error; name the first one.
    const ch = source[e.offset] ?? '?';
    sink.report(Messages.UnexpectedCharacter, { start: e.offset, length: 1 }, ch === '\n' ? '\\n' : ch);
  }
}

function reportParseError(e: IRecognitionException, tokens: IToken[], source: string, sink: DiagnosticSink) {
  const span = tokenSpanOrEnd(e.token, tokens, source);
  const [a, b] = e.message.split('|');
  switch (e.name) {
    case 'MismatchedTokenException':
      // the file rule ends by expecting the end of input: anything else there is stray input
      if (a === 'expected EOF') sink.report(Messages.TrailingInput, span, b ?? '');
      else sink.report(Messages.ExpectedToken, span, a.replace(/^expected /, ''), b ?? '');
      break;
    case 'NotAllInputParsedException':
      sink.report(Messages.TrailingInput, span, a);
      break;
    default:
      sink.report(Messages.UnexpectedToken, span, a, b ?? 'something else');
  }
}

/** EOF tokens carry no offset: point just past the last real token instead. */
function tokenSpanOrEnd(t: IToken, tokens: IToken[], source: string) {
  if (Number.isFinite(t.startOffset) && t.tokenType.name !== 'EOF') return { start: t.startOffset, length: t.image.length };
  const last = tokens[tokens.length - 1];
  const end = last ? last.startOffset + last.image.length : source.length;
  return { start: end, length: 1 };
}

function lineOf(source: string, offset: number): number {
  let line = 0;
  for (let i = source.indexOf('\n'); i >= 0 && i < offset; i = source.indexOf('\n', i + 1)) line++;
  return line;
}
