// Tokens of the .net language. Keywords come before Identifier and use `longer_alt`, so `models` is
// still an identifier.
import type { TokenType } from 'chevrotain';
import { createToken, Lexer } from './chevrotain.js';

export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_]*/, label: 'a name' });

const keyword = (word: string, categories: TokenType[] = []) =>
  createToken({ name: word[0].toUpperCase() + word.slice(1), pattern: new RegExp(`${word}\\b`), longer_alt: Identifier, label: `'${word}'`, categories });

export const Model = keyword('model');
export const Ensemble = keyword('ensemble');
export const Train = keyword('train');
export const Schedule = keyword('schedule');
export const Vary = keyword('vary');
export const True = keyword('true');
export const False = keyword('false');
/**
 * `shared` before a layer call: a contextual keyword. It is also an Identifier (its category), so a file
 * that names a label, a key or a layer `shared` still parses as it did before the keyword existed.
 */
export const Shared = keyword('shared', [Identifier]);

export const NumberLiteral = createToken({
  name: 'NumberLiteral',
  pattern: /-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/,
  label: 'a number',
});
export const StringLiteral = createToken({ name: 'StringLiteral', pattern: /"(?:[^"\\\n\r]|\\.)*"/, label: 'a string' });
export const UnterminatedString = createToken({ name: 'UnterminatedString', pattern: /"(?:[^"\\\n\r]|\\.)*/, label: 'an unterminated string' });

const punct = (name: string, pattern: string) => createToken({ name, pattern, label: `'${pattern}'` });
export const LCurly = punct('LCurly', '{');
export const RCurly = punct('RCurly', '}');
export const LParen = punct('LParen', '(');
export const RParen = punct('RParen', ')');
export const LBracket = punct('LBracket', '[');
export const RBracket = punct('RBracket', ']');
export const Colon = punct('Colon', ':');
export const Comma = punct('Comma', ',');
export const Equals = punct('Equals', '=');
export const Dot = punct('Dot', '.');

/** Comments are kept in their own group: the parser never sees them, the formatter (format.ts) puts them back. */
export const Comment = createToken({ name: 'Comment', pattern: /#[^\n\r]*/, group: 'comments' });
export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED, line_breaks: true });

export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  Model,
  Ensemble,
  Train,
  Schedule,
  Vary,
  True,
  False,
  Shared,
  Identifier,
  NumberLiteral,
  StringLiteral,
  UnterminatedString,
  LCurly,
  RCurly,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Colon,
  Comma,
  Equals,
  Dot,
];

export const netLexer = new Lexer(allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: false });
