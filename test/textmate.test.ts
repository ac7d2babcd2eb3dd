// The VS Code extension's TextMate grammar against the lexer it is generated from. The committed file is what
// src/syntax/textmate.ts generates (`npm run tmgrammar` regenerates it); every lexer token has a scope; and
// VS Code's own tokenizer (vscode-textmate on Oniguruma), run with the grammar over every example, every
// examples/errors/ file and seeded mutants of the examples (test/fuzz/mutate.ts; NETC_TM_CASES sets how many), cuts each file into the lexer's tokens, each with a scope
// of its kind. Then vscode-tmgrammar-test checks the scopes of editors/vscode/test/sample.net, a file with
// every construct, and fails on a copy of it with one wrong scope.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, Registry, type IGrammar, type IRawGrammar } from 'vscode-textmate';
import { allTokens, netLexer, WhiteSpace } from '../src/syntax/tokens.js';
import { scopedTokens, scopeName, scopesOf, textmateGrammar, textmateGrammarText, type TmRule } from '../src/syntax/textmate.js';
import { mutate, rng, vocabularyOf } from './fuzz/mutate.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const grammarPath = join(root, 'editors/vscode/syntaxes/netc.tmLanguage.json');
const samplePath = join(root, 'editors/vscode/test/sample.net');
const read = (path: string) => readFileSync(path, 'utf8');
const MUTANTS = Number(process.env.NETC_TM_CASES ?? 600);

function netFiles(rel: string): string[] {
  return readdirSync(join(root, rel))
    .filter((f) => f.endsWith('.net'))
    .sort()
    .map((f) => join(root, rel, f));
}

function scopesIn(rule: TmRule): string[] {
  return [rule.name, ...Object.values(rule.captures ?? {}).map((c) => c.name), ...(rule.patterns ?? []).flatMap(scopesIn)].filter((s): s is string => !!s);
}

describe('the TextMate grammar', () => {
  it('is the committed editors/vscode/syntaxes/netc.tmLanguage.json (npm run tmgrammar regenerates it)', () => {
    expect(read(grammarPath)).toBe(textmateGrammarText());
  });

  it('has a rule and a scope for every lexer token but skipped whitespace, in the lexer order', () => {
    const grammar = textmateGrammar();
    const names = scopedTokens().map((t) => t.name);
    expect(names).toEqual(allTokens.filter((t) => t !== WhiteSpace).map((t) => t.name));
    expect(grammar.patterns.map((p) => p.include)).toEqual(names.map((n) => `#${n}`));
    for (const name of names) {
      const own = scopesOf(name)[0];
      expect(own, name).toMatch(/\.netc$/);
      expect(scopesIn(grammar.repository[name]), name).toContain(own);
    }
  });
});

/** VS Code's tokenizer with a grammar (Oniguruma loaded first). */
async function load(raw: object): Promise<IGrammar> {
  const registry = new Registry({
    onigLib: Promise.resolve({ createOnigScanner: (s) => new oniguruma.OnigScanner(s), createOnigString: (s) => new oniguruma.OnigString(s) }),
    loadGrammar: async (name) => (name === scopeName ? (raw as IRawGrammar) : null),
  });
  return (await registry.loadGrammar(scopeName))!;
}

/** The innermost scope of each character of `text`, as VS Code's tokenizer gives it, and the token it is in. */
function tmTokens(grammar: IGrammar, text: string): { scope: string; start: number; end: number }[] {
  const out: { scope: string; start: number; end: number }[] = [];
  let stack = INITIAL;
  let base = 0;
  for (const line of text.split('\n')) {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      const token = { scope: t.scopes[t.scopes.length - 1], start: base + t.startIndex, end: base + Math.min(t.endIndex, line.length) };
      for (let k = token.start; k < token.end; k++) out[k] = token;
    }
    stack = r.ruleStack;
    base += line.length + 1;
  }
  return out;
}

/** Where VS Code's tokens differ from the lexer's: a lexer token cut otherwise, or scoped as another kind. */
function mismatches(grammar: IGrammar, text: string): string[] {
  const tm = tmTokens(grammar, text);
  const lexed = netLexer.tokenize(text);
  const tokens = [...lexed.tokens, ...(lexed.groups.comments ?? [])];
  const covered = new Set<number>();
  const bad: string[] = [];
  for (const t of tokens) {
    const [start, end] = [t.startOffset, t.startOffset + t.image.length];
    for (let k = start; k < end; k++) covered.add(k);
    const at = tm[start];
    const allowed = scopesOf(t.tokenType.name);
    if (!at || at.start !== start || at.end !== end || !allowed.includes(at.scope)) {
      bad.push(`${t.tokenType.name} ${JSON.stringify(t.image)} at ${start}: ${at ? `${at.scope} [${at.start}, ${at.end})` : 'no token'}`);
    }
  }
  for (let k = 0; k < text.length; k++) {
    if (!covered.has(k) && tm[k] && tm[k].scope !== scopeName) bad.push(`${JSON.stringify(text[k])} at ${k}, in no lexer token: ${tm[k].scope}`);
  }
  return bad;
}

describe("VS Code's tokenizer with the grammar cuts files as the lexer does", () => {
  let grammar: IGrammar;
  beforeAll(async () => {
    const require = createRequire(import.meta.url);
    await oniguruma.loadWASM(readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer as ArrayBuffer);
    grammar = await load(JSON.parse(read(grammarPath)));
  });

  const files = [...netFiles('examples'), ...netFiles('examples/errors'), samplePath];

  it('on every example, every examples/errors/ file and the sample', () => {
    expect(files.length).toBeGreaterThan(30);
    for (const file of files) expect(mismatches(grammar, read(file)), file).toEqual([]);
  });

  it(`on ${MUTANTS} seeded mutants of the examples`, () => {
    const sources = netFiles('examples').map(read);
    const vocabulary = vocabularyOf(sources);
    const random = rng(20261202);
    for (let i = 0; i < MUTANTS; i++) {
      const text = mutate(sources[i % sources.length], random, vocabulary);
      expect(mismatches(grammar, text), `mutant ${i}:\n${text}`).toEqual([]);
    }
  });

  it('and the comparison can fail: with a keyword rule that matches inside names, `models(1)` is cut otherwise', async () => {
    expect(mismatches(grammar, 'x = models(1)\n')).toEqual([]);
    const loose = JSON.parse(read(grammarPath));
    loose.repository.Model = { match: 'model', name: 'keyword.other.model.netc' };
    expect(mismatches(await load(loose), 'x = models(1)\n')).toEqual(['Identifier "models" at 4: keyword.other.model.netc [4, 9)']);
  });
});

describe('vscode-tmgrammar-test', () => {
  const bin = join(root, 'node_modules/.bin/vscode-tmgrammar-test');
  const runOn = (file: string) => spawnSync(bin, ['--config', 'editors/vscode/package.json', file], { cwd: root, encoding: 'utf8' });

  it('passes editors/vscode/test/sample.net, which holds every construct', () => {
    const r = runOn('editors/vscode/test/sample.net');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('sample.net run successfuly');
  });

  it('fails on a copy of the sample that expects one wrong scope', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-tm-'));
    try {
      const wrong = read(samplePath).replace('#     ^^^^^^ entity.name.type.model.netc', '#     ^^^^^^ support.function.netc');
      expect(wrong).not.toBe(read(samplePath));
      writeFileSync(join(dir, 'sample.net'), wrong);
      const r = runOn(join(dir, 'sample.net'));
      expect(r.status).not.toBe(0);
      expect(r.stdout + r.stderr).toContain('missing required scopes: support.function.netc');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
