// netc compile: the emitted module's text (golden files, purity), the command, and the module run on its own,
// which must train to the very weights `netc train` trains. Golden files: `npm run test:update`, then read the diff.
import { spawnNode } from './helpers.js';
import { paramBytes } from './run-files.js';
import { runtimePopulation } from './compiled.js';
import fs, { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compile, type CompileOptions } from '../src/pipeline.js';
import { fileHost } from '../src/cli/host.js';
import { main } from '../src/cli/main.js';
import { printEnsembleIR } from '../src/ensemble/print.js';
import { emitInfo, emitModule } from '../src/emit/emit.js';
import { formatModule } from '../src/emit/format.js';
import * as tfjs from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import type { TF } from '../src/kernels/tf.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

// the emitter traces the step on TF.js's cpu backend
const tf = tfjs as unknown as TF;
await tf.setBackend('cpu');

const root = fileURLToPath(new URL('../', import.meta.url));
const examples = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.net')).sort();

function compiled(path: string, options: CompileOptions = {}) {
  const state = compile(readFileSync(join(root, path), 'utf8'), path, { host: fileHost(join(root, path)), ...options });
  expect(state.diagnostics).toEqual([]);
  return state;
}

/** The module for `path`, as `netc compile path -o <name>.ts` run from the repository root writes it. */
async function emitted(path: string, options: CompileOptions = {}, out = path.replace(/^examples\//, '').replace(/\.net$/, '.ts')) {
  const state = compiled(path, options);
  return formatModule(emitModule(state.run!, state.step!, emitInfo(path, out, '/repo', tf)));
}

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

/**
 * What decides whether the module runs as CommonJS (tsx, in a package without "type": "module") and in a
 * browser: an await outside every function; the modules it imports statically (the core: TF.js types and
 * netc/kernels only); import() of a name a bundler would follow (none); and where it loads the others by
 * nodeImport() (netc, node:*: only in the Node part).
 */
function moduleFormatFacts(text: string) {
  const file = ts.createSourceFile('module.ts', text, ts.ScriptTarget.ES2022, true);
  const topLevelAwaits: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) topLevelAwaits.push(node.getText().slice(0, 80));
    ts.forEachChild(node, visit);
  };
  visit(file);
  // every import() call, anywhere: its argument as written
  const importCalls: string[] = [];
  const calls = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) importCalls.push(node.arguments[0].getText());
    ts.forEachChild(node, calls);
  };
  calls(file);
  const imports = file.statements.filter(ts.isImportDeclaration);
  const specifier = (d: ts.ImportDeclaration) => (d.moduleSpecifier as ts.StringLiteral).text;
  const nodePart = text.indexOf('// ---- Node only');
  const dynamic = [...text.matchAll(/\bnodeImport<[^>]*>\(\s*'([^']+)'\s*\)/g)];
  return {
    topLevelAwaits,
    valueImports: imports.filter((d) => !d.importClause?.isTypeOnly).map(specifier),
    typeImports: imports.filter((d) => d.importClause?.isTypeOnly).map(specifier),
    importCalls,
    coreDynamicImports: dynamic.filter((m) => nodePart < 0 || m.index! < nodePart).map((m) => m[1]),
    nodeDynamicImports: [...new Set(dynamic.filter((m) => m.index! > nodePart).map((m) => m[1]))].sort(),
  };
}

// a folder inside the repository, so that the modules' `import ... from 'netc'` resolves to this package
const scratch = join(root, '.emit-tmp');
mkdirSync(scratch, { recursive: true });
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(scratch, prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the emitted module', () => {
  const cases: { file: string; options?: CompileOptions; golden: string }[] = [
    ...examples.map((f) => ({ file: `examples/${f}`, golden: f.replace(/\.net$/, '.ts.txt') })),
    { file: 'examples/residual.net', options: { lowering: 'blockdiag' }, golden: 'residual.blockdiag.ts.txt' },
    { file: 'examples/mnist-mlp.net', options: { lowering: 'loop', members: 3 }, golden: 'mnist-mlp.loop.ts.txt' },
  ];
  for (const { file, options, golden } of cases) {
    it(`${file}${options ? ` (${JSON.stringify(options)})` : ''}`, async () => {
      const text = await emitted(file, options, golden.replace(/\.txt$/, ''));
      // no top-level await; the core imports TF.js's types and netc/kernels only (a browser can bundle it);
      // netc and Node's modules are loaded in the Node part alone, by a name no bundler follows
      expect(moduleFormatFacts(text)).toEqual({
        topLevelAwaits: [],
        valueImports: ['netc/kernels'],
        typeImports: ['@tensorflow/tfjs', 'netc/kernels'],
        importCalls: ['name'],
        coreDynamicImports: [],
        nodeDynamicImports: ['netc', 'node:url', 'node:util'],
      });
      await expect(text).toMatchFileSnapshot(`golden/emit/${golden}`);
      // the math is written out: no interpreter calls, and every op's comment with the shape printEnsembleIR shows
      expect(text).not.toMatch(/pass\.op\(|\.step\(\{ kind/);
      const ensemble = compiled(file, options).ensemble!;
      const shown = printEnsembleIR(ensemble)
        .split('\n')
        .map((line) => /^ {2}%\d+ = .* -> (.*) (shared|per member)$/.exec(line))
        .filter((m) => m !== null);
      expect(shown).toHaveLength(ensemble.ops.length);
      const forward = text.slice(text.indexOf('export function forward'));
      for (const [, value, where] of shown) expect(forward).toContain(`-> ${value}, ${where}\n`);
    });
  }

  it('is pure: the same input gives the same text, without the clock, the files or the working directory', () => {
    const state = compiled('examples/mnist-mlp.net');
    const info = emitInfo('examples/mnist-mlp.net', 'out/mlp.ts', '/repo', tf);
    const before = JSON.stringify([state.ensemble, state.program!.ensemble, state.program!.train]);
    const first = emitModule(state.run!, state.step!, info);
    const spies = (['readFileSync', 'existsSync', 'statSync', 'openSync', 'readdirSync', 'readSync'] as const).map((name) => vi.spyOn(fs, name));
    syncBuiltinESMExports();
    const random = vi.spyOn(Math, 'random');
    const cwd = process.cwd();
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2001-02-03T04:05:06Z'));
    let second: string;
    try {
      process.chdir(tmpdir());
      second = emitModule(state.run!, state.step!, info);
    } finally {
      process.chdir(cwd);
      vi.useRealTimers();
      vi.restoreAllMocks();
      syncBuiltinESMExports();
    }
    expect(second).toBe(first);
    for (const spy of [...spies, random]) expect(spy).not.toHaveBeenCalled();
    expect(JSON.stringify([state.ensemble, state.program!.ensemble, state.program!.train])).toBe(before);
  });

  it('keeps data paths relative to the module when it knows where the module goes, absolute otherwise', () => {
    expect(emitInfo('examples/forum.net', 'forum.ts', '/repo', tf).dataDir).toEqual({ relativeToModule: true, path: 'examples' });
    expect(emitInfo('examples/forum.net', 'out/deep/forum.ts', '/repo', tf).dataDir).toEqual({ relativeToModule: true, path: '../../examples' });
    expect(emitInfo('forum.net', 'forum.ts', '/repo', tf).dataDir).toEqual({ relativeToModule: true, path: '.' });
    expect(emitInfo('examples/forum.net', undefined, '/repo', tf).dataDir).toEqual({ relativeToModule: false, path: '/repo/examples' });
  });
});

describe('netc compile', () => {
  it('writes the module to standard output, its data folder absolute', async () => {
    const r = await run('compile', 'examples/xor.net');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^\/\/ Generated by netc from examples\/xor\.net: model xor, 8 members, lowering grouped\./);
    expect(r.out).toContain(`export async function dataDir(): Promise<string> {\n  return '${join(root, 'examples')}';`);
  });

  it('writes the module to -o, through a temporary file', async () => {
    const dir = tempDir('cli-');
    const out = join(dir, 'sub', 'xor.ts');
    const r = await run('compile', 'examples/xor.net', '--lowering', 'loop', '--members', '2', '-o', out);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${out}: model xor, 2 members, lowering loop\n`);
    expect(readFileSync(out, 'utf8')).toContain("export const ensembleConfig: ModuleEnsemble = {\n  members: 2,\n  lowering: 'loop',");
    expect(readdirSync(join(dir, 'sub'))).toEqual(['xor.ts']);
  });

  it('warns that a loop-lowered module trains only its compiled members, where a schedule retires some', async () => {
    const out = join(tempDir('cli-'), 'sweep.ts');
    const r = await run('compile', 'examples/sweep-halving.net', '--lowering', 'loop', '-o', out);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(
      'netc: warning: halving retires members, and a module compiled with --lowering loop trains only its 16: its train() stops with an error when they are retired; use --lowering grouped or blockdiag\n',
    );
    expect((await run('compile', 'examples/sweep-halving.net', '-o', out)).err).toBe('');
  });

  it('exits 1 with the diagnostics of a file with errors, and writes nothing', async () => {
    const out = join(tempDir('cli-'), 'bad.ts');
    const r = await run('compile', 'examples/errors/labels.net', '-o', out);
    expect(r.code).toBe(1);
    expect(r.err).toContain('error NET2009');
    expect(existsSync(out)).toBe(false);
  });

  it('exits 1 for a file without a train block', async () => {
    const net = join(tempDir('cli-'), 'model-only.net');
    writeFileSync(net, 'model m(input: [2]) {\n  dense(1)\n}\n');
    const r = await run('compile', net);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error NET4001: the file has no 'train' block");
  });

  it('exits 2 on bad usage', async () => {
    expect((await run('compile', 'examples/xor.net', '--lowering', 'diagonal')).code).toBe(2);
    expect((await run('compile', 'examples/xor.net', '--members', '0')).code).toBe(2);
    expect((await run('compile')).code).toBe(2);
  });
});

/** Runs node with `args`; resolves with its stdout and stderr, rejects with its output. */
async function runNode(args: string[], cwd: string): Promise<{ out: string; err: string }> {
  const { code, out, err } = await spawnNode(args, cwd);
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited ${code}:\n${out}${err}`);
  return { out, err };
}

/** Runs a TypeScript file with node --import tsx. */
const runTs = (file: string, args: string[], cwd: string) => runNode(['--import', 'tsx', file, ...args], cwd);

// Imports the compiled module as a user would, trains it with train() (netc's runtime around the module's
// step()) and with its core alone (createPopulation() and step(), as a browser page would), and writes the
// members' weights in the layout of netc train's checkpoint parameters (each parameter [N, ...shape],
// member after member), for the runtime to match.
const driver = `
import { writeFileSync } from 'node:fs';
import * as k from 'netc/kernels';
import { createPopulation, dataDir, extractMember, params, step, train } from './forum.ts';

/** Parameters in checkpoint order: each one's members, one after the other. */
function layout(members: Record<string, Float32Array>[]): Uint8Array {
  const chunks = params.flatMap((p) => members.map((w) => w[p.name]));
  const all = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new Uint8Array(all.buffer);
}

const result = await train({ steps: 50, backend: 'cpu' });
const trained = await Promise.all(result.memberIds.map(async (_, m) => Object.fromEntries(await result.population.memberWeights(m))));
writeFileSync('trained.bin', layout(trained));
result.population.dispose();
const tf = await (await import('netc')).loadTF();
const start = createPopulation(tf);
const initial = await Promise.all(start.memberIds.map((_, i) => k.memberValues(start, extractMember, i)));
writeFileSync('initial.bin', layout(initial));
// the core alone, on one fixed batch: what a page does
const x = tf.randomUniform([8, 2], -1, 1, 'float32', 7);
const y = tf.tensor2d([0, 1, 1, 0, 1, 0, 0, 1], [8, 1]);
for (let i = 0; i < 5; i++) step(start, x, y).losses.dispose();
const stepped = await Promise.all(start.memberIds.map((_, i) => k.memberValues(start, extractMember, i)));
writeFileSync('stepped.bin', layout(stepped));
k.disposePopulation(start);
writeFileSync('report.json', JSON.stringify({ dataDir: await dataDir(), steps: result.steps, final: result.final }));
`;

describe('the emitted module, run on its own', () => {
  it('trains examples/forum.net to the weights netc train trains, bit for bit', async () => {
    const started = performance.now();
    expect(existsSync(join(root, 'dist/emit/module-api.js')), "dist/ is stale: the module imports 'netc' from dist/; run npm run build").toBe(true);
    const dir = tempDir('forum-');
    const c = await run('compile', 'examples/forum.net', '-o', join(dir, 'forum.ts'));
    expect(c.code, c.err).toBe(0);
    writeFileSync(join(dir, 'driver.ts'), driver);
    // the module again in a CommonJS package, as in a project made by \`npm init -y\`: tsx runs it as CommonJS
    const cjs = join(dir, 'cjs');
    mkdirSync(join(cjs, 'node_modules'), { recursive: true });
    writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'user-project', type: 'commonjs' }));
    symlinkSync(root, join(cjs, 'node_modules', 'netc'), 'dir');
    const c2 = await run('compile', 'examples/forum.net', '-o', join(cjs, 'forum.ts'));
    expect(c2.code, c2.err).toBe(0);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, rootDir: '../..', allowImportingTsExtensions: true }, include: ['*.ts'] }),
    );
    // the module type-checks against netc's declarations (strict, as this repository's code)
    const typed = runNode([join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
    // the module imported by a program (run from the module's folder, so data paths cannot lean on the
    // working directory), the module run as a script, and the runtime in this process, all at once
    const imported = runTs('driver.ts', [], dir);
    const script = runTs('forum.ts', ['--steps', '5', '--backend', 'cpu'], dir);
    const scriptCjs = runTs('forum.ts', ['--steps', '5', '--backend', 'cpu'], cjs);
    // awaited below; until then a failure must not count as an unhandled rejection
    for (const p of [typed, imported, script, scriptCjs]) p.catch(() => {});
    const trained = await run('train', 'examples/forum.net', '--steps', '50', '--backend', 'cpu', '--out', join(dir, 'run'));
    expect(trained.code, trained.err).toBe(0);
    const initial = await run('train', 'examples/forum.net', '--steps', '0', '--backend', 'cpu', '--out', join(dir, 'run0'));
    expect(initial.code, initial.err).toBe(0);
    await imported;

    const weights = readFileSync(join(dir, 'trained.bin'));
    expect(weights.length).toBe(4 * 15 * 81);
    expect(weights.equals(paramBytes(join(dir, 'run')))).toBe(true);
    expect(readFileSync(join(dir, 'initial.bin')).equals(paramBytes(join(dir, 'run0')))).toBe(true);
    // the core alone (createPopulation, step) trains as netc's runtime does on the same batch
    const own = runtimePopulation(tf, compiled('examples/forum.net'));
    const x = tf.randomUniform([8, 2], -1, 1, 'float32', 7);
    const y = tf.tensor2d([0, 1, 1, 0, 1, 0, 0, 1], [8, 1]);
    for (let i = 0; i < 5; i++) own.step({ kind: 'tensors', x, y }).dispose();
    const members = await Promise.all(own.memberIds.map((_, m) => own.memberWeights(m)));
    const stepped = Buffer.concat(own.ir.params.flatMap((p) => members.map((w) => Buffer.from(w.get(p.name)!.buffer))));
    own.dispose();
    expect(readFileSync(join(dir, 'stepped.bin')).equals(stepped)).toBe(true);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
    const summary = JSON.parse(readFileSync(join(dir, 'run', 'summary.json'), 'utf8'));
    expect(resolve(report.dataDir)).toBe(join(root, 'examples'));
    expect(report.steps).toBe(50);
    expect(report.final).toEqual(summary.per_member.map((m: { metrics: unknown }) => m.metrics));

    await typed;
    for (const r of [await script, await scriptCjs]) {
      const printed = r.out.trim().split('\n');
      expect(printed[0]).toMatch(/^5 steps x 15 members: trained in \d+\.\d s, \d+\.\d s in all \(with loading TF.js and the data\)$/);
      expect(printed.slice(1)).toHaveLength(15);
      expect(printed[15]).toMatch(/^member 14: loss \d\.\d{4}, accuracy \d\.\d{4}, val_loss \d\.\d{4}, val_accuracy \d\.\d{4}$/);
      // one copy of TF.js: a second one would register every kernel again, with a warning each
      expect(r.err).not.toContain('already registered');
    }
    console.log(`standalone module test: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
});
