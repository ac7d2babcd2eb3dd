// The TextMate grammar of .net files (the VS Code extension's editors/vscode/syntaxes/netc.tmLanguage.json),
// built from the lexer's own tokens: each token's pattern, in the lexer's order, with a scope. A TextMate
// scanner takes the match that starts first and, of those, the first pattern, so the lexer's order gives the
// lexer's tokens. An identifier gets a finer scope from what follows it (a call, a key, a label definition),
// as does the name after `model` and `schedule`. `npm run tmgrammar` writes the file; a test fails when it
// differs from this, and when a lexer token has no scope.
import type { TokenType } from 'chevrotain';
import { Lexer } from './chevrotain.js';
import * as T from './tokens.js';

/** A TextMate rule: a single-line match with a scope, or captures, or a list of rules to try in order. */
export interface TmRule {
  name?: string;
  match?: string;
  captures?: Record<string, { name: string }>;
  patterns?: TmRule[];
}

export interface TmGrammar {
  $schema: string;
  name: string;
  scopeName: string;
  fileTypes: string[];
  comment: string;
  patterns: { include: string }[];
  repository: Record<string, TmRule>;
}

export const scopeName = 'source.netc';
const scoped = (scope: string) => `${scope}.netc`;

/** The base scope of each lexer token that reaches the parser or the formatter (all but skipped whitespace). */
export const tokenScopes: Record<string, string> = {
  Comment: 'comment.line.number-sign',
  Model: 'keyword.other.model',
  Ensemble: 'keyword.other.ensemble',
  Train: 'keyword.other.train',
  Schedule: 'keyword.other.schedule',
  Vary: 'keyword.other.vary',
  True: 'constant.language.boolean.true',
  False: 'constant.language.boolean.false',
  Shared: 'storage.modifier.shared',
  Identifier: 'variable.other',
  NumberLiteral: 'constant.numeric',
  StringLiteral: 'string.quoted.double',
  UnterminatedString: 'invalid.illegal.unterminated-string',
  LCurly: 'punctuation.section.block.begin',
  RCurly: 'punctuation.section.block.end',
  LParen: 'punctuation.section.parens.begin',
  RParen: 'punctuation.section.parens.end',
  LBracket: 'punctuation.section.brackets.begin',
  RBracket: 'punctuation.section.brackets.end',
  Colon: 'punctuation.separator.key-value',
  Comma: 'punctuation.separator.comma',
  Equals: 'keyword.operator.assignment',
  Dot: 'punctuation.accessor',
};

/** The finer scopes an identifier takes from what follows it, tried in this order before the plain one. */
export const identifierRoles = {
  label: 'entity.name.variable.label', //   h = dense(...)
  key: 'variable.parameter.key', //         members: 30, kernel: 5, input: [2]
  call: 'support.function', //              dense(...), adam(...), loguniform(...)
  model: 'entity.name.type.model', //       model lenet5(...)
  schedule: 'entity.name.type.schedule', // schedule pbt { ... }
};

/** The scopes a token of this type may get: its own and, for an identifier, its roles. `shared` is an identifier too. */
export function scopesOf(tokenName: string): string[] {
  const own = tokenScopes[tokenName];
  if (own === undefined) return [];
  const asIdentifier = [tokenScopes.Identifier, ...Object.values(identifierRoles)];
  const scopes = tokenName === 'Identifier' ? asIdentifier : tokenName === 'Shared' ? [own, ...asIdentifier] : [own];
  return scopes.map(scoped);
}

/**
 * A token's pattern as Oniguruma source, read as JavaScript reads it. Oniguruma's `\d` takes any Unicode digit
 * and its `\b` any Unicode letter (`modelé` would be no keyword), so they become their ASCII forms; the lexer
 * uses `\b` only at a keyword's end, where it means that no word character follows.
 */
function sourceOf(token: TokenType): string {
  const pattern = token.PATTERN;
  if (typeof pattern === 'string') return pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!(pattern instanceof RegExp) || pattern.flags !== '') throw new Error(`token ${token.name}: no TextMate form for its pattern`);
  const source = pattern.source.replace(/(?<=\w)\\b$/, '(?![A-Za-z0-9_])').replaceAll('\\d', '[0-9]');
  if (/\(\?<|\\[pPkubBwWsS]/.test(source)) throw new Error(`token ${token.name}: its pattern uses what Oniguruma reads otherwise`);
  return source;
}

const name = sourceOf(T.Identifier);

/** The keywords that are never a name (`shared` is one: it is in the Identifier category). */
function reservedWords(): TokenType[] {
  const alternatives = (t: TokenType) => [t.LONGER_ALT ?? []].flat();
  return T.allTokens.filter((t) => alternatives(t).includes(T.Identifier) && !(t.CATEGORIES ?? []).includes(T.Identifier));
}

/** A name that no keyword takes: the name after `model` or `schedule`, in the same match. */
const freeName = () => `(?!(?:${reservedWords().map(sourceOf).join('|')}))${name}`;

function identifierRule(): TmRule {
  return {
    patterns: [
      { match: `${name}(?=\\s*=)`, name: scoped(identifierRoles.label) },
      { match: `${name}(?=\\s*:)`, name: scoped(identifierRoles.key) },
      { match: `${name}(?=\\s*\\()`, name: scoped(identifierRoles.call) },
      { match: name, name: scoped(tokenScopes.Identifier) },
    ],
  };
}

/** `model NAME` and `schedule KIND`: the keyword and the name it introduces, else the keyword alone. */
function introducingRule(keyword: TokenType, role: string): TmRule {
  const scope = scoped(tokenScopes[keyword.name]);
  return {
    patterns: [
      { match: `(${sourceOf(keyword)})\\s+(${freeName()})`, captures: { 1: { name: scope }, 2: { name: scoped(role) } } },
      { match: sourceOf(keyword), name: scope },
    ],
  };
}

function ruleOf(token: TokenType): TmRule {
  if (token === T.Identifier) return identifierRule();
  if (token === T.Model) return introducingRule(T.Model, identifierRoles.model);
  if (token === T.Schedule) return introducingRule(T.Schedule, identifierRoles.schedule);
  const scope = tokenScopes[token.name];
  if (scope === undefined) throw new Error(`token ${token.name} has no TextMate scope: add it to tokenScopes in src/syntax/textmate.ts`);
  // `shared` is the modifier only before a layer's name; elsewhere (`shared = dense(...)`) it is an identifier
  if (token === T.Shared) return { match: `${sourceOf(token)}(?=\\s+${name})`, name: scoped(scope) };
  return { match: sourceOf(token), name: scoped(scope) };
}

/** The tokens the grammar scopes, in the lexer's order: every token but skipped whitespace. */
export const scopedTokens = (): TokenType[] => T.allTokens.filter((t) => t.GROUP !== Lexer.SKIPPED);

export function textmateGrammar(): TmGrammar {
  const tokens = scopedTokens();
  return {
    $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
    name: 'netc',
    scopeName,
    fileTypes: ['net'],
    comment: 'Generated from the lexer (src/syntax/tokens.ts) by `npm run tmgrammar`; do not edit.',
    patterns: tokens.map((t) => ({ include: `#${t.name}` })),
    repository: Object.fromEntries(tokens.map((t) => [t.name, ruleOf(t)])),
  };
}

export const textmateGrammarText = () => `${JSON.stringify(textmateGrammar(), null, 2)}\n`;
