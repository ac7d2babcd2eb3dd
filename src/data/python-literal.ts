// The part of Python's literal syntax a .npy header is written in (numpy writes it with repr()): dicts with
// string keys, tuples and lists (both read as arrays), strings in single or double quotes, whole numbers
// (Python 2's 3L too), True, False and None. Anything else is an Error whose message says what and where.
import { quoteShort } from '../util/quote.js';

export type PyValue = string | number | boolean | null | PyValue[] | { [key: string]: PyValue };

const token = /\s*(?:('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([+-]?\d+)L?|(True|False|None)|([{}()[\],:]))/y;

interface Token {
  text: string;
  at: number;
  kind: 'string' | 'number' | 'name' | 'punct' | 'end';
}

export function parsePythonLiteral(text: string): PyValue {
  const tokens = tokenize(text);
  let i = 0;
  const next = () => tokens[i++];
  const peek = () => tokens[i];
  const unexpected = (t: Token) => new Error(t.kind === 'end' ? 'the header ends early' : `unexpected ${quoteShort(t.text)} at character ${t.at}`);

  const value = (): PyValue => {
    const t = next();
    if (t.kind === 'string') return unquote(t.text);
    if (t.kind === 'number') return Number(t.text);
    if (t.kind === 'name') return t.text === 'True' ? true : t.text === 'False' ? false : null;
    if (t.text === '(') {
      // (3,) is a tuple, (3) only the 3 inside the parentheses
      const items = sequence(')');
      return items.length === 1 && tokens[i - 2].text !== ',' ? items[0] : items;
    }
    if (t.text === '[') return sequence(']');
    if (t.text === '{') return dict();
    throw unexpected(t);
  };
  // items separated by commas, a trailing comma allowed: (3,) [1, 2] ()
  const sequence = (close: string): PyValue[] => {
    const items: PyValue[] = [];
    while (peek().text !== close) {
      items.push(value());
      if (peek().text === ',') next();
      else if (peek().text !== close) throw unexpected(peek());
    }
    next();
    return items;
  };
  const dict = (): { [key: string]: PyValue } => {
    const entries: { [key: string]: PyValue } = {};
    while (peek().text !== '}') {
      const key = next();
      if (key.kind !== 'string') throw unexpected(key);
      const colon = next();
      if (colon.text !== ':') throw unexpected(colon);
      entries[unquote(key.text)] = value();
      if (peek().text === ',') next();
      else if (peek().text !== '}') throw unexpected(peek());
    }
    next();
    return entries;
  };

  const result = value();
  if (peek().kind !== 'end') throw unexpected(peek());
  return result;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  token.lastIndex = 0;
  for (;;) {
    const start = token.lastIndex;
    const m = token.exec(text);
    if (!m) {
      if (text.slice(start).trim() !== '') throw new Error(`unexpected ${JSON.stringify(text.slice(start).trim()[0])} at character ${start + (text.slice(start).length - text.slice(start).trimStart().length)}`);
      tokens.push({ text: '', at: text.length, kind: 'end' });
      return tokens;
    }
    const at = start + m[0].length - m[0].trimStart().length;
    const kind = m[1] !== undefined ? 'string' : m[2] !== undefined ? 'number' : m[3] !== undefined ? 'name' : 'punct';
    tokens.push({ text: m[1] ?? m[2] ?? m[3] ?? m[4], at, kind });
  }
}

/** A quoted string's text; backslash escapes are taken as the character they escape (headers have none). */
function unquote(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\(.)/g, '$1');
}
