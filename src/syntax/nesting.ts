// A cap on how deep brackets nest. The parser, the AST builder and the checker recurse once per level, so
// `[[[...]]]` 500 deep or `init: f(f(...))` 1000 deep would overflow the stack (exit 70). Nothing in a .net
// file nests more than a few levels, so the tokens past the cap are cut out before parsing and the first
// bracket past it is reported (NET1011): the rest of the file is still parsed and checked.
import type { IToken } from 'chevrotain';
import { LBracket, LCurly, LParen, RBracket, RCurly, RParen } from './tokens.js';

/** the deepest nesting of ( and [ that is parsed */
export const maxNesting = 64;

export interface CappedTokens {
  /** the tokens with every bracket past the cap, and all it holds, left out */
  tokens: IToken[];
  /** the first bracket past the cap of each run that was left out */
  tooDeep: IToken[];
}

/** Cuts the over-deep parts out of `tokens`. Braces end any nesting: brackets never span a block's `{ }`. */
export function capNesting(tokens: readonly IToken[]): CappedTokens {
  const kept: IToken[] = [];
  const tooDeep: IToken[] = [];
  let depth = 0;
  for (const t of tokens) {
    const type = t.tokenType;
    if (type === LCurly || type === RCurly) depth = 0;
    const open = type === LParen || type === LBracket;
    if (open && ++depth === maxNesting + 1) tooDeep.push(t);
    if (depth <= maxNesting) kept.push(t);
    if ((type === RParen || type === RBracket) && depth > 0) depth--;
  }
  return { tokens: kept, tooDeep };
}
