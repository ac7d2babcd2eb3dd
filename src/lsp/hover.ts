// Hover: on a layer, its output shape and parameter count per member and, widened, its fused shapes (under
// the default lowering, grouped: a .net file names no lowering); on a label, the statement that defines it; on
// a vary line, the first members' values; on a keyword, key or argument, the line of docs/language.md that
// defines it.
import type { Hover } from 'vscode-languageserver';
import type { Span } from '../diagnostics/diagnostic.js';
import type { ArgSpec } from '../core/arg-spec.js';
import { fusedShape } from '../core/layout.js';
import { fmtShape } from '../layers/layer-kind.js';
import { layerKind } from '../layers/registry.js';
import type { Arg, Block, CallValue, Entry, LayerStatement, Value } from '../syntax/ast.js';
import { rangeOf, textOf, within, type Analysis } from './document.js';
import { definitionOf, labelAt, modelOf } from './definition.js';
import { docLineFor, docMarkdown, type DocContext } from './language-docs.js';
import { languageDocs } from './language-docs.generated.js';
import { blockKeys, describeArg, layerArgs, registryOf, type BlockKind, type CallSpec } from './vocabulary.js';

/** Members a vary hover lists at most. */
export const VARY_SHOWN = 8;

const hover = (a: Analysis, span: Span, lines: (string | undefined)[]): Hover => ({
  contents: { kind: 'markdown', value: lines.filter((l) => l !== undefined && l !== '').join('\n\n') },
  range: rangeOf(a.doc, span),
});

/** The defining line of docs/language.md, quoted. */
function doc(name: string, context?: DocContext): string | undefined {
  const line = docLineFor(languageDocs, name, context);
  return line && `${docMarkdown(line)}\n\n*docs/language.md, ${line.section}*`;
}

const product = (s: number[]) => s.reduce((x, y) => x * y, 1);

/** The `index`-th statement of the model: its shape, parameters, and fused shapes when the file compiled. */
function layerFacts(a: Analysis, index: number): string[] {
  const { ir, ensemble } = a.state;
  const op = ir?.ops[index + 1];
  if (!ir || !op) return [];
  const params = ir.params.filter((p) => op.params.includes(p.name));
  const count = params.reduce((n, p) => n + product(p.shape), 0);
  const lines = [`\`${op.name}\`: output \`${fmtShape(op.shape)}\` per member, ${count} parameter${count === 1 ? '' : 's'} per member${params.some((p) => p.shared) ? ' (shared: one copy for every member)' : ''}`];
  if (params.length) lines.push(params.map((p) => `- \`${p.name}\` \`${fmtShape(p.shape)}\``).join('\n'));
  const wide = ensemble?.ops[index + 1];
  if (ensemble && wide) {
    const n = ensemble.members;
    const out = wide.shared ? `[B, ${op.shape.join(', ')}] (the same for every member)` : `[N=${n}, B, ${op.shape.join(', ')}]`;
    const fused = ensemble.params
      .filter((p) => op.params.includes(p.name))
      .map((p) => `- \`${p.name}\` \`${fmtShape(fusedShape(p.layout, p.shape, n))}\` (${p.layout})`);
    lines.push([`fused, ${n} member${n === 1 ? '' : 's'} (lowering ${ensemble.lowering}): output \`${out}\``, ...fused].join('\n'));
  }
  return lines;
}

function layerHover(a: Analysis, s: LayerStatement, index: number, span: Span): Hover {
  const kind = layerKind(s.call.callee.name);
  const head = kind ? `**${kind.name}**: ${kind.summary}` : `**${s.call.callee.name}**: not a layer`;
  return hover(a, span, [head, ...layerFacts(a, index), kind && doc(kind.name, 'layer')]);
}

function labelHover(a: Analysis, offset: number): Hover | undefined {
  const at = labelAt(a, offset);
  if (!at) return undefined;
  const def = definitionOf(a, at.name);
  const model = modelOf(a.ast);
  if (at.name === 'input' && model) {
    const shape = a.state.program?.model.input;
    return hover(a, at.span, [`**input**: the model's input${shape ? `, \`${fmtShape(shape)}\` per example` : ''}`, '```net\n' + `model ${model.name.name}(${model.params.map((p) => textOf(a, p.span)).join(', ')})` + '\n```']);
  }
  if (!def?.statement) return hover(a, at.span, [`**${at.name}**: no layer of this model has this label`]);
  const index = model ? model.statements.indexOf(def.statement) : -1;
  const line = a.doc.positionAt(def.span.start).line + 1;
  return hover(a, at.span, [`label **${at.name}**, line ${line}:`, '```net\n' + textOf(a, def.statement.span) + '\n```', ...layerFacts(a, index)]);
}

const round = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

function varyHover(a: Analysis, e: Entry): Hover {
  const path = e.path.map((p) => p.name).join('.');
  const run = a.state.run;
  const key = run && [...run.hyper.varied].find(([, p]) => p === path)?.[0];
  const lines = [`**vary ${path}**`];
  if (run && key !== undefined) {
    const n = run.ensemble.members;
    const shown = Math.min(n, VARY_SHOWN);
    const unit = run.hyper.units.get(key);
    const values = Array.from({ length: shown }, (_, m) => `- member ${m}: ${round(run.hyper.value(key, m))}${unit ? ` ${unit}` : ''}`);
    lines.push(values.join('\n') + (n > shown ? `\n- ... (${n} members)` : ''));
  } else lines.push('(each member\'s value is shown once the file checks without errors)');
  return hover(a, spanOfEntry(e), [...lines, doc('vary', 'ensemble')]);
}

const spanOfEntry = (e: Entry): Span => e.span;

/** Hover inside a value: a registry call's name or argument, or a choice value. */
function valueHover(a: Analysis, offset: number, value: Value, specs: readonly CallSpec[] | undefined, context: DocContext | undefined): Hover | undefined {
  if (value.kind === 'list') {
    for (const item of value.items) if (within(item.span, offset)) return valueHover(a, offset, item, specs, context);
    return undefined;
  }
  if (value.kind === 'name' && within(value.span, offset)) {
    const text = doc(value.name, context);
    return text ? hover(a, value.span, [text]) : undefined;
  }
  if (value.kind !== 'call') return undefined;
  const spec = specs?.find((s) => s.name === value.callee.name);
  if (within(value.callee.span, offset)) {
    return hover(a, value.callee.span, [spec ? `**${spec.name}**(${spec.args.map((s) => s.name).join(', ')})` : undefined, doc(value.callee.name, context)]);
  }
  return argHover(a, offset, value, spec?.args ?? [], context, value.callee.name);
}

function argHover(a: Analysis, offset: number, call: CallValue, args: readonly ArgSpec[], context: DocContext | undefined, owner: string): Hover | undefined {
  let position = 0;
  for (const arg of call.args) {
    const spec = arg.key ? args.find((s) => s.name === arg.key!.name) : args.filter((s) => s.positional)[position++];
    if (arg.key && within(arg.key.span, offset)) {
      const optionDoc = context === 'layer' ? docLineFor(languageDocs, arg.key.name, 'layer-option') : undefined;
      const text = optionDoc && optionDoc.names[0] === arg.key.name ? doc(arg.key.name, 'layer-option') : doc(owner, context);
      return hover(a, arg.key.span, [spec ? describeArg(spec) : `\`${arg.key.name}\`: not an argument of ${owner}`, text]);
    }
    if (within(arg.value.span, offset)) return argValueHover(a, offset, arg, spec?.type.kind === 'choice' || spec?.type.kind === 'choices' ? valueContext(spec.name) : undefined);
  }
  return undefined;
}

/** The docs section a choice argument's values are defined in. */
const valueContext = (arg: string): DocContext | undefined =>
  arg === 'activation' ? 'activation' : arg === 'init' || arg === 'bias_init' ? 'initializer' : undefined;

function argValueHover(a: Analysis, offset: number, arg: Arg, context: DocContext | undefined): Hover | undefined {
  return valueHover(a, offset, arg.value, undefined, context);
}

function blockHover(a: Analysis, block: Block, offset: number): Hover | undefined {
  if (block.kind === 'unknown') return undefined;
  if (within(block.keyword, offset)) return hover(a, block.keyword, [doc(textOf(a, block.keyword), 'block')]);
  if (block.kind === 'model') {
    if (within(block.name.span, offset)) return hover(a, block.name.span, [`model **${block.name.name}**`, doc('model', 'block')]);
    for (const p of block.params) if (within(p.span, offset)) return hover(a, p.span, [doc('model', 'block')]);
    let index = 0;
    for (const s of block.statements) {
      if (within(s.span, offset)) {
        if (within(s.call.callee.span, offset)) return layerHover(a, s, index, s.call.callee.span);
        if (s.shared && within(s.shared, offset)) return hover(a, s.shared, [doc('shared'), ...layerFacts(a, index)]);
        return argHover(a, offset, s.call, layerArgs(s.call.callee.name) ?? [], 'layer', s.call.callee.name);
      }
      index++;
    }
    return undefined;
  }
  const kind: BlockKind = block.kind;
  if (block.kind === 'schedule' && block.name && within(block.name.span, offset)) return hover(a, block.name.span, [doc(block.name.name, 'schedule')]);
  const keyContext: DocContext = kind === 'schedule' ? 'schedule' : kind === 'ensemble' ? 'ensemble' : 'train';
  for (const e of block.entries) {
    if (!within(e.span, offset)) continue;
    if (e.vary) return varyHover(a, e);
    const key = e.path[0];
    if (within(key.span, offset)) {
      const spec = blockKeys(kind, block.name?.name).find((k) => k.name === key.name)?.spec;
      const owner = kind === 'schedule' ? block.name?.name ?? key.name : key.name;
      return hover(a, key.span, [spec ? describeArg(spec) : undefined, doc(owner, keyContext)]);
    }
    const registry = registryOf(kind, key.name);
    return valueHover(a, offset, e.value, registry?.specs, registry?.context);
  }
  return undefined;
}

export function hoverAt(a: Analysis, offset: number): Hover | null {
  // a vary line's label is part of the line: the members' values first
  const label = a.ast.blocks.some((b) => b.kind === 'ensemble' && within(b.span, offset)) ? undefined : labelHover(a, offset);
  if (label) return label;
  for (const block of a.ast.blocks) if (within(block.span, offset)) return blockHover(a, block, offset) ?? null;
  return null;
}
