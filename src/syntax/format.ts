// `netc fmt`: the one canonical layout of a .net file, the one docs/language.md uses. Works from the lexer's
// tokens, its comments (a group of their own) and the roles that format-layout.ts reads off the CST; never
// from the text's spacing. Every block starts on its own line with a blank line before it, every statement
// or entry on its own line, indented by two spaces, and its tokens on that line with one space where one
// belongs. Separating and trailing commas go; token images are kept as written. Comments stay where they
// are: a full-line comment on its own line before what follows it, a trailing comment at the end of its
// line, aligned with the trailing comments of the lines around it. A blank line between statements or
// entries is kept (one, however many there were). Only whitespace and commas change, so the meaning does
// not: test/fmt.test.ts checks that `netc ir` is the same before and after.
import type { IToken } from 'chevrotain';
import { hasErrors, type Diagnostic } from '../diagnostics/diagnostic.js';
import { layoutRoles, type Role } from './format-layout.js';
import { parse } from './parse.js';
import { netParser } from './parser.js';
import { netLexer } from './tokens.js';

export type FormatResult = { ok: true; text: string } | { ok: false; diagnostics: Diagnostic[] };

/** `source` in canonical form, or the syntax errors that keep it from being formatted. */
export function formatSource(source: string, path = 'input.net'): FormatResult {
  const { diagnostics } = parse(source, path);
  if (hasErrors(diagnostics)) return { ok: false, diagnostics };
  const lexed = netLexer.tokenize(source);
  netParser.input = lexed.tokens;
  const roles = layoutRoles(netParser.file());
  return { ok: true, text: print(pieces(source, lexed.tokens, lexed.groups.comments ?? [], roles)) };
}

/** A token or a comment, in source order, with the line breaks before it. */
interface Piece {
  token: IToken;
  comment: boolean;
  role?: Role;
  /** newlines between the previous piece and this one */
  newlines: number;
  /** a blank line since the last piece that is printed (commas that go do not count) */
  blank: boolean;
}

const newlinesIn = (text: string): number => text.match(/\r\n|\r|\n/g)?.length ?? 0;

function pieces(source: string, tokens: IToken[], comments: IToken[], roles: Map<IToken, Role>): Piece[] {
  const all = [...tokens.map((t) => ({ t, comment: false })), ...comments.map((t) => ({ t, comment: true }))];
  all.sort((a, b) => a.t.startOffset - b.t.startOffset);
  const out: Piece[] = [];
  let end = 0;
  let blank = false;
  for (const { t, comment } of all) {
    const newlines = newlinesIn(source.slice(end, t.startOffset));
    blank ||= newlines >= 2;
    out.push({ token: t, comment, role: roles.get(t), newlines, blank });
    if (comment || roles.get(t) !== 'drop') blank = false;
    end = t.startOffset + t.image.length;
  }
  return out;
}

/** One output line: its indent (in levels), its code, and a trailing comment. */
interface Line {
  indent: number;
  code: string;
  comment?: string;
  blankBefore: boolean;
  /** the last token written on it */
  last?: string;
  /** ends with a block's `{` */
  opens?: boolean;
}

const noSpaceBefore = new Set([')', ']', ',', ':', '.', '(']);
const noSpaceAfter = new Set(['(', '[', '.']);

/** Whether one space goes between two tokens on one line. */
function spaced(before: string, after: string): boolean {
  if (noSpaceBefore.has(after) || noSpaceAfter.has(before)) return false;
  return !(before === '{' && after === '}');
}

/** What the next printed token after a piece is: one with a role, another token, or the end of the file. */
type Next = Role | 'token' | 'end';

/** The printer's state while it walks the pieces. */
class Printer {
  lines: Line[] = [];
  /** the line being written, while the next token may still join it */
  current: Line | undefined;
  /** the indent of the statement, entry or block header being written */
  itemIndent = 0;
  /** lines since the last block closed: the first of them gets a blank line before it */
  sinceBlock = 0;

  startLine(indent: number, blankBefore: boolean, code = ''): Line {
    const previous = this.lines[this.lines.length - 1];
    const line: Line = { indent, code, blankBefore: blankBefore && !!previous && !previous.opens };
    this.lines.push(line);
    this.sinceBlock++;
    return line;
  }

  /** A block, a statement or entry, or a closing brace starts a line; any other token continues one. */
  token(p: Piece): void {
    const image = p.token.image;
    if (p.role === 'block' || p.role === 'item') {
      this.itemIndent = p.role === 'block' ? 0 : 1;
      this.current = this.startLine(this.itemIndent, p.role === 'block' ? this.sinceBlock === 0 || p.blank : p.blank, image);
    } else if ((p.role === 'close' && !this.current?.opens) || !this.current) {
      // an empty block closes on its own line: `ensemble {}`; a token after a comment continues its entry
      this.current = this.startLine(p.role === 'close' ? 0 : this.itemIndent + 1, false, image);
    } else {
      this.current.code += (spaced(this.current.last!, image) ? ' ' : '') + image;
    }
    this.current.last = image;
    this.current.opens = p.role === 'open';
    if (p.role === 'close') this.sinceBlock = 0;
  }

  /** A comment on the line of the token before it trails that line; any other has a line of its own. */
  comment(p: Piece, next: Next): void {
    const text = p.token.image.trimEnd();
    if (p.newlines === 0 && this.current) this.current.comment = text;
    else this.startLine(commentIndent(next, this.itemIndent), p.blank || (next === 'block' && this.sinceBlock === 0)).comment = text;
    this.current = undefined;
  }
}

/** A comment before a block, a statement or entry, or a closing brace is indented as that; mid-entry, one more. */
function commentIndent(next: Next, itemIndent: number): number {
  if (next === 'item' || next === 'close') return 1;
  if (next === 'block' || next === 'end') return 0;
  return itemIndent + 1;
}

/** The next printed token's role after each piece. */
function nextRoles(all: Piece[]): Next[] {
  const next: Next[] = new Array(all.length);
  let role: Next = 'end';
  for (let i = all.length - 1; i >= 0; i--) {
    next[i] = role;
    const p = all[i];
    if (!p.comment && p.role !== 'drop') role = p.role ?? 'token';
  }
  return next;
}

function print(all: Piece[]): string {
  const printer = new Printer();
  const next = nextRoles(all);
  all.forEach((p, i) => {
    if (p.comment) printer.comment(p, next[i]);
    else if (p.role !== 'drop') printer.token(p);
  });
  alignComments(printer.lines);
  return printer.lines.map(render).join('');
}

/** Spaces at least between the code and a trailing comment. */
const COMMENT_GAP = 3;

/**
 * Trailing comments of consecutive lines of code at one indent (no blank line or comment line between
 * them) start in one column.
 */
function alignComments(lines: Line[]): void {
  let start = 0;
  for (let i = 1; i <= lines.length; i++) {
    const line = lines[i];
    if (line && !line.blankBefore && line.code && lines[i - 1].code && line.indent === lines[i - 1].indent) continue;
    const run = lines.slice(start, i).filter((l) => l.code && l.comment);
    const width = Math.max(0, ...run.map((l) => l.code.length)) + COMMENT_GAP;
    for (const l of run) l.code = l.code.padEnd(width);
    start = i;
  }
}

function render(line: Line): string {
  const indent = '  '.repeat(line.indent);
  const text = line.code && line.comment ? line.code + line.comment : line.code || line.comment || '';
  return (line.blankBefore ? '\n' : '') + indent + text + '\n';
}
