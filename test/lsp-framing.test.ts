// netc lsp answers or rejects every message (issue 37 item 9): a frame whose Content-Length lies, or whose
// body is not JSON, is logged and answered with a ParseError, and the messages after it are answered as if
// it had not been sent; a document too large to analyse as it is edited gets one warning at once, and the
// server stays responsive.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamMessageReader } from 'vscode-jsonrpc/node';

type Reply = { id?: number | null; result?: unknown; error?: { code: number; message: string }; method?: string; params?: { uri: string; diagnostics: { code: string; message: string }[] } };

describe('netc lsp after a framing error', () => {
  let server: ChildProcessWithoutNullStreams;
  let stderr = '';
  const replies: Reply[] = [];
  const waiters: { match: (r: Reply) => boolean; resolve: (r: Reply) => void }[] = [];
  const next = (match: (r: Reply) => boolean, ms = 5000) =>
    new Promise<Reply>((resolve, reject) => {
      const seen = replies.find(match);
      if (seen) return resolve(seen);
      waiters.push({ match, resolve });
      setTimeout(() => reject(new Error(`no reply in ${ms} ms; stderr: ${stderr}`)), ms);
    });
  const frame = (body: string, length = Buffer.byteLength(body)) => `Content-Length: ${length}\r\n\r\n${body}`;
  const request = (id: number, method: string, params: object) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const hover = (id: number, uri = 'file:///none.net') => request(id, 'textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });

  beforeAll(async () => {
    server = spawn(process.execPath, ['bin/netc.js', 'lsp', '--stdio']);
    server.stderr.on('data', (d) => (stderr += d));
    new StreamMessageReader(server.stdout).listen((m) => {
      const r = m as Reply;
      replies.push(r);
      for (const w of waiters.filter((w) => w.match(r))) w.resolve(r);
    });
    server.stdin.write(frame(request(1, 'initialize', { processId: null, rootUri: null, capabilities: {} })));
    await next((r) => r.id === 1);
  });
  afterAll(() => server?.kill());

  it('a Content-Length longer than its body: a ParseError, then the next request is answered', async () => {
    server.stdin.write(frame(hover(2), 5000) + frame(hover(3)));
    expect((await next((r) => r.id === null && r.error !== undefined)).error!.code).toBe(-32700);
    expect(await next((r) => r.id === 3)).toMatchObject({ id: 3, result: null });
    expect(stderr).toContain('netc lsp: skipped a broken message');
  });

  it('a Content-Length shorter than its body: a ParseError, then the next request is answered', async () => {
    const before = replies.filter((r) => r.id === null).length;
    server.stdin.write(frame(hover(4), 10) + frame(hover(5)));
    expect(await next((r) => r.id === 5)).toMatchObject({ id: 5, result: null });
    expect(replies.filter((r) => r.id === null).length).toBeGreaterThan(before);
  });

  it('a 2.2 MB document gets one warning at once, and a hover on it is answered', async () => {
    const uri = 'file:///huge.net';
    const text = 'model m(input: [4]) {\n' + '  dense(10, activation: relu)\n'.repeat(80_000) + '}\n';
    server.stdin.write(frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'net', version: 1, text } } })));
    const published = await next((r) => r.method === 'textDocument/publishDiagnostics' && r.params?.uri === uri);
    expect(published.params!.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['NET1012', `this document is ${Math.ceil(text.length / 1024)} KB; netc lsp analyses documents of up to 64 KB as they are edited, so it gives no diagnostics, hovers or completions here; run netc check on the file`],
    ]);
    const started = Date.now();
    server.stdin.write(frame(hover(6, uri)));
    expect(await next((r) => r.id === 6)).toMatchObject({ id: 6, result: null });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
