// Builds the VS Code extension (editors/vscode/) into a .vsix: esbuild bundles the client, with
// vscode-languageclient inside it, into dist/extension.js, and @vscode/vsce packs that with package.json,
// the grammar and the language configuration. Everything comes from the root's devDependencies, so this
// works offline after `npm ci`. `npm run package-vscode [-- --out FILE.vsix]`; install the result with
// `code --install-extension FILE.vsix`.
import { build } from 'esbuild';
import { createVSIX } from '@vscode/vsce';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { textmateGrammarText } from '../src/syntax/textmate.js';

const dir = fileURLToPath(new URL('../editors/vscode/', import.meta.url));
const { version } = JSON.parse(readFileSync(`${dir}package.json`, 'utf8')) as { version: string };
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? `${dir}netc-${version}.vsix`);

// the grammar in the .vsix must be the lexer's of this checkout
if (readFileSync(`${dir}syntaxes/netc.tmLanguage.json`, 'utf8') !== textmateGrammarText()) {
  console.error('editors/vscode/syntaxes/netc.tmLanguage.json is not the lexer\'s grammar: run npm run tmgrammar first');
  process.exit(1);
}

await build({
  entryPoints: [`${dir}src/extension.ts`],
  outfile: `${dir}dist/extension.js`,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'], // the editor provides it
  minify: true,
  logLevel: 'warning',
});
// the client is bundled: the .vsix needs no node_modules (and the extension has no dependencies to list)
await createVSIX({ cwd: dir, packagePath: out, dependencies: false, skipLicense: true, allowMissingRepository: true });
console.log(`wrote ${out}`);
