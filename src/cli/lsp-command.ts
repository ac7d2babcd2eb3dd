// `netc lsp`: the language server over stdio (src/lsp/server.ts). A document's data paths (csv("..."))
// resolve against its own folder, as netc check resolves them against the file's; a document that is not a
// file (an unsaved buffer) reads no data files. The connection ends the process itself: with 0 on `exit`
// after `shutdown`, with 1 on `exit` without one or when the client closes standard input.
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConnection, ErrorCodes, StreamMessageWriter } from 'vscode-languageserver/node';
import { ResyncingMessageReader } from './lsp-reader.js';
import { startServer } from '../lsp/server.js';
import { fileHost } from './host.js';

/** A file: URI as a path; any other URI (untitled:) as it is. */
export function uriPath(uri: string): string {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}

export function lspCommand(): Promise<number> {
  const writer = new StreamMessageWriter(process.stdout);
  // a broken frame is logged and answered with a ParseError (its id unknown: null), as JSON-RPC asks
  const broken = (why: string) => {
    process.stderr.write(`netc lsp: skipped a broken message: ${why}\n`);
    void writer.write({ jsonrpc: '2.0', id: null, error: { code: ErrorCodes.ParseError, message: `netc lsp: skipped a broken message: ${why}` } } as never);
  };
  const connection = createConnection(new ResyncingMessageReader(process.stdin, broken), writer);
  startServer(connection, { pathOf: uriPath, hostFor: (path) => (isAbsolute(path) ? fileHost(path) : undefined) });
  // serves until the connection exits the process
  return new Promise<number>(() => {});
}
