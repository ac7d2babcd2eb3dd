// netc lsp. In process: the feature functions over real files (every examples/errors/ file's diagnostics are
// the lines netc check prints, in its baseline), and the docs table is docs/language.md's today. Over stdio:
// one real server (`node bin/netc.js lsp`, the built CLI) driven as an editor drives it, with JSON-RPC and
// Content-Length framing: initialize, didOpen, didChange, hover, completion, definition, references, rename,
// formatting, symbols, and requests it must survive (past the end, a file not open, a file that does not parse).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { CompletionItem, Diagnostic, DocumentSymbol, Hover, Location, MarkupContent, PublishDiagnosticsParams, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { escapeControls } from '../src/diagnostics/format.js';
import { fileHost } from '../src/cli/host.js';
import { analyze, type Analysis } from '../src/lsp/document.js';
import { diagnosticsOf } from '../src/lsp/diagnostics.js';
import { hoverAt } from '../src/lsp/hover.js';
import { completionsAt } from '../src/lsp/completion.js';
import { definition, references, rename } from '../src/lsp/definition.js';
import { documentSymbols, formatting } from '../src/lsp/symbols.js';
import { docMarkdown, extractDocs } from '../src/lsp/language-docs.js';
import { languageDocs } from '../src/lsp/language-docs.generated.js';
import { compile } from '../src/pipeline.js';
import { formatSource } from '../src/syntax/format.js';
import { parameterCount } from '../src/ir/model-ir.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (rel: string) => readFileSync(new URL(`../${rel}`, import.meta.url), 'utf8');
const uriOf = (rel: string) => pathToFileURL(`${root}${rel}`).href;

function analysisOf(rel: string, text = read(rel)): Analysis {
  const path = `${root}${rel}`;
  return analyze(TextDocument.create(uriOf(rel), 'net', 1, text), rel, fileHost(path));
}
/** The offset of the `nth` occurrence of `needle` in the text, plus `extra`. */
function offsetOf(text: string, needle: string, extra = 0, nth = 0): number {
  let at = -1;
  for (let k = 0; k <= nth; k++) at = text.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`'${needle}' is not in the text`);
  return at + extra;
}
const markdown = (h: Hover | null) => (h?.contents as MarkupContent | undefined)?.value ?? '';

describe('netc lsp, in process', () => {
  const errorFiles = readdirSync(new URL('../examples/errors/', import.meta.url)).filter((f) => f.endsWith('.net')).sort();

  it('gives every examples/errors/ file the diagnostics netc check prints (its baseline): lines, columns, codes, messages', () => {
    expect(errorFiles.length).toBeGreaterThanOrEqual(8);
    for (const file of errorFiles) {
      const rel = `examples/errors/${file}`;
      const baseline = read(rel.replace(/\.net$/, '.errors.txt'));
      const printed = [...baseline.matchAll(/^examples\/errors\/[^(]+\((\d+),(\d+)\): (error|warning) (NET\d+): (.*)$/gm)].map((m) => `${m[1]}:${m[2]} ${m[3]} ${m[4]} ${m[5]}`);
      const ours = diagnosticsOf(analysisOf(rel)).map((d) => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.severity === 1 ? 'error' : 'warning'} ${d.code} ${escapeControls(String(d.message))}`);
      expect(printed.length, rel).toBeGreaterThan(0);
      expect(ours.slice(0, printed.length), rel).toEqual(printed);
    }
  });

  it('hovers examples/lenet.net: its first conv2d is [28, 28, 6] with 156 parameters per member, fused over 30 members', () => {
    const a = analysisOf('examples/lenet.net');
    const ir = compile(read('examples/lenet.net'), 'lenet.net').ir!;
    const conv = ir.ops[1];
    const params = ir.params.filter((p) => conv.params.includes(p.name)).reduce((n, p) => n + p.shape.reduce((x, y) => x * y, 1), 0);
    expect([conv.shape, params, parameterCount(ir)]).toEqual([[28, 28, 6], 156, 61706]);
    const text = markdown(hoverAt(a, offsetOf(a.state.source, 'conv2d(6', 2)));
    expect(text).toContain('output `[28, 28, 6]` per member, 156 parameters per member');
    expect(text).toContain('`[N=30, B, 28, 28, 6]`');
    expect(text).toContain('`conv2d_1/kernel` `[5, 5, 1, 180]` (columns)');
    expect(text).toContain('docs/language.md, Layers');
    // the docs row renders as a markdown table: VS Code shows a lone `| a | b |` row as text with its pipes
    expect(text).toContain(['| layer | arguments (defaults) | notes |', '|---|---|---|', '| `conv2d(filters, kernel:, stride:, padding:)` |'].join('\n'));
    // a vary line: the first members' values; a train key and an optimizer: their docs lines
    const vary = markdown(hoverAt(a, offsetOf(a.state.source, 'vary lr', 2)));
    expect(vary.match(/- member \d+: [0-9.e-]+/g)).toHaveLength(8);
    expect(vary).toContain('(30 members)');
    expect(markdown(hoverAt(a, offsetOf(a.state.source, 'validation', 1)))).toContain('| key | default | meaning |\n|---|---|---|\n| `validation` | `0` |');
    expect(markdown(hoverAt(a, offsetOf(a.state.source, 'adam', 1)))).toContain('| `adam(lr, beta1, beta2, epsilon)` |');
    expect(markdown(hoverAt(a, offsetOf(a.state.source, 'activation: relu', 13)))).toContain('### Activations'.slice(4));
    expect(hoverAt(a, 0)).toBeNull(); // a comment
  });

  it('hovers a label with the statement that defines it, and finds its definition, references and renames it', () => {
    const a = analysisOf('examples/residual.net');
    const src = a.state.source;
    // h is defined on line 4 and read by add(h, r2)
    const uses = [src.indexOf('h = '), src.indexOf('add(h') + 4];
    const at = uses[1];
    expect(markdown(hoverAt(a, at))).toContain('label **h**, line 4:');
    expect(markdown(hoverAt(a, at))).toContain('dense(32, activation: relu)');
    const def = definition(a, 'u', at) as Location;
    expect(a.doc.offsetAt(def.range.start)).toBe(uses[0]);
    expect(references(a, 'u', at, true).map((l) => a.doc.offsetAt(l.range.start))).toEqual(uses);
    expect(references(a, 'u', at, false).map((l) => a.doc.offsetAt(l.range.start))).toEqual([uses[1]]);
    const edit = rename(a, 'u', at, 'renamed') as WorkspaceEdit;
    const renamed = TextDocument.applyEdits(a.doc, edit.changes!.u);
    expect(compile(renamed, 'r.net').diagnostics.filter((d) => d.category === 'error')).toEqual([]);
    expect(() => rename(a, 'u', at, 'train')).toThrow(/keyword/);
  });

  it('completes from the registries', () => {
    const text = `model m(input: [4]) {\n  h = dense(8, activation: relu)\n  d = dropout(0.1)\n  s = add(h, )\n  \n}\nensemble {\n  vary d.\n}\ntrain {\n  loss: \n  optimizer: adam(lr: 0.1, )\n}\n`;
    const a = analyze(TextDocument.create('untitled:x', 'net', 1, text), 'x.net', undefined);
    const labels = (needle: string, extra = 0) => completionsAt(a, offsetOf(text, needle, needle.length + extra)).map((c: CompletionItem) => c.label);
    expect(labels('activation: ')).toEqual(['linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'gelu', 'elu', 'leaky_relu', 'swish']);
    expect(labels('h = dense(8, ')).toEqual(['units:', 'activation:', 'bias:', 'init:', 'bias_init:', 'from:']);
    expect(labels('add(h, ')).toEqual(['h', 'd', 'input']);
    expect(labels('s = add(h, )\n  ')).toEqual(expect.arrayContaining(['dense', 'conv2d', 'concat', 'shared']));
    expect(labels('vary d.')).toEqual(['rate']);
    expect(labels('loss: ')).toContain('sparse_categorical_crossentropy');
    expect(labels('adam(lr: 0.1, ')).toEqual(['lr:', 'beta1:', 'beta2:', 'epsilon:', 'clipnorm:']);
    expect(labels('ensemble {')).toEqual(['members:', 'seed:', 'split:', 'vary']);
  });

  it('formats as netc fmt does, and lists the blocks and labelled layers', () => {
    const messy = read('examples/forum.net').replace(/\n  /g, '\n      ').replace('members: 15\n', 'members: 15,');
    const a = analyze(TextDocument.create('untitled:f', 'net', 1, messy), 'f.net', undefined);
    const edits = formatting(a) as TextEdit[];
    expect(TextDocument.applyEdits(a.doc, edits)).toBe((formatSource(messy) as { text: string }).text);
    expect(formatting(analysisOf('examples/forum.net'))).toEqual([]);
    const symbols = documentSymbols(analysisOf('examples/residual.net')) as DocumentSymbol[];
    expect(symbols.map((s) => s.name)).toEqual(expect.arrayContaining(['ensemble', 'train']));
    expect(symbols[0].name).toMatch(/^model /);
    expect(symbols[0].children!.length).toBeGreaterThan(0);
  });

  it('is generated from docs/language.md as it is today (npm run lsp-docs)', () => {
    expect(languageDocs).toEqual(extractDocs(read('docs/language.md')));
  });

  it('keeps each table row with its own table\'s header, so that a hover shows it as a table', () => {
    const page = ['## A', '| layer | notes |', '|---|---|', '| `a(x)` | one |', '| `b()` | two |', '', '- `c` a bullet', '', '| key | default | meaning |', '|:--|--:|---|', '| `d` | `0` | three |'].join('\n');
    const docs = extractDocs(page);
    expect(docs.map((d) => [d.names[0], d.header])).toEqual([['a', '| layer | notes |'], ['b', '| layer | notes |'], ['c', undefined], ['d', '| key | default | meaning |']]);
    expect(docMarkdown(docs[1])).toBe('| layer | notes |\n|---|---|\n| `b()` | two |');
    expect(docMarkdown(docs[2])).toBe('- `c` a bullet');
  });
});

/** A client over the server's stdio, as an editor has one. */
describe('netc lsp, over stdio', () => {
  let server: ChildProcessWithoutNullStreams;
  let client: MessageConnection;
  const published: PublishDiagnosticsParams[] = [];
  const waiters: { uri: string; version?: number; resolve: (p: PublishDiagnosticsParams) => void }[] = [];
  let stderr = '';

  /** The next diagnostics published for `uri` (after this call). */
  const nextDiagnostics = (uri: string) => new Promise<PublishDiagnosticsParams>((resolve) => waiters.push({ uri, resolve }));
  const open = (rel: string, text = read(rel), uri = uriOf(rel)) => {
    const next = nextDiagnostics(uri);
    void client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'net', version: 1, text } });
    return next;
  };
  const request = <T>(method: string, uri: string, line: number, character: number, extra: object = {}) =>
    client.sendRequest(method, { textDocument: { uri }, position: { line, character }, ...extra }) as Promise<T>;

  beforeAll(async () => {
    server = spawn(process.execPath, ['bin/netc.js', 'lsp', '--stdio'], { cwd: root });
    server.stderr.on('data', (d) => (stderr += d));
    client = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
    client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      published.push(p);
      const k = waiters.findIndex((w) => w.uri === p.uri);
      if (k >= 0) waiters.splice(k, 1)[0].resolve(p);
    });
    client.listen();
    const init = (await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} })) as { capabilities: Record<string, unknown> };
    expect(init.capabilities).toMatchObject({ hoverProvider: true, definitionProvider: true, documentFormattingProvider: true });
    void client.sendNotification('initialized', {});
  });
  afterAll(() => {
    client?.dispose();
    server?.kill();
  });

  it('publishes diagnostics on open at the lines netc check gives, and again after a change', async () => {
    const rel = 'examples/errors/labels.net';
    const first = await open(rel);
    expect(first.diagnostics.map((d: Diagnostic) => [d.range.start.line + 1, d.code])).toEqual(
      expect.arrayContaining([
        [4, 'NET2009'],
        [5, 'NET2010'],
        [7, 'NET2008'],
      ]),
    );
    for (const f of ['bad-arguments', 'shapes', 'syntax']) {
      const d = await open(`examples/errors/${f}.net`);
      const lines = [...read(`examples/errors/${f}.errors.txt`).matchAll(/^[^\s(]+\((\d+),\d+\): \w+ (NET\d+)/gm)].map((m) => [Number(m[1]), m[2]]);
      expect(d.diagnostics.map((x) => [x.range.start.line + 1, x.code]).slice(0, lines.length), f).toEqual(lines);
    }
    // the change fixes line 4 (add(h, g) reads h twice): its NET2009 goes, after the debounce
    const uri = uriOf(rel);
    const next = nextDiagnostics(uri);
    const started = Date.now();
    void client.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 3, character: 13 }, end: { line: 3, character: 14 } }, text: 'h' }],
    });
    const after = await next;
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(after.diagnostics.map((d) => d.code)).not.toContain('NET2009');
    expect(after.diagnostics.map((d) => d.code)).toContain('NET2010');
  });

  it('resolves a relative csv path against the file folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-lsp-'));
    try {
      writeFileSync(join(dir, 'points.csv'), 'y,x\n1,2\n0,3\n');
      const text = `model m(input: [1]) {\n  dense(1)\n}\ntrain {\n  data: csv("points.csv", label: "y")\n  loss: mse\n  epochs: 1\n}\n`;
      const beside = await open('', text, pathToFileURL(join(dir, 'beside.net')).href);
      expect(beside.diagnostics).toEqual([]);
      const elsewhere = await open('', text, pathToFileURL(join(dir, 'sub', 'elsewhere.net')).href);
      expect(elsewhere.diagnostics.map((x) => x.message).join('\n')).toContain('cannot read the csv file "points.csv"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hovers, completes, finds definitions and references, renames, formats and lists symbols', async () => {
    const lenet = uriOf('examples/lenet.net');
    await open('examples/lenet.net');
    const hover = await request<Hover>('textDocument/hover', lenet, 2, 4);
    expect(markdown(hover)).toContain('output `[28, 28, 6]` per member, 156 parameters per member');
    const completion = await request<CompletionItem[]>('textDocument/completion', lenet, 2, 50);
    expect(completion.map((c) => c.label)).toContain('relu');

    const rel = 'examples/residual.net';
    const uri = uriOf(rel);
    const src = read(rel);
    await open(rel);
    // h is defined on line 4 and read by add(h, r2)
    const doc = TextDocument.create(uri, 'net', 1, src);
    const use = doc.positionAt(src.indexOf('add(h') + 4);
    const def = await request<Location>('textDocument/definition', uri, use.line, use.character);
    expect(doc.offsetAt(def.range.start)).toBe(src.indexOf('h = '));
    const refs = await request<Location[]>('textDocument/references', uri, use.line, use.character, { context: { includeDeclaration: true } });
    expect(refs.length).toBeGreaterThan(1);
    const edit = await request<WorkspaceEdit>('textDocument/rename', uri, use.line, use.character, { newName: 'trunk2' });
    expect(edit.changes![uri]).toHaveLength(refs.length);

    const messy = src.replace(/\n  /g, '\n    ');
    const messyUri = 'untitled:messy.net';
    await open('messy', messy, messyUri);
    const edits = (await client.sendRequest('textDocument/formatting', { textDocument: { uri: messyUri }, options: { tabSize: 2, insertSpaces: true } })) as TextEdit[];
    expect(TextDocument.applyEdits(TextDocument.create(messyUri, 'net', 1, messy), edits)).toBe(src);
    const symbols = (await client.sendRequest('textDocument/documentSymbol', { textDocument: { uri } })) as DocumentSymbol[];
    expect(symbols[0].name).toMatch(/^model /);
  });

  it('survives requests past the end, on files not open, and on files that do not parse', async () => {
    const lenet = uriOf('examples/lenet.net');
    for (const method of ['textDocument/hover', 'textDocument/completion', 'textDocument/definition']) {
      await request(method, lenet, 10_000, 10_000);
      await request(method, lenet, 2, 10_000);
      expect(await request(method, 'file:///nowhere/not-open.net', 0, 0)).toEqual(method.endsWith('completion') ? [] : null);
    }
    const broken = 'model m(input: [4]) {\n  dense(8, activation: \n  h = (\n}\ntrain { loss: [[[ }\n';
    const brokenUri = 'untitled:broken.net';
    const d = await open('broken', broken, brokenUri);
    expect(d.diagnostics.length).toBeGreaterThan(0);
    for (let line = 0; line < 6; line++) {
      for (let character = 0; character < 24; character += 3) {
        await request('textDocument/hover', brokenUri, line, character);
        await request('textDocument/completion', brokenUri, line, character);
        await request('textDocument/definition', brokenUri, line, character);
      }
    }
    expect(await client.sendRequest('textDocument/formatting', { textDocument: { uri: brokenUri }, options: { tabSize: 2, insertSpaces: true } })).toEqual([]);
    // still serving
    expect(markdown(await request<Hover>('textDocument/hover', lenet, 2, 4))).toContain('156 parameters');
    expect(server.exitCode).toBeNull();
    expect(stderr).toBe('');
  });

  it('exits 0 on shutdown then exit', async () => {
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    await client.sendRequest('shutdown');
    void client.sendNotification('exit');
    expect(await exited).toBe(0);
  });
});
