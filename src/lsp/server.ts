// `netc lsp`: the language server. It wires the features (one file each) to a connection the CLI makes over
// stdio. Each open document is compiled by the same pipeline as `netc check`, at most once per version;
// diagnostics are published 150 ms after the last change. Nothing a client sends stops the server: a request
// on a file that is not open, at a position past its end, or in a file that does not parse gets an empty
// answer, and an exception inside a feature (a bug in netc) is logged and answered with nothing.
import { TextDocumentSyncKind, TextDocuments, type Connection, type InitializeResult, type Position } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Host } from '../data/sources.js';
import { NETC_VERSION } from '../version.js';
import { completionsAt } from './completion.js';
import { definition, prepareRename, references, rename } from './definition.js';
import { diagnosticsOf } from './diagnostics.js';
import { analyze, rangeOf, type Analysis } from './document.js';
import { hoverAt } from './hover.js';
import { documentSymbols, formatting } from './symbols.js';

export interface ServerOptions {
  /** the path diagnostics name, and the folder data paths resolve against, for a document's URI */
  pathOf(uri: string): string;
  /** the checker's window on the file system for a document at this path (none: data files are not read) */
  hostFor(path: string): Host | undefined;
  /** milliseconds between the last change and its diagnostics */
  debounceMs?: number;
}

export const DEBOUNCE_MS = 150;

export function startServer(connection: Connection, options: ServerOptions): void {
  const documents = new TextDocuments(TextDocument);
  const cache = new Map<string, { version: number; analysis: Analysis }>();
  const timers = new Map<string, NodeJS.Timeout>();

  const analysisOf = (uri: string): Analysis | undefined => {
    const doc = documents.get(uri);
    if (!doc) return undefined;
    const cached = cache.get(uri);
    if (cached?.version === doc.version) return cached.analysis;
    const path = options.pathOf(uri);
    const analysis = analyze(doc, path, options.hostFor(path));
    cache.set(uri, { version: doc.version, analysis });
    return analysis;
  };

  /** The feature's answer, or `fallback` when the document is not open or the feature threw. */
  function guarded<T>(what: string, uri: string, fallback: T, f: (a: Analysis) => T): T {
    try {
      const a = analysisOf(uri);
      return a ? f(a) : fallback;
    } catch (e) {
      connection.console.error(`netc lsp: ${what} failed on ${uri}: ${(e as Error).stack ?? e}`);
      return fallback;
    }
  }

  /** An offset in the document, clamped to its text (a position past the end is its end). */
  const offsetOf = (a: Analysis, p: Position) => a.doc.offsetAt({ line: Math.max(0, p.line), character: Math.max(0, p.character) });

  const publish = (uri: string) => {
    timers.delete(uri);
    const diagnostics = guarded('diagnostics', uri, undefined, diagnosticsOf);
    if (diagnostics) void connection.sendDiagnostics({ uri, diagnostics });
  };
  const schedule = (uri: string, delay: number) => {
    clearTimeout(timers.get(uri));
    timers.set(uri, setTimeout(() => publish(uri), delay));
  };

  connection.onInitialize(
    (): InitializeResult => ({
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        completionProvider: { triggerCharacters: [':', '(', ',', ' ', '.', '['] },
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        documentFormattingProvider: true,
        documentSymbolProvider: true,
      },
      serverInfo: { name: 'netc', version: NETC_VERSION },
    }),
  );

  documents.onDidOpen((e) => schedule(e.document.uri, 0));
  documents.onDidChangeContent((e) => schedule(e.document.uri, options.debounceMs ?? DEBOUNCE_MS));
  documents.onDidClose((e) => {
    clearTimeout(timers.get(e.document.uri));
    timers.delete(e.document.uri);
    cache.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onHover(({ textDocument, position }) => guarded('hover', textDocument.uri, null, (a) => hoverAt(a, offsetOf(a, position))));
  connection.onCompletion(({ textDocument, position }) => guarded('completion', textDocument.uri, [], (a) => completionsAt(a, offsetOf(a, position))));
  connection.onDefinition(({ textDocument, position }) => guarded('definition', textDocument.uri, null, (a) => definition(a, textDocument.uri, offsetOf(a, position))));
  connection.onReferences(({ textDocument, position, context }) =>
    guarded('references', textDocument.uri, [], (a) => references(a, textDocument.uri, offsetOf(a, position), context.includeDeclaration)),
  );
  connection.onPrepareRename(({ textDocument, position }) =>
    guarded('prepareRename', textDocument.uri, null, (a) => {
      const span = prepareRename(a, offsetOf(a, position));
      return span ? rangeOf(a.doc, span) : null;
    }),
  );
  connection.onRenameRequest(({ textDocument, position, newName }) => {
    const a = analysisOf(textDocument.uri);
    if (!a) return null;
    // a name that cannot be a label is the user's mistake: the client shows the message
    return rename(a, textDocument.uri, offsetOf(a, position), newName);
  });
  connection.onDocumentFormatting(({ textDocument }) => guarded('formatting', textDocument.uri, [], formatting));
  connection.onDocumentSymbol(({ textDocument }) => guarded('symbols', textDocument.uri, [], documentSymbols));

  documents.listen(connection);
  connection.listen();
}
