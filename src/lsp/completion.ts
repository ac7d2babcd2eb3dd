// Completion from the tokens before the cursor: which block it is in, which calls and lists are open around it,
// and the token just before it (what is being typed, a name's first letters, is left out). Every list comes from
// the registries the checker binds against: layer kinds, their arguments (positional first, in order), the
// values a choice argument takes, the losses, optimizers, data sources, schedules and block keys; labels from
// the file itself (those defined before the statement, and `input`).
import { CompletionItemKind, type CompletionItem } from 'vscode-languageserver';
import type { IToken } from 'chevrotain';
import type { ArgSpec } from '../core/arg-spec.js';
import { FROM_ARG } from '../check/check-model.js';
import { layerKinds, layerKind } from '../layers/registry.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { schedules } from '../vocabulary/schedules.js';
import { netLexer } from '../syntax/tokens.js';
import { modelOf } from './definition.js';
import type { Analysis } from './document.js';
import { blockKeys, describeArg, registryOf, spaces, type BlockKind, type CallSpec } from './vocabulary.js';

interface Frame {
  open: '(' | '[';
  /** the name before `(` */
  callee?: string;
  /** the key this call or list is the value of: `optimizer` for `optimizer: adam(` */
  key?: string;
}

interface Context {
  block?: { kind: BlockKind; name?: string };
  frames: Frame[];
  /** the tokens before the cursor (and before the word being typed), innermost block only */
  before: IToken[];
}

const blockWords: Record<string, BlockKind> = { model: 'model', ensemble: 'ensemble', train: 'train', schedule: 'schedule' };

/** Where the cursor is, read off the tokens before it; undefined inside a comment or a string. */
function contextAt(source: string, offset: number): Context | undefined {
  const lexed = netLexer.tokenize(source.slice(0, offset));
  const comments = lexed.groups.comments ?? [];
  const lastComment = comments[comments.length - 1];
  if (lastComment && lastComment.startOffset + lastComment.image.length >= offset) return undefined;
  let tokens = lexed.tokens;
  const last = tokens[tokens.length - 1];
  if (last?.tokenType.name === 'UnterminatedString' || (last?.tokenType.name === 'StringLiteral' && last.startOffset + last.image.length === offset)) return undefined;
  // the word being typed is not context
  if (last && /^[A-Za-z_]/.test(last.image) && last.startOffset + last.image.length === offset) tokens = tokens.slice(0, -1);
  let depth = 0;
  let block: Context['block'];
  let blockStart = 0;
  let frames: Frame[] = [];
  tokens.forEach((t, i) => {
    const image = t.image;
    if (image === '{') {
      depth++;
      if (depth === 1) {
        // the block's keyword is the first token since the last block closed
        const kw = tokens.slice(blockStart, i).find((x) => blockWords[x.image]);
        const kind = kw ? blockWords[kw.image] : undefined;
        const name = kind === 'schedule' ? tokens[tokens.indexOf(kw!) + 1]?.image : undefined;
        block = kind && { kind, name };
        frames = [];
        blockStart = i + 1;
      }
    } else if (image === '}') {
      depth = Math.max(0, depth - 1);
      if (depth === 0) {
        block = undefined;
        frames = [];
        blockStart = i + 1;
      }
    } else if (image === '(' || image === '[') {
      const prev = tokens[i - 1];
      const callee = image === '(' && prev && /^[A-Za-z_]/.test(prev.image) ? prev.image : undefined;
      const keyAt = callee ? i - 3 : i - 2;
      const key = tokens[keyAt + 1]?.image === ':' && tokens[keyAt] && /^[A-Za-z_]/.test(tokens[keyAt].image) ? tokens[keyAt].image : undefined;
      frames.push({ open: image, callee, key });
    } else if (image === ')' || image === ']') frames.pop();
  });
  if (depth === 0) return { frames: [], before: tokens.slice(blockStart) };
  // a model block's header `model m(input: ...)` is before its `{`; so is everything outside a block
  return { block, frames, before: tokens.slice(blockStart) };
}

const fromArg: ArgSpec = { name: FROM_ARG, type: { kind: 'label' } };

const item = (label: string, kind: CompletionItemKind, detail?: string, sortText?: string): CompletionItem => ({ label, kind, ...(detail ? { detail } : {}), ...(sortText ? { sortText } : {}) });

/** The labels a statement at `offset` may read: those defined by earlier statements, and `input`. */
function labelsBefore(a: Analysis, offset: number): CompletionItem[] {
  const model = modelOf(a.ast);
  const defined = (model?.statements ?? []).filter((s) => s.label && s.span.start + s.span.length < offset).map((s) => s.label!.name);
  return [...new Set(defined), 'input'].map((l) => item(l, CompletionItemKind.Variable, l === 'input' ? "the model's input" : 'label'));
}

const callItems = (specs: readonly CallSpec[], kind: CompletionItemKind) => specs.map((s) => item(s.name, kind, `${s.name}(${s.args.map((x) => x.name).join(', ')})`));

/** A call's arguments: the positional ones first, in their order, then the named ones. */
function argItems(args: readonly ArgSpec[]): CompletionItem[] {
  return args.map((spec, i) => ({ ...item(`${spec.name}:`, CompletionItemKind.Property, describeArg(spec).replace(/`/g, ''), String(i).padStart(3, '0')), insertText: `${spec.name}: ` }));
}

/** What fits as the value of an argument with this spec. */
function valueItems(a: Analysis, spec: ArgSpec | undefined, offset: number): CompletionItem[] {
  if (!spec) return [];
  switch (spec.type.kind) {
    case 'choice':
    case 'choices':
      return spec.type.values.map((v) => item(v, CompletionItemKind.EnumMember, spec.type.kind === 'choice' || spec.type.kind === 'choices' ? spec.type.what : undefined));
    case 'bool':
      return ['true', 'false'].map((v) => item(v, CompletionItemKind.Keyword));
    case 'label':
      return labelsBefore(a, offset);
    default:
      return [];
  }
}

/** The arguments of the call a frame opens: a layer's in the model, a registry's (adam's, csv's) elsewhere. */
function frameArgs(ctx: Context, frame: Frame): readonly ArgSpec[] | undefined {
  if (!frame.callee || !ctx.block) return undefined;
  if (ctx.block.kind === 'model') {
    const kind = layerKind(frame.callee);
    // every layer that reads one input also takes `from: LABEL`
    return kind && (kind.reads === 'previous' ? [...kind.args, fromArg] : kind.args);
  }
  const registry = frame.key ? registryOf(ctx.block.kind, frame.key) : undefined;
  return registry?.specs.find((s) => s.name === frame.callee)?.args;
}

/** Values of a block's key: a registry's names, or what its spec allows. */
function keyValueItems(a: Analysis, ctx: Context, key: string, offset: number): CompletionItem[] {
  const kind = ctx.block!.kind;
  const registry = registryOf(kind, key);
  if (registry) return callItems(registry.specs, CompletionItemKind.Function);
  return valueItems(a, blockKeys(kind, ctx.block!.name).find((k) => k.name === key)?.spec, offset);
}

/** `vary` paths: the optimizer's hyperparameters, and LABEL. of labelled layers with one. */
function varyItems(a: Analysis): CompletionItem[] {
  const optimizer = a.state.program?.train?.optimizer.name ?? 'adam';
  const spec = optimizers.find((o) => o.name === optimizer) ?? optimizers[1];
  const hypers = spec.args.filter((x) => x.hyper).map((x) => item(x.name, CompletionItemKind.Property, `${optimizer}: ${describeArg(x).replace(/`/g, '')}`));
  const labelled = (modelOf(a.ast)?.statements ?? []).filter((s) => s.label && layerKind(s.call.callee.name)?.args.some((x) => x.hyper));
  return [...hypers, ...labelled.map((s) => item(`${s.label!.name}.`, CompletionItemKind.Variable, s.call.callee.name)), item('lr_schedule.', CompletionItemKind.Module, 'an argument of the lr_schedule')];
}

export function completionsAt(a: Analysis, offset: number): CompletionItem[] {
  const source = a.state.source;
  const ctx = contextAt(source, Math.min(Math.max(0, offset), source.length));
  if (!ctx) return [];
  const before = ctx.before;
  const prev = before[before.length - 1]?.image;
  const prev2 = before[before.length - 2]?.image;
  if (!ctx.block) {
    // between blocks: a block keyword; after `schedule`, a schedule kind; in a model's header, `input`
    if (prev === 'schedule') return schedules.map((s) => item(s.name, CompletionItemKind.Class));
    if (before.some((t) => t.image === 'model') && (prev === '(' || prev === ',')) return [item('input:', CompletionItemKind.Property, 'the shape of one example')];
    if (prev === undefined || prev === '}') return Object.keys(blockWords).map((k) => item(k, CompletionItemKind.Keyword));
    return [];
  }
  const frame = ctx.frames[ctx.frames.length - 1];
  if (frame) {
    const args = frameArgs(ctx, frame);
    if (prev === ':' && prev2 && /^[A-Za-z_]/.test(prev2)) {
      if (ctx.block.kind === 'model' || args) return valueItems(a, args?.find((x) => x.name === prev2), offset);
      return [];
    }
    if (frame.open === '[') return frame.key ? keyValueItems(a, ctx, frame.key, offset) : [];
    if (prev === '(' || prev === ',' || (prev !== ':' && prev !== '.')) {
      const items = args ? argItems(args) : [];
      // add and concat read labels, positionally
      if (ctx.block.kind === 'model' && frame.callee && layerKind(frame.callee)?.reads === 'labels') items.unshift(...labelsBefore(a, offset));
      return items;
    }
    return [];
  }
  if (ctx.block.kind === 'model') {
    // the start of a statement: after `{`, a finished call, a label's `=`, or `shared`
    if (prev === 'shared') return layerKinds.filter((k) => k.forward.shared).map((k) => item(k.name, CompletionItemKind.Function, k.summary));
    if (prev === undefined || prev === ')' || prev === '=') {
      return [...layerKinds.map((k) => item(k.name, CompletionItemKind.Function, k.summary)), item('shared', CompletionItemKind.Keyword, 'one set of weights for every member')];
    }
    return [];
  }
  if (prev === 'vary') return varyItems(a);
  if (prev === '.' && before[before.length - 3]?.image === 'vary') {
    const label = prev2;
    if (label === 'lr_schedule') {
      const schedule = a.state.program?.train?.lr_schedule?.name;
      const specs = registryOf('train', 'lr_schedule')!.specs;
      return (specs.find((s) => s.name === schedule)?.args ?? []).filter((x) => x.hyper).map((x) => item(x.name, CompletionItemKind.Property, describeArg(x).replace(/`/g, '')));
    }
    const s = modelOf(a.ast)?.statements.find((x) => x.label?.name === label);
    return (s ? layerKind(s.call.callee.name)?.args ?? [] : []).filter((x) => x.hyper).map((x) => item(x.name, CompletionItemKind.Property, describeArg(x).replace(/`/g, '')));
  }
  if (prev === ':') {
    // a vary line's space, or a key's value
    const colon = before.length - 1;
    const isVary = before.slice(0, colon).reverse().findIndex((t) => t.image === 'vary');
    const key = prev2!;
    if (isVary >= 0 && isVary <= 3 && ctx.block.kind === 'ensemble') return [...callItems(spaces, CompletionItemKind.Function)];
    return keyValueItems(a, ctx, key, offset);
  }
  if (prev === '.') return [];
  // the start of an entry: the block's keys not given yet (and `vary` in the ensemble)
  const given = new Set(before.filter((t, i) => before[i + 1]?.image === ':' && before[i - 1]?.image !== 'vary' && before[i - 1]?.image !== '.').map((t) => t.image));
  const keys = blockKeys(ctx.block.kind, ctx.block.name).filter((k) => !given.has(k.name));
  const items = keys.map((k) => ({ ...item(`${k.name}:`, CompletionItemKind.Property, k.spec ? describeArg(k.spec).replace(/`/g, '') : undefined), insertText: `${k.name}: ` }));
  if (ctx.block.kind === 'ensemble') items.push({ ...item('vary', CompletionItemKind.Keyword, 'vary PATH: SPACE'), insertText: 'vary ' });
  return items;
}
