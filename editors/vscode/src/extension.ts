// The VS Code client of `netc lsp`: it starts the language server over stdio for `.net` files (language id
// `netc`) and restarts it when `netc.path` changes. Colours come from the grammar, brackets and comments from
// the language configuration; everything else (diagnostics, hover, completion, rename, formatting) from
// the server.
import { commands, window, workspace, type ExtensionContext } from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { serverCommand } from './server-command';

let client: LanguageClient | undefined;

function serverOptions(): ServerOptions | string {
  const found = serverCommand({
    setting: workspace.getConfiguration('netc').get<string>('path', ''),
    folders: (workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    path: process.env.PATH,
    platform: process.platform,
    pathext: process.env.PATHEXT,
  });
  if ('error' in found) return found.error;
  // the stdio transport adds --stdio, which netc lsp accepts
  const run = { command: found.command, args: [...found.args, 'lsp'], transport: TransportKind.stdio, options: { shell: found.shell } };
  return { run, debug: run };
}

async function start(): Promise<void> {
  const server = serverOptions();
  if (typeof server === 'string') {
    void window.showErrorMessage(server);
    return;
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: 'netc' }],
    synchronize: { fileEvents: workspace.createFileSystemWatcher('**/*.net') },
  };
  client = new LanguageClient('netc', 'netc language server', server, clientOptions);
  try {
    await client.start();
  } catch (e) {
    void window.showErrorMessage(`netc lsp did not start: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) await running.stop();
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

export async function activate(context: ExtensionContext): Promise<void> {
  context.subscriptions.push(
    commands.registerCommand('netc.restartServer', restart),
    workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('netc.path')) void restart();
    }),
  );
  await start();
}

export function deactivate(): Promise<void> {
  return stop();
}
