// CST -> AST. After error recovery the CST may lack children, so every access is optional and
// incomplete pieces are dropped (their syntax error has already been reported).
import type { CstElement, CstNode, IToken } from 'chevrotain';
import type { Span } from '../diagnostics/diagnostic.js';
import type * as A from './ast.js';

type Children = Record<string, CstElement[] | undefined>;

const isToken = (e: CstElement | undefined): e is IToken => !!e && 'image' in e;
const node = (c: Children, key: string, i = 0): CstNode | undefined => {
  const e = c[key]?.[i];
  return e && !isToken(e) ? e : undefined;
};
const nodes = (c: Children, key: string): CstNode[] => (c[key] ?? []).filter((e): e is CstNode => !isToken(e));
const token = (c: Children, key: string, i = 0): IToken | undefined => {
  const e = c[key]?.[i];
  return isToken(e) && !e.isInsertedInRecovery && Number.isFinite(e.startOffset) ? e : undefined;
};
const tokens = (c: Children, key: string): IToken[] =>
  (c[key] ?? []).filter((e): e is IToken => isToken(e) && !e.isInsertedInRecovery && Number.isFinite(e.startOffset));

const tokenSpan = (t: IToken): Span => ({ start: t.startOffset, length: t.image.length });

/** The span from the first to the last real token under a CST node. */
function cstSpan(n: CstNode): Span | undefined {
  let first = Infinity;
  let last = -Infinity;
  const visit = (e: CstElement) => {
    if (isToken(e)) {
      if (e.isInsertedInRecovery || !Number.isFinite(e.startOffset)) return;
      first = Math.min(first, e.startOffset);
      last = Math.max(last, e.startOffset + e.image.length);
    } else for (const list of Object.values(e.children)) for (const child of list) visit(child);
  };
  visit(n);
  return first <= last ? { start: first, length: last - first } : undefined;
}

const name = (t: IToken | undefined): A.Name | undefined => (t ? { kind: 'name', name: t.image, span: tokenSpan(t) } : undefined);

function hasRecovery(n: CstNode): boolean {
  if (n.recoveredNode) return true;
  return Object.values(n.children).some((list) =>
    list.some((e) => (isToken(e) ? !!e.isInsertedInRecovery : hasRecovery(e))),
  );
}

export function buildFile(root: CstNode | undefined, path: string, source: string): A.NetFile {
  const blocks: A.Block[] = [];
  for (const b of root ? nodes(root.children, 'block') : []) {
    const c = b.children;
    const model = node(c, 'modelBlock');
    const unknown = node(c, 'unknownBlock');
    if (unknown) {
      const blockName = name(token(unknown.children, 'name'));
      const span = cstSpan(unknown);
      if (blockName && span) blocks.push({ kind: 'unknown', name: blockName, span });
      continue;
    }
    const inner = model ?? node(c, 'ensembleBlock') ?? node(c, 'trainBlock') ?? node(c, 'scheduleBlock');
    if (!inner) continue;
    const built = model ? buildModel(model) : buildEntriesBlock(inner);
    if (built) blocks.push(built);
  }
  return { path, source, blocks };
}

function buildModel(n: CstNode): A.ModelBlock | undefined {
  const c = n.children;
  const keyword = token(c, 'Model');
  const span = cstSpan(n);
  if (!keyword || !span) return undefined;
  const modelName = name(token(c, 'name')) ?? { kind: 'name', name: '?', span: tokenSpan(keyword) };
  const argList = node(c, 'argList');
  const statements = nodes(c, 'statement')
    .map(buildStatement)
    .filter((s): s is A.LayerStatement => !!s);
  return {
    kind: 'model',
    keyword: tokenSpan(keyword),
    name: modelName,
    params: argList ? buildArgs(argList) : [],
    statements,
    span,
    incomplete: hasRecovery(n),
  };
}

function buildStatement(n: CstNode): A.LayerStatement | undefined {
  const c = n.children;
  const callNode = node(c, 'call');
  const call = callNode && buildCall(callNode, 'callee');
  const span = cstSpan(n);
  // A statement the parser had to patch up is dropped: its error is reported, and checking the guess
  // would only add noise.
  if (!call || !span || hasRecovery(n)) return undefined;
  const shared = token(c, 'Shared');
  return { label: name(token(c, 'label')), ...(shared ? { shared: tokenSpan(shared) } : {}), call, span };
}

function buildEntriesBlock(n: CstNode): A.EntriesBlock | undefined {
  const c = n.children;
  const kind = n.name === 'ensembleBlock' ? 'ensemble' : n.name === 'trainBlock' ? 'train' : 'schedule';
  const keyword = token(c, kind[0].toUpperCase() + kind.slice(1));
  const span = cstSpan(n);
  if (!keyword || !span) return undefined;
  const entriesNode = node(c, 'entries');
  const entries = entriesNode
    ? nodes(entriesNode.children, 'entry')
        .map(buildEntry)
        .filter((e): e is A.Entry => !!e)
    : [];
  return { kind, keyword: tokenSpan(keyword), name: name(token(c, 'name')), entries, span, incomplete: hasRecovery(n) };
}

function buildEntry(n: CstNode): A.Entry | undefined {
  const c = n.children;
  const valueNode = node(c, 'value');
  const value = valueNode && buildValue(valueNode);
  const span = cstSpan(n);
  if (!value || !span || hasRecovery(n)) return undefined;
  const vary = !!token(c, 'Vary');
  const pathNode = node(c, 'path');
  const path = vary ? (pathNode ? tokens(pathNode.children, 'Identifier').map((t) => name(t)!) : []) : [name(token(c, 'key'))].filter((x): x is A.Name => !!x);
  if (!path.length) return undefined;
  return { vary, path, value, span };
}

function buildArgs(n: CstNode): A.Arg[] {
  return nodes(n.children, 'arg')
    .map((a): A.Arg | undefined => {
      const valueNode = node(a.children, 'value');
      const value = valueNode && buildValue(valueNode);
      const span = cstSpan(a);
      if (!value || !span) return undefined;
      return { key: name(token(a.children, 'key')), value, span };
    })
    .filter((a): a is A.Arg => !!a);
}

function buildCall(n: CstNode, calleeKey: string): A.CallValue | undefined {
  const c = n.children;
  const callee = name(token(c, calleeKey));
  const span = cstSpan(n);
  if (!callee || !span) return undefined;
  const argList = node(c, 'argList');
  return { kind: 'call', callee, args: argList ? buildArgs(argList) : [], span };
}

export function buildValue(n: CstNode): A.Value | undefined {
  const c = n.children;
  const num = node(c, 'numberOrQuantity');
  if (num) {
    const t = token(num.children, 'NumberLiteral');
    if (!t) return undefined;
    const amount: A.NumberValue = { kind: 'number', value: Number(t.image), text: t.image, span: tokenSpan(t) };
    const unit = name(token(num.children, 'unit'));
    return unit ? { kind: 'quantity', amount, unit, span: cstSpan(num)! } : amount;
  }
  const str = token(c, 'StringLiteral');
  if (str) return { kind: 'string', value: unescape(str.image), span: tokenSpan(str) };
  const t = token(c, 'True') ?? token(c, 'False');
  if (t) return { kind: 'bool', value: t.image === 'true', span: tokenSpan(t) };
  const list = node(c, 'list');
  if (list) {
    const span = cstSpan(list);
    if (!span) return undefined;
    const items = nodes(list.children, 'value')
      .map(buildValue)
      .filter((v): v is A.Value => !!v);
    return { kind: 'list', items, span };
  }
  const nc = node(c, 'nameOrCall');
  if (nc) {
    if (nc.children.LParen) return buildCall(nc, 'name');
    return name(token(nc.children, 'name'));
  }
  return undefined;
}

function unescape(image: string): string {
  return image.slice(1, -1).replace(/\\(.)/g, (_, ch: string) => ({ n: '\n', t: '\t' })[ch] ?? ch);
}
