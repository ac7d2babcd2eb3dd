// The VS Code extension, editors/vscode/. Its manifest declares the language `netc` for `.net` files with the
// grammar and the language configuration, whose comment and brackets are the lexer's. The client's choice of
// server (editors/vscode/src/server-command.ts) is run on real folders: the netc.path setting, else the
// workspace's node_modules/.bin/netc, else the PATH; the command it picks in a workspace where netc is
// installed starts `netc lsp` as the client starts it (with --stdio), which answers initialize and hovers
// lenet's first conv2d. `npm run package-vscode` builds the .vsix; the test opens it (a zip) and finds the
// manifest, the grammar, the language configuration and the bundled client, which needs nothing but Node
// and the editor's `vscode` module. VS Code itself is not run here.
import { spawn, spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { Hover, MarkupContent } from 'vscode-languageserver';
import yauzl from 'yauzl';
import { serverCommand, type ServerLookup } from '../editors/vscode/src/server-command.js';
import { Comment, LBracket, LCurly, LParen, RBracket, RCurly, RParen } from '../src/syntax/tokens.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ext = join(root, 'editors/vscode');
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const manifest = json(join(ext, 'package.json'));

describe('the extension manifest and language configuration', () => {
  it('declares the language netc for .net files, with the grammar and the language configuration', () => {
    expect(manifest.contributes.languages).toEqual([expect.objectContaining({ id: 'netc', extensions: ['.net'], configuration: './language-configuration.json' })]);
    const [grammar] = manifest.contributes.grammars;
    expect(grammar).toEqual({ language: 'netc', scopeName: 'source.netc', path: './syntaxes/netc.tmLanguage.json' });
    expect(json(join(ext, grammar.path)).scopeName).toBe('source.netc');
    expect(manifest.main).toBe('./dist/extension.js');
    expect(manifest.version).toBe(json(join(root, 'package.json')).version);
    expect(manifest.contributes.configuration.properties['netc.path']).toMatchObject({ type: 'string', default: '' });
  });

  it('asks for the VS Code that vscode-languageclient and the types it is checked against need', () => {
    const client = json(join(root, 'node_modules/vscode-languageclient/package.json'));
    expect(manifest.engines.vscode).toBe(client.engines.vscode);
    const types = json(join(root, 'node_modules/@types/vscode/package.json')).version.split('.').slice(0, 2).join('.');
    expect(manifest.engines.vscode).toBe(`^${types}.0`);
  });

  it("comments and brackets are the lexer's", () => {
    const config = json(join(ext, 'language-configuration.json'));
    const comment = (Comment.PATTERN as RegExp).source[0];
    expect(config.comments).toEqual({ lineComment: comment });
    const pairs = [LCurly, RCurly, LBracket, RBracket, LParen, RParen].map((t) => t.PATTERN as string);
    const brackets = [0, 2, 4].map((k) => [pairs[k], pairs[k + 1]]);
    expect(config.brackets).toEqual(brackets);
    expect(config.autoClosingPairs.map((p: { open: string; close: string }) => [p.open, p.close])).toEqual([...brackets, ['"', '"']]);
    expect(new RegExp(config.indentationRules.increaseIndentPattern).test('model m(input: [2]) {  # a comment')).toBe(true);
    expect(new RegExp(config.indentationRules.decreaseIndentPattern).test('  }')).toBe(true);
  });
});

describe("the client's choice of netc", () => {
  let dir: string;
  const make = (rel: string) => {
    const file = join(dir, rel);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
    return file;
  };
  const lookup = (over: Partial<ServerLookup>): ServerLookup => ({ setting: '', folders: [], path: '', platform: 'linux', ...over });
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netc-vscode-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("takes the workspace's node_modules/.bin/netc, of the first folder that has one, before the PATH", () => {
    const second = make('b/node_modules/.bin/netc');
    const onPath = make('bin/netc');
    mkdirSync(join(dir, 'a'), { recursive: true });
    const found = serverCommand(lookup({ folders: [join(dir, 'a'), join(dir, 'b')], path: join(dir, 'bin') }));
    expect(found).toEqual({ command: second, args: [], shell: false, from: 'workspace' });
    expect(serverCommand(lookup({ folders: [join(dir, 'a')], path: ['/nowhere', join(dir, 'bin')].join(delimiter) }))).toEqual({ command: onPath, args: [], shell: false, from: 'PATH' });
  });

  it('in a checkout of netc itself (no node_modules/.bin/netc), runs its bin/netc.js with node', () => {
    expect(serverCommand(lookup({ folders: [root] }))).toEqual({ command: 'node', args: [join(root, 'bin/netc.js')], shell: false, from: 'workspace' });
    make('c/bin/netc.js');
    writeFileSync(join(dir, 'c/package.json'), '{"name": "not-netc"}');
    expect(serverCommand(lookup({ folders: [join(dir, 'c')] }))).toEqual({ error: expect.stringContaining('netc was not found') });
  });

  it('takes the netc.path setting first, relative to the first folder; a .js file runs with node', () => {
    const script = make('a/tools/netc.js');
    const found = serverCommand(lookup({ setting: 'tools/netc.js', folders: [join(dir, 'a'), join(dir, 'b')], path: join(dir, 'bin') }));
    expect(found).toEqual({ command: 'node', args: [script], shell: false, from: 'setting' });
    expect(serverCommand(lookup({ setting: join(dir, 'bin/netc'), folders: [join(dir, 'b')] }))).toMatchObject({ command: join(dir, 'bin/netc'), from: 'setting' });
  });

  it('says why when the setting names no file, or netc is nowhere', () => {
    expect(serverCommand(lookup({ setting: 'missing/netc', folders: [join(dir, 'a')] }))).toEqual({ error: `netc.path is set to missing/netc, but ${join(dir, 'a/missing/netc')} is not a file` });
    expect(serverCommand(lookup({ folders: [join(dir, 'a')], path: '/nowhere' }))).toEqual({ error: expect.stringContaining('netc was not found') });
  });

  it("on Windows, finds npm's netc.cmd shim and runs it through the shell", () => {
    const shim = make('w/node_modules/.bin/netc.cmd');
    expect(serverCommand(lookup({ platform: 'win32', pathext: '.EXE;.CMD', folders: [join(dir, 'w')] }))).toEqual({ command: shim, args: [], shell: true, from: 'workspace' });
  });
});

describe('the command the client picks in a workspace with netc installed', () => {
  it('starts netc lsp --stdio, which answers initialize and hovers the first conv2d of lenet.net', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-vscode-ws-'));
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(join(root, 'bin/netc.js'), join(dir, 'node_modules/.bin/netc')); // what npm install netc makes
    const found = serverCommand({ setting: '', folders: [dir], path: process.env.PATH, platform: process.platform });
    expect(found).toMatchObject({ from: 'workspace', command: join(dir, 'node_modules/.bin/netc') });
    if ('error' in found) return;
    const server = spawn(found.command, [...found.args, 'lsp', '--stdio'], { cwd: dir, shell: found.shell });
    const client = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
    client.listen();
    try {
      const init = (await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(dir).href, capabilities: {} })) as { capabilities: Record<string, unknown> };
      expect(init.capabilities).toMatchObject({ hoverProvider: true, documentFormattingProvider: true, completionProvider: expect.anything() });
      void client.sendNotification('initialized', {});
      const uri = pathToFileURL(join(root, 'examples/lenet.net')).href;
      void client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'netc', version: 1, text: readFileSync(join(root, 'examples/lenet.net'), 'utf8') } });
      const hover = (await client.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 2, character: 4 } })) as Hover;
      expect((hover.contents as MarkupContent).value).toContain('output `[28, 28, 6]` per member, 156 parameters per member');
      await client.sendRequest('shutdown');
      const closed = new Promise((resolve) => server.on('close', resolve));
      await client.sendNotification('exit');
      expect(await closed).toBe(0);
    } finally {
      client.dispose();
      server.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The entries of a zip file, each name with its bytes. */
function unzip(path: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const files = new Map<string, Buffer>();
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(files));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('npm run package-vscode', () => {
  let dir: string;
  let files: Map<string, Buffer>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netc-vsix-'));
    const out = join(dir, 'netc.vsix');
    const r = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), 'scripts/package-vscode.ts', '--out', out], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    files = await unzip(out);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a .vsix with the manifest, the grammar, the language configuration, the client and the README', () => {
    const names = [...files.keys()].sort();
    for (const f of ['extension.vsixmanifest', 'extension/package.json', 'extension/syntaxes/netc.tmLanguage.json', 'extension/language-configuration.json', 'extension/dist/extension.js', 'extension/readme.md']) {
      expect(names).toContain(f);
    }
    expect(names.filter((n) => /^extension\/(src|test|e2e|node_modules)\/|\.map$|\.vsix$|tsconfig/.test(n))).toEqual([]);
    const packed = (name: string) => files.get(`extension/${name}`)!.toString('utf8');
    expect(JSON.parse(packed('package.json'))).toMatchObject({ name: 'netc', version: manifest.version, main: manifest.main, contributes: manifest.contributes });
    expect(packed('syntaxes/netc.tmLanguage.json')).toBe(readFileSync(join(ext, 'syntaxes/netc.tmLanguage.json'), 'utf8'));
    expect(packed('language-configuration.json')).toBe(readFileSync(join(ext, 'language-configuration.json'), 'utf8'));
  });

  it("bundles vscode-languageclient into the client: it requires only Node's modules and the editor's vscode", () => {
    const bundle = files.get('extension/dist/extension.js')!.toString('utf8');
    const required = new Set([...bundle.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]));
    const foreign = [...required].filter((m) => m !== 'vscode' && !builtinModules.includes(m.replace(/^node:/, '')));
    expect(foreign).toEqual([]);
    expect(required).toContain('vscode');
    expect(bundle).toContain('Content-Length'); // the JSON-RPC framing of vscode-jsonrpc, inside the bundle
    expect(bundle).toContain('netc.restartServer');
  });
});
