// Seeded whitespace mutations of a .net source that keep its meaning and its layout's intent: each gap
// between two tokens (or a token and a comment) is rewritten with other spaces, tabs and newlines, where
// the grammar lets it be. What the formatter reads from whitespace is kept: a gap with a blank line keeps
// one (2 to 4 newlines), a gap without none gets none, a comment stays trailing or on its own line, and two
// tokens that would lex as one (`shared dense`, `2 epochs`) keep some whitespace between them.
import { netLexer } from '../../src/syntax/tokens.js';

const PUNCTUATION = new Set(['{', '}', '(', ')', '[', ']', ':', ',', '=', '.']);

interface Gap {
  start: number;
  end: number;
  /** may the gap be empty */
  touching: boolean;
  /** may it hold a newline (not before a trailing comment) */
  newline: boolean;
  /** must it hold one (after a comment) */
  mustBreak: boolean;
  blank: boolean;
}

function gaps(source: string): Gap[] {
  const lexed = netLexer.tokenize(source);
  const items = [...lexed.tokens, ...(lexed.groups.comments ?? [])].sort((a, b) => a.startOffset - b.startOffset);
  const out: Gap[] = [];
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1];
    const b = items[i];
    const start = a.startOffset + a.image.length;
    const text = source.slice(start, b.startOffset);
    const afterComment = a.image.startsWith('#');
    const beforeComment = b.image.startsWith('#');
    const newlines = text.split('\n').length - 1;
    out.push({
      start,
      end: b.startOffset,
      touching: !afterComment && (beforeComment || PUNCTUATION.has(a.image) || PUNCTUATION.has(b.image)),
      newline: !beforeComment || newlines > 0,
      mustBreak: afterComment || (beforeComment && newlines > 0),
      blank: newlines >= 2,
    });
  }
  return out;
}

function whitespace(gap: Gap, random: () => number): string {
  const pad = () => ['', ' ', '  ', '\t', '    '][Math.floor(random() * 5)];
  if (gap.blank) return pad() + '\n'.repeat(2 + Math.floor(random() * 3)) + pad();
  const breaks = gap.mustBreak || (gap.newline && random() < 0.4);
  if (breaks) return pad() + '\n' + pad();
  const spaces = pad();
  return spaces || gap.touching ? spaces : ' ';
}

/** `source` with about `rate` of its gaps rewritten. */
export function fuzzWhitespace(source: string, random: () => number, rate = 0.5): string {
  let out = '';
  let at = 0;
  for (const gap of gaps(source)) {
    if (random() >= rate) continue;
    out += source.slice(at, gap.start) + whitespace(gap, random);
    at = gap.end;
  }
  return out + source.slice(at);
}
