// netc fmt: one canonical layout, idempotent, keeping every comment, and never changing what a file means.
// The golden pairs in test/golden/fmt/ (X.net formatted is X.expected.net) are regenerated with
// `npm run test:update`; read the diff.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../src/pipeline.js';
import { fileHost } from '../src/cli/host.js';
import { formatDiagnostics } from '../src/diagnostics/format.js';
import { printModelIR } from '../src/ir/print.js';
import { printEnsembleIR } from '../src/ensemble/print.js';
import { formatSource } from '../src/syntax/format.js';
import { netLexer } from '../src/syntax/tokens.js';
import { rng } from './fuzz/mutate.js';
import { fuzzWhitespace } from './fuzz/whitespace.js';
import { netc } from './helpers.js';

const root = new URL('../', import.meta.url);
const read = (rel: string) => readFileSync(new URL(rel, root), 'utf8');
const list = (dir: string) => readdirSync(new URL(dir, root)).filter((f) => f.endsWith('.net') && !f.endsWith('.expected.net')).sort();

const examples = list('examples/').map((f) => `examples/${f}`);
const errorInputs = list('examples/errors/').map((f) => `examples/errors/${f}`);
const fmtInputs = list('test/golden/fmt/').map((f) => `test/golden/fmt/${f}`);

/** The canonical text; fails with the diagnostics when the source does not parse. */
function fmt(source: string, path = 'test.net'): string {
  const result = formatSource(source, path);
  if (!result.ok) expect.fail(formatDiagnostics(result.diagnostics, source));
  return result.text;
}

/** What `netc ir` prints after the model passes (`--after verify`) and after widening (`--after verify-ensemble`). */
function ir(source: string, path: string): string {
  const state = compile(source, path, { host: fileHost(path), after: 'verify-ensemble' });
  expect(state.diagnostics.filter((d) => d.category === 'error')).toEqual([]);
  return printModelIR(state.ir!) + printEnsembleIR(state.ensemble!);
}

/** The diagnostics as codes and messages, without positions (they move when the layout does). */
function meaning(source: string, path: string): string[] {
  const { diagnostics } = compile(source, path, { host: fileHost(path), after: 'check' });
  return diagnostics.map((d) => `${d.category} NET${d.code}: ${d.message.replace(/line \d+/g, 'line N')}`);
}

const comments = (source: string) => (netLexer.tokenize(source).groups.comments ?? []).map((t) => t.image.trimEnd());

describe('the examples are formatted', () => {
  it.each(examples)('%s (run netc fmt examples/*.net)', (path) => {
    const source = read(path);
    expect(fmt(source, path)).toBe(source);
  });

  // the untagged ``` blocks that start with a block, after their comments (not a model's statements alone,
  // not a terminal session)
  const startsWithBlock = (block: string) => /^(model|ensemble|train|schedule)\b.*\{/.test(block.replace(/^#.*\n/gm, ''));
  // README.md and every page of docs/ (the README's sections moved there in issue 36)
  const docs = ['README.md', ...readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const docBlocks = docs.flatMap((doc) =>
    [...read(doc).matchAll(/^```\n([\s\S]*?)^```$/gm)].map((m) => [doc, m[1]]).filter(([, b]) => startsWithBlock(b)),
  );
  it('and so are the .net examples of the README and docs/', () => {
    expect(docBlocks.length).toBeGreaterThan(10);
    for (const [doc, block] of docBlocks) expect(fmt(block), doc).toBe(block);
  });
});

describe('golden pairs: test/golden/fmt/X.net formatted is X.expected.net', () => {
  it('there are some', () => expect(fmtInputs.length).toBeGreaterThanOrEqual(3));
  it.each(fmtInputs)('%s', async (path) => {
    const formatted = fmt(read(path), path);
    expect(formatted).not.toBe(read(path));
    await expect(formatted).toMatchFileSnapshot(`../${path.replace(/\.net$/, '.expected.net')}`);
  });
});

describe('formatting changes no meaning and is idempotent', () => {
  it.each(examples)('%s: the same IR', (path) => {
    const source = read(path);
    const messy = fuzzWhitespace(source, rng(1), 1);
    expect(messy).not.toBe(source);
    const formatted = fmt(messy, path);
    expect(formatted).toBe(source);
    expect(ir(formatted, path)).toBe(ir(messy, path));
  });

  it.each([...errorInputs, ...fmtInputs])('%s: the same diagnostics, the same comments, a fixed point', (path) => {
    const source = read(path);
    const result = formatSource(source, path);
    if (!result.ok) {
      // it does not parse: the syntax errors netc check prints, at the same places
      const all = formatDiagnostics(compile(source, path, { host: fileHost(path) }).diagnostics, source);
      for (const d of formatDiagnostics(result.diagnostics, source).split('\n\n')) expect(all).toContain(d);
      return;
    }
    expect(meaning(result.text, path)).toEqual(meaning(source, path));
    expect(comments(result.text)).toEqual(comments(source));
    expect(fmt(result.text, path)).toBe(result.text);
  });

  it('some error inputs parse and some do not', () => {
    const parsed = errorInputs.filter((p) => formatSource(read(p), p).ok);
    expect(parsed.length).toBeGreaterThan(10);
    expect(parsed.length).toBeLessThan(errorInputs.length);
  });
});

describe('fuzzed whitespace gives the same canonical bytes', () => {
  const inputs = [...examples, ...fmtInputs, ...errorInputs.filter((p) => formatSource(read(p), p).ok)];
  it.each(inputs)('%s', (path) => {
    const source = read(path);
    const canonical = fmt(source, path);
    for (let seed = 1; seed <= 6; seed++) {
      const messy = fuzzWhitespace(source, rng(seed * 7919 + path.length));
      expect(fmt(messy, path), `seed ${seed}:\n${messy}`).toBe(canonical);
    }
  });
});

describe('layout', () => {
  it('an empty block stays on one line, and one with a comment does not', () => {
    expect(fmt('ensemble {  }\nensemble {\n# c\n}')).toBe('ensemble {}\n\nensemble {\n  # c\n}\n');
  });
  it('writes \\n line ends and drops trailing whitespace, from \\r\\n input', () => {
    expect(fmt('ensemble { members: 2   # two   \r\n\r\n\r\n  seed: 1 }\r\n')).toBe('ensemble {\n  members: 2   # two\n\n  seed: 1\n}\n');
  });
  it('keeps strings as they are, a # inside them included', () => {
    expect(fmt('train { data: csv( "a # b.csv" , label:"y" ) }')).toBe('train {\n  data: csv("a # b.csv", label: "y")\n}\n');
  });
  it('never joins two tokens into one: a number that ends in a dot keeps its space', () => {
    expect(fmt('schedule pbt { every: 1. e5 }')).toBe('schedule pbt {\n  every: 1. e5\n}\n');
  });
  it('an empty file stays empty, and a file of comments keeps them', () => {
    expect(fmt('')).toBe('');
    expect(fmt('\n\n# one\n\n\n# two\n')).toBe('# one\n\n# two\n');
  });
  it('refuses a file that does not parse, with its diagnostic', () => {
    const source = 'model m(input: [2]) {\n  dense(1,\n}\n';
    const result = formatSource(source, 'bad.net');
    expect(result.ok).toBe(false);
    expect(formatDiagnostics(!result.ok ? result.diagnostics : [], source)).toMatch(/^bad\.net\(3,1\): error NET1/);
  });
});

describe('netc fmt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netc-fmt-'));
  const messy = 'ensemble { members: 2, seed: 1 }\n';
  const tidy = 'ensemble {\n  members: 2\n  seed: 1\n}\n';

  it('--check lists the files that would change, exits 1 and writes nothing; fmt rewrites them; then --check exits 0', async () => {
    const a = join(dir, 'a.net');
    const b = join(dir, 'b.net');
    writeFileSync(a, messy);
    writeFileSync(b, tidy);
    expect(await netc('fmt', '--check', a, b)).toEqual({ code: 1, out: `${a}\n`, err: '' });
    expect(readFileSync(a, 'utf8')).toBe(messy);
    expect(await netc('fmt', a, b)).toEqual({ code: 0, out: '', err: '' });
    expect(readFileSync(a, 'utf8')).toBe(tidy);
    expect(await netc('fmt', '--check', a, b)).toEqual({ code: 0, out: '', err: '' });
  });

  it('leaves a file that does not parse as it is, and prints what netc check prints for it', async () => {
    const bad = join(dir, 'bad.net');
    const good = join(dir, 'good.net');
    writeFileSync(bad, 'ensemble { members: 2 seed 1 }\n');
    writeFileSync(good, messy);
    const r = await netc('fmt', bad, good);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bad}(1,`);
    expect((await netc('check', bad)).err).toContain(r.err.trim());
    expect(readFileSync(bad, 'utf8')).toBe('ensemble { members: 2 seed 1 }\n');
    expect(readFileSync(good, 'utf8')).toBe(tidy);
  });

  it('a file that cannot be read is exit code 1', async () => {
    expect(await netc('fmt', join(dir, 'missing.net'))).toMatchObject({ code: 1, err: expect.stringContaining('no such file') });
  });

  it('is in netc --help', async () => expect((await netc('--help')).out).toMatch(/\n\s+fmt \[options\] <files\.\.\.>/));

  const bin = new URL('../bin/netc.js', import.meta.url).pathname;
  it('reads standard input with -, prints to standard output (the built binary)', () => {
    expect(execFileSync('node', [bin, 'fmt', '-'], { input: messy, encoding: 'utf8' })).toBe(tidy);
    const check = spawnSync('node', [bin, 'fmt', '--check', '-'], { input: messy, encoding: 'utf8' });
    expect([check.status, check.stdout]).toEqual([1, '<stdin>\n']);
  });
});

// gofmt and prettier write a file in place: its inode stays, with its mode, owner and hard links, and a
// symbolic link's target is the file formatted. A read-only file is refused and left alone.
describe('netc fmt rewrites the file itself', () => {
  const messy = 'ensemble { members: 2, seed: 1 }\n';
  const tidy = 'ensemble {\n  members: 2\n  seed: 1\n}\n';
  const fresh = () => mkdtempSync(join(tmpdir(), 'netc-fmt-keep-'));
  const formats = async (...files: string[]) => expect(await netc('fmt', ...files)).toEqual({ code: 0, out: '', err: '' });

  it('keeps a 0600 file 0600, its inode, and leaves no other file beside it', async () => {
    const dir = fresh();
    const f = join(dir, 'private.net');
    writeFileSync(f, messy, { mode: 0o600 });
    chmodSync(f, 0o600);
    const before = statSync(f);
    await formats(f);
    expect(readFileSync(f, 'utf8')).toBe(tidy);
    expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(statSync(f).ino).toBe(before.ino);
    expect(readdirSync(dir)).toEqual(['private.net']);
  });

  it.runIf(process.getuid?.() === 0)("keeps the file's owner and group (run as root, which may give a file to another user)", async () => {
    const f = join(fresh(), 'theirs.net');
    writeFileSync(f, messy);
    chownSync(f, 4321, 4322);
    await formats(f);
    expect(readFileSync(f, 'utf8')).toBe(tidy);
    expect([statSync(f).uid, statSync(f).gid]).toEqual([4321, 4322]);
  });

  it('formats the target of a symbolic link, and the link stays a link', async () => {
    const dir = fresh();
    const target = join(dir, 'real.net');
    const link = join(dir, 'link.net');
    writeFileSync(target, messy);
    symlinkSync('real.net', link);
    await formats(link);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(tidy);
    expect(readdirSync(dir).sort()).toEqual(['link.net', 'real.net']);
  });

  it('keeps hard links: the other name sees the formatted text', async () => {
    const dir = fresh();
    const a = join(dir, 'a.net');
    const b = join(dir, 'b.net');
    writeFileSync(a, messy);
    linkSync(a, b);
    await formats(a);
    expect(readFileSync(b, 'utf8')).toBe(tidy);
    expect(statSync(a).ino).toBe(statSync(b).ino);
    expect(statSync(a).nlink).toBe(2);
  });

  it('refuses a read-only file, exit 1, and leaves it as it is; the other files are formatted', async () => {
    const dir = fresh();
    const locked = join(dir, 'locked.net');
    const other = join(dir, 'other.net');
    writeFileSync(locked, messy);
    chmodSync(locked, 0o444);
    writeFileSync(other, messy);
    const r = await netc('fmt', locked, other);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`netc: cannot write '${locked}': it is read-only (mode 0444); netc fmt leaves it as it is (netc fmt - < ${locked} prints its formatted text)\n`);
    expect(readFileSync(locked, 'utf8')).toBe(messy);
    expect(statSync(locked).mode & 0o777).toBe(0o444);
    expect(readFileSync(other, 'utf8')).toBe(tidy);
    // --check reads only: a read-only file is listed as any other
    expect(await netc('fmt', '--check', locked)).toEqual({ code: 1, out: `${locked}\n`, err: '' });
  });
});
