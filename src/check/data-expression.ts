// A data source written on the command line (`--data 'mnist(limit: 1000)'`), checked like the train
// block's `data:` entry. Diagnostics name the option, `--data(1,COL)`, since there is no file.
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { Messages } from '../diagnostics/messages.js';
import { netLexer } from '../syntax/tokens.js';
import { netParser } from '../syntax/parser.js';
import { buildValue } from '../syntax/build-ast.js';
import { capNesting, maxNesting } from '../syntax/nesting.js';
import { dataSources } from '../data/sources.js';
import { resolveRegistryCall } from './registry-call.js';
import type { CallConfig } from '../core/arg-spec.js';

export function parseDataSource(text: string, name = '--data'): { config?: CallConfig; diagnostics: Diagnostic[] } {
  const sink = new DiagnosticSink(name);
  const lexed = netLexer.tokenize(text);
  for (const e of lexed.errors) sink.report(Messages.UnexpectedCharacter, { start: e.offset, length: 1 }, text[e.offset] ?? '?');
  const capped = capNesting(lexed.tokens);
  for (const t of capped.tooDeep) sink.report(Messages.NestingTooDeep, { start: t.startOffset, length: 1 }, maxNesting);
  netParser.input = capped.tokens;
  const cst = netParser.value();
  const rest = netParser.errors[0];
  if (rest) sink.report(Messages.UnexpectedToken, { start: Number.isFinite(rest.token.startOffset) ? rest.token.startOffset : text.length, length: 1 }, rest.token.image ? `'${rest.token.image}'` : 'end of input', 'a data source such as mnist(limit: 1000)');
  const value = sink.errorCount ? undefined : buildValue(cst);
  if (!value) {
    if (!sink.errorCount) sink.report(Messages.UnexpectedToken, { start: 0, length: text.length }, JSON.stringify(text), 'a data source such as mnist(limit: 1000)');
    return { diagnostics: sink.diagnostics };
  }
  const resolved = resolveRegistryCall('data source', dataSources, value, sink);
  return { config: sink.errorCount ? undefined : resolved?.config, diagnostics: sink.diagnostics };
}

/** A checked data source as the train block would write it, defaults left out: `xor(n: 1000)`, `csv("a.csv", label: ["y"])`. */
export function formatDataSource(config: CallConfig): string {
  const spec = dataSources.find((d) => d.name === config.name);
  const value = (v: unknown): string => (Array.isArray(v) ? `[${v.map(value).join(', ')}]` : typeof v === 'string' ? JSON.stringify(v) : String(v));
  const args = Object.entries(config.args)
    .map(([k, v]) => ({ v, arg: spec?.args.find((a) => a.name === k), k }))
    .filter(({ v, arg }) => v !== undefined && value(v) !== (arg?.default === undefined ? undefined : value(arg.default)))
    .map(({ k, v, arg }) => (arg?.positional ? value(v) : `${k}: ${value(v)}`));
  return `${config.name}(${args.join(', ')})`;
}
