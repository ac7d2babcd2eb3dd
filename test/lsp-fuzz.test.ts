// netc lsp under random editing: one real server over stdio gets the examples opened, then seeded mutants of
// them (test/fuzz/mutate.ts, the checker's fuzz), truncations and typed characters as didChange (whole texts
// and incremental ranges, as VS Code sends them), and after each change every request an editor makes, at
// random positions and past the end. The server must answer every request within HANG_MS, never report an
// error (a feature that throws is logged as one: window/logMessage, type 1), publish diagnostics inside the
// text, and still be running at the end. NETC_LSP_FUZZ_CASES sets how many changes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { PublishDiagnosticsParams, TextDocumentContentChangeEvent } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { mutate, rng, vocabularyOf } from './fuzz/mutate.js';

const CASES = Number(process.env.NETC_LSP_FUZZ_CASES ?? 100);
const HANG_MS = 5000;
const root = fileURLToPath(new URL('..', import.meta.url));
const examples = readdirSync(new URL('../examples/', import.meta.url))
  .filter((f) => f.endsWith('.net'))
  .sort()
  .map((f) => ({ uri: pathToFileURL(`${root}examples/${f}`).href, text: readFileSync(new URL(`../examples/${f}`, import.meta.url), 'utf8') }));

let server: ChildProcessWithoutNullStreams;
let client: MessageConnection;
let exited: number | null | undefined;
const errors: string[] = [];
/** each document's last diagnostics, and when they came */
const published = new Map<string, { at: number; params: PublishDiagnosticsParams }>();

beforeAll(async () => {
  server = spawn(process.execPath, ['bin/netc.js', 'lsp', '--stdio'], { cwd: root });
  server.on('exit', (code) => (exited = code));
  server.stderr.on('data', (d) => errors.push(`stderr: ${d}`));
  client = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
  client.onNotification('window/logMessage', (m: { type: number; message: string }) => {
    if (m.type === 1) errors.push(m.message);
  });
  client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
    published.set(p.uri, { at: performance.now(), params: p });
  });
  client.listen();
  await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} });
  void client.sendNotification('initialized', {});
});
afterAll(() => {
  client?.dispose();
  server?.kill();
});

/** The answer, or a failure naming the request when it is an error or there is none within HANG_MS. */
function answered<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${HANG_MS} ms`)), HANG_MS)));
  const answer = p.catch((e: Error) => {
    throw new Error(`${what}: answered with an error: ${e.message}`);
  });
  return Promise.race([answer, hang]).finally(() => clearTimeout(timer));
}

/** The next change to a document: a mutant, a truncation, or a few characters typed somewhere. */
function nextChange(doc: TextDocument, source: string, random: () => number, vocabulary: string[]): TextDocumentContentChangeEvent {
  const text = doc.getText();
  const at = doc.positionAt(Math.floor(random() * (text.length + 1)));
  switch (Math.floor(random() * 4)) {
    case 0:
      return { text: mutate(source, random, vocabulary) };
    case 1: // cut the file here, as if the rest were not typed yet
      return { range: { start: at, end: doc.positionAt(text.length) }, text: '' };
    case 2: // type a token or a bracket here
      return { range: { start: at, end: at }, text: vocabulary[Math.floor(random() * vocabulary.length)] + (random() < 0.3 ? '(' : ' ') };
    default: // back to the example, so that later edits start from a file that checks
      return { text: source };
  }
}

/** Every request an editor makes about a document, at one position. */
function requests(uri: string, position: { line: number; character: number }) {
  const at = { textDocument: { uri }, position };
  return [
    ['hover', client.sendRequest('textDocument/hover', at)],
    ['completion', client.sendRequest('textDocument/completion', at)],
    ['definition', client.sendRequest('textDocument/definition', at)],
    ['references', client.sendRequest('textDocument/references', { ...at, context: { includeDeclaration: true } })],
    ['prepareRename', client.sendRequest('textDocument/prepareRename', at)],
    ['rename', client.sendRequest('textDocument/rename', { ...at, newName: 'fuzz_renamed_label' })],
    ['symbols', client.sendRequest('textDocument/documentSymbol', { textDocument: { uri } })],
    ['formatting', client.sendRequest('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })],
  ] as const;
}

it(`answers every request through ${CASES} random edits of the examples, and never fails`, async () => {
  const docs = examples.map((e) => TextDocument.create(e.uri, 'netc', 1, e.text));
  for (const e of examples) void client.sendNotification('textDocument/didOpen', { textDocument: { uri: e.uri, languageId: 'netc', version: 1, text: e.text } });
  const random = rng(20261202);
  const vocabulary = vocabularyOf(examples.map((e) => e.text));
  const changedAt = new Map<string, number>();
  let answers = 0;
  for (let i = 0; i < CASES; i++) {
    const k = i % docs.length;
    const change = nextChange(docs[k], examples[k].text, random, vocabulary);
    docs[k] = TextDocument.update(docs[k], [change], docs[k].version + 1);
    const doc = docs[k];
    void client.sendNotification('textDocument/didChange', { textDocument: { uri: doc.uri, version: doc.version }, contentChanges: [change] });
    changedAt.set(doc.uri, performance.now());
    const inside = doc.positionAt(Math.floor(random() * (doc.getText().length + 1)));
    const past = { line: doc.lineCount + Math.floor(random() * 5), character: Math.floor(random() * 200) };
    const pending = [inside, past].flatMap((position) =>
      requests(doc.uri, position).map(([what, p]) => answered(`case ${i}: ${what} at ${position.line}:${position.character} of\n${doc.getText()}`, p)),
    );
    answers += (await Promise.all(pending)).length;
    expect(errors, `case ${i}:\n${doc.getText()}`).toEqual([]);
  }
  // each document's last text gets its diagnostics (150 ms after its last change), every range inside it
  const deadline = performance.now() + HANG_MS;
  const fresh = () => docs.every((d) => (published.get(d.uri)?.at ?? -1) > changedAt.get(d.uri)!);
  while (!fresh() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(fresh(), 'diagnostics of the last changes').toBe(true);
  for (const doc of docs) {
    const end = doc.positionAt(doc.getText().length);
    for (const d of published.get(doc.uri)!.params.diagnostics) {
      expect(d.code, doc.uri).toMatch(/^NET\d{4}$/);
      const inside = d.range.end.line < end.line || (d.range.end.line === end.line && d.range.end.character <= end.character);
      expect(inside, `${doc.uri}: ${JSON.stringify(d.range)} past ${JSON.stringify(end)}\n${doc.getText()}`).toBe(true);
    }
  }
  expect(answers).toBe(CASES * 16);
  expect(exited).toBeUndefined();
  expect(await client.sendRequest('textDocument/documentSymbol', { textDocument: { uri: docs[0].uri } })).toBeInstanceOf(Array);
}, Math.max(120_000, CASES * 400));

it('and fails a case whose request is answered with an error: a rename of a label to a name that cannot be one', async () => {
  const residual = examples.find((e) => e.uri.endsWith('/residual.net'))!;
  void client.sendNotification('textDocument/didChange', { textDocument: { uri: residual.uri, version: 100000 }, contentChanges: [{ text: residual.text }] });
  const at = { textDocument: { uri: residual.uri }, position: { line: 3, character: 2 } }; // h = dense(32, ...)
  expect(await answered('prepareRename', client.sendRequest('textDocument/prepareRename', at))).toMatchObject({ start: { line: 3, character: 2 } });
  await expect(answered('rename', client.sendRequest('textDocument/rename', { ...at, newName: '1bad' }))).rejects.toThrow(/^rename: answered with an error: /);
});
