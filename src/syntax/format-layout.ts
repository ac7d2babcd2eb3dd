// What the formatter needs to know of the grammar: which token starts a block or one of its entries, which
// braces open and close a block, and which commas go (separators between entries, trailing commas in
// lists and argument lists). Read off a complete CST; every other token stays on its entry's line.
import type { CstElement, CstNode, IToken } from 'chevrotain';

/**
 * `block`: the first token of a top-level block; `item`: the first token of a statement or an entry;
 * `open`/`close`: a block's braces; `drop`: a comma the canonical form leaves out.
 */
export type Role = 'block' | 'item' | 'open' | 'close' | 'drop';

const isToken = (e: CstElement): e is IToken => 'image' in e;

function tokensOf(c: CstNode['children'], key: string): IToken[] {
  return (c[key] ?? []).filter(isToken);
}

function nodesOf(c: CstNode['children'], key: string): CstNode[] {
  return (c[key] ?? []).filter((e): e is CstNode => !isToken(e));
}

/** The first token under a CST node. */
function firstToken(n: CstNode): IToken | undefined {
  let first: IToken | undefined;
  for (const list of Object.values(n.children)) {
    for (const e of list) {
      const t = isToken(e) ? e : firstToken(e);
      if (t && (!first || t.startOffset < first.startOffset)) first = t;
    }
  }
  return first;
}

/** A block's braces, its statements or entries, and the commas between them. */
function markBody(body: CstNode, itemKey: string, roles: Map<IToken, Role>): void {
  const c = body.children;
  for (const t of tokensOf(c, 'LCurly')) roles.set(t, 'open');
  for (const t of tokensOf(c, 'RCurly')) roles.set(t, 'close');
  for (const t of tokensOf(c, 'Comma')) roles.set(t, 'drop');
  for (const item of nodesOf(c, itemKey)) {
    const t = firstToken(item);
    if (t) roles.set(t, 'item');
  }
}

/** A trailing comma in an argument list or a list: as many commas as items. */
function markTrailingComma(n: CstNode, itemKey: string, roles: Map<IToken, Role>): void {
  const commas = tokensOf(n.children, 'Comma');
  const items = n.children[itemKey]?.length ?? 0;
  if (commas.length && commas.length === items) roles.set(commas[commas.length - 1], 'drop');
}

function visit(n: CstNode, roles: Map<IToken, Role>): void {
  switch (n.name) {
    case 'block': {
      const t = firstToken(n);
      if (t) roles.set(t, 'block');
      break;
    }
    case 'modelBlock':
      markBody(n, 'statement', roles);
      break;
    case 'entries':
      markBody(n, 'entry', roles);
      break;
    case 'argList':
      markTrailingComma(n, 'arg', roles);
      break;
    case 'list':
      markTrailingComma(n, 'value', roles);
      break;
  }
  for (const list of Object.values(n.children)) for (const e of list) if (!isToken(e)) visit(e, roles);
}

/** The role of every token that has one, for the CST of a whole file. */
export function layoutRoles(file: CstNode): Map<IToken, Role> {
  const roles = new Map<IToken, Role>();
  visit(file, roles);
  return roles;
}
