// Document symbols (the blocks, and in the model the labelled layers) and document formatting, which is
// `netc fmt`'s canonical layout as one edit of the whole text (none when the file is already in it, or does
// not parse).
import { SymbolKind, type DocumentSymbol, type TextEdit } from 'vscode-languageserver';
import type { Block } from '../syntax/ast.js';
import { formatSource } from '../syntax/format.js';
import { rangeOf, textOf, type Analysis } from './document.js';

function blockName(b: Block): string {
  switch (b.kind) {
    case 'model':
      return `model ${b.name.name}`;
    case 'schedule':
      return `schedule ${b.name?.name ?? ''}`.trim();
    case 'unknown':
      return b.name.name;
    default:
      return b.kind;
  }
}

export function documentSymbols(a: Analysis): DocumentSymbol[] {
  return a.ast.blocks.map((b): DocumentSymbol => {
    const selection = b.kind === 'model' || b.kind === 'unknown' ? b.name.span : b.kind === 'schedule' && b.name ? b.name.span : b.keyword;
    const children: DocumentSymbol[] =
      b.kind === 'model'
        ? b.statements
            .filter((s) => s.label)
            .map((s) => ({
              name: s.label!.name,
              detail: textOf(a, s.call.callee.span),
              kind: SymbolKind.Variable,
              range: rangeOf(a.doc, { start: s.span.start, length: s.span.length }),
              selectionRange: rangeOf(a.doc, s.label!.span),
            }))
        : [];
    return {
      name: blockName(b),
      kind: b.kind === 'model' ? SymbolKind.Class : SymbolKind.Namespace,
      range: rangeOf(a.doc, b.span),
      selectionRange: rangeOf(a.doc, selection),
      children,
    };
  });
}

export function formatting(a: Analysis): TextEdit[] {
  const source = a.state.source;
  const result = formatSource(source, a.path);
  if (!result.ok || result.text === source) return [];
  return [{ range: rangeOf(a.doc, { start: 0, length: source.length }), newText: result.text }];
}
