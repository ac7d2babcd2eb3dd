// Labels: where each is defined (`h = dense(...)`), where it is read (`from: h`, `add(h, r)`, `vary h.rate`),
// go-to-definition, references and rename. `input` is the model's input: it is defined by the model's header.
import type { Location, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import type { Span } from '../diagnostics/diagnostic.js';
import { FROM_ARG, INPUT_LABEL } from '../check/check-model.js';
import { layerKind } from '../layers/registry.js';
import type { LayerStatement, ModelBlock, NetFile } from '../syntax/ast.js';
import { allTokens } from '../syntax/tokens.js';
import { rangeOf, within, type Analysis } from './document.js';

export interface LabelUse {
  name: string;
  span: Span;
  /** true where the label is defined */
  definition: boolean;
  /** the statement that defines it (definitions of layer labels only) */
  statement?: LayerStatement;
}

export const modelOf = (file: NetFile): ModelBlock | undefined => file.blocks.find((b): b is ModelBlock => b.kind === 'model');

/** Every definition and use of a label in the file, in source order. */
export function labelUses(file: NetFile): LabelUse[] {
  const uses: LabelUse[] = [];
  const model = modelOf(file);
  if (model) {
    const input = model.params.find((p) => p.key?.name === INPUT_LABEL);
    if (input?.key) uses.push({ name: INPUT_LABEL, span: input.key.span, definition: true });
    for (const s of model.statements) {
      if (s.label) uses.push({ name: s.label.name, span: s.label.span, definition: true, statement: s });
      const readsLabels = layerKind(s.call.callee.name)?.reads === 'labels';
      for (const arg of s.call.args) {
        if (arg.value.kind !== 'name') continue;
        if (arg.key?.name === FROM_ARG || (!arg.key && readsLabels)) uses.push({ name: arg.value.name, span: arg.value.span, definition: false });
      }
    }
  }
  for (const block of file.blocks) {
    if (block.kind !== 'ensemble') continue;
    for (const e of block.entries) {
      // `vary LABEL.ARG`; `vary lr_schedule.min` names the schedule, not a label
      if (e.vary && e.path.length > 1 && e.path[0].name !== 'lr_schedule') uses.push({ name: e.path[0].name, span: e.path[0].span, definition: false });
    }
  }
  return uses.sort((a, b) => a.span.start - b.span.start);
}

/** The label under the cursor, if any. */
export function labelAt(a: Analysis, offset: number): LabelUse | undefined {
  return labelUses(a.ast).find((u) => within(u.span, offset));
}

/** The first definition of a label (a duplicate's first, as the checker reads it). */
export function definitionOf(a: Analysis, name: string): LabelUse | undefined {
  return labelUses(a.ast).find((u) => u.definition && u.name === name);
}

export function definition(a: Analysis, uri: string, offset: number): Location | null {
  const at = labelAt(a, offset);
  const def = at && definitionOf(a, at.name);
  return def ? { uri, range: rangeOf(a.doc, def.span) } : null;
}

export function references(a: Analysis, uri: string, offset: number, includeDeclaration: boolean): Location[] {
  const at = labelAt(a, offset);
  if (!at) return [];
  return labelUses(a.ast)
    .filter((u) => u.name === at.name && (includeDeclaration || !u.definition))
    .map((u) => ({ uri, range: rangeOf(a.doc, u.span) }));
}

// the lexer's keywords (model, train, vary, true, ...): those that fall back to a name when longer (`models`)
const keywords = new Set(allTokens.filter((t) => t.LONGER_ALT).map((t) => t.name.toLowerCase()));

/** Why a label cannot be renamed to `name`, or undefined when it can. */
export function badLabelName(a: Analysis, name: string, from: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `'${name}' is not a name: a label is a letter or _, then letters, digits or _`;
  if (keywords.has(name) && name !== 'shared') return `'${name}' is a keyword`;
  if (name === INPUT_LABEL) return `'input' is reserved: it names the model's input`;
  if (name !== from && labelUses(a.ast).some((u) => u.definition && u.name === name)) return `there is already a label '${name}'`;
  return undefined;
}

/** The span of the label a rename may start on (not `input`, which the model's header defines). */
export function prepareRename(a: Analysis, offset: number): Span | undefined {
  const at = labelAt(a, offset);
  return at && at.name !== INPUT_LABEL ? at.span : undefined;
}

/** Every use of the label under the cursor renamed; throws a message when the new name cannot be a label. */
export function rename(a: Analysis, uri: string, offset: number, newName: string): WorkspaceEdit | null {
  const at = labelAt(a, offset);
  if (!at || at.name === INPUT_LABEL) return null;
  const why = badLabelName(a, newName, at.name);
  if (why) throw new Error(why);
  const edits: TextEdit[] = labelUses(a.ast)
    .filter((u) => u.name === at.name)
    .map((u) => ({ range: rangeOf(a.doc, u.span), newText: newName }));
  return { changes: { [uri]: edits } };
}
