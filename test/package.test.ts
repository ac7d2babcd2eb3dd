// What `npm pack` ships, and that it is enough to use netc. The tarball holds the CLI, the compiled library with
// its declarations, the language reference and the example .net files, and nothing of the sources, tests or
// benchmarks. Unpacked into a CommonJS project (as `npm init -y` makes) next to netc's declared dependencies
// only, the CLI trains and compiles, the compiled module runs under tsx, and `import ... from 'netc'` resolves.
// That project lies outside the repository on purpose: inside it, Node would find this checkout's
// node_modules, devDependencies included. The dependencies are linked from this checkout's node_modules rather
// than installed from the registry (an install takes over 30 s and 700 MB), so the test runs offline.
import { spawnSync } from 'node:child_process';
import { spawnNode } from './helpers.js';
import { builtinModules } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** `npm pack` of this checkout without its scripts: what is in dist/ now (npm test builds it first). */
function pack(...args: string[]) {
  expect(existsSync(join(root, 'dist/cli/main.js')), 'dist/ is not built: run npm run build').toBe(true);
  const r = spawnSync(npm, ['pack', '--ignore-scripts', '--json', ...args], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout)[0] as { filename: string; files: { path: string }[] };
}

/** The modules a compiled .js file imports: static imports, import() and require.resolve with a literal. */
function specifiers(source: string): string[] {
  const patterns = [/\bfrom\s+'([^']+)'/g, /\bimport\(\s*'([^']+)'\s*\)/g, /\brequire\.resolve\(\s*'([^']+)'/g, /^import\s+'([^']+)'/gm];
  return patterns.flatMap((p) => [...source.matchAll(p)].map((m) => m[1]));
}

const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

describe('npm pack', () => {
  const files = pack('--dry-run').files.map((f) => f.path);

  it('ships the CLI, the compiled library and its types, the language reference and the examples', () => {
    for (const f of ['package.json', 'README.md', 'bin/netc.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'docs/language.md', 'examples/forum.net', 'examples/xor.net']) {
      expect(files).toContain(f);
    }
  });

  it('leaves out the sources, tests, benchmarks, scripts, error fixtures and source maps', () => {
    const unwanted = files.filter((f) => /^(src|test|bench|scripts|grammar|\.ci|examples\/errors)\/|\.map$|^tsconfig|^vitest/.test(f));
    expect(unwanted).toEqual([]);
  });

  it('holds every file that a shipped file imports', () => {
    const missing: string[] = [];
    for (const f of files.filter((f) => f.endsWith('.js'))) {
      for (const s of specifiers(readFileSync(join(root, f), 'utf8')).filter((s) => s.startsWith('.'))) {
        const target = posix.normalize(posix.join(posix.dirname(f), s));
        if (!files.includes(target)) missing.push(`${f} -> ${s}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares every package that a shipped file loads, none of them as a devDependency only', () => {
    const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies }));
    const loaded = new Set(
      files
        .filter((f) => f.endsWith('.js'))
        .flatMap((f) => specifiers(readFileSync(join(root, f), 'utf8')))
        .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s) && packageName(s) !== pkg.name)
        .map(packageName),
    );
    expect(loaded.size).toBeGreaterThan(5);
    expect([...loaded].filter((name) => !declared.has(name))).toEqual([]);
  });

  it('makes TF.js and its backends peers, so that a project has one copy of tfjs-core', () => {
    for (const name of ['@tensorflow/tfjs', '@tensorflow/tfjs-backend-wasm', '@tensorflow/tfjs-backend-webgpu']) {
      expect(pkg.peerDependencies[name], name).toBeDefined();
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.devDependencies[name], `${name}, for this checkout`).toBe(pkg.peerDependencies[name]);
    }
  });
});


/** Links an installed package of this checkout into the project's node_modules, as an install would put it there. */
function link(project: string, name: string): void {
  const from = join(root, 'node_modules', name);
  if (!existsSync(from)) return; // an optional dependency that is not installed here
  const to = join(project, 'node_modules', name);
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(from, to, 'dir');
}

describe('the packed netc in a project of its own', () => {
  let project: string;
  const netc = (...args: string[]) => spawnNode([join(project, 'node_modules/netc/bin/netc.js'), ...args], project);

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'netc-project-'));
    const tarball = join(project, pack('--pack-destination', project).filename);
    const dir = join(project, 'node_modules', 'netc');
    mkdirSync(dir, { recursive: true });
    const tar = spawnSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1'], { encoding: 'utf8' });
    expect(tar.status, tar.stderr).toBe(0);
    rmSync(tarball);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', version: '1.0.0', type: 'commonjs' }));
    // netc's dependencies, peers and optional dependencies, and tsx, which the user installs to run compiled modules
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies })) link(project, name);
    link(project, 'tsx');
    writeFileSync(join(project, 'forum.net'), readFileSync(join(dir, 'examples/forum.net')));
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('trains, compiles, runs the compiled module under tsx and imports netc, with one copy of TF.js', async () => {
    const trained = netc('train', 'forum.net', '--steps', '20', '--out', 'run');
    const compiled = await netc('compile', 'forum.net', '-o', 'forum.ts');
    expect(compiled.code, compiled.err).toBe(0);
    writeFileSync(
      join(project, 'main.mjs'),
      "import { compile } from 'netc';\nconst state = compile('model m(input: [2]) {\\n  dense(1)\\n}\\n', 'm.net');\n" +
        'console.log(JSON.stringify({ diagnostics: state.diagnostics.length, params: state.ir.params.length }));\n',
    );
    const [train, script, main] = await Promise.all([trained, spawnNode(['--import', 'tsx', 'forum.ts', '--steps', '5'], project), spawnNode(['main.mjs'], project)]);

    expect(train.code, train.err).toBe(0);
    expect(train.out).toMatch(/20 steps x 15 members: trained in \d+\.\d s, \d+\.\d s in all/);
    expect(existsSync(join(project, 'run', 'population.json'))).toBe(true);
    expect(script.code, script.err).toBe(0);
    expect(script.out).toMatch(/^5 steps x 15 members: trained in \d+\.\d s, \d+\.\d s in all/);
    expect(script.out.trim().split('\n')).toHaveLength(16);
    expect(main.code, main.err).toBe(0);
    expect(JSON.parse(main.out)).toEqual({ diagnostics: 0, params: 2 });
    for (const r of [train, script, main]) expect(r.err).not.toContain('already registered');
  });

  it('says what to install when TF.js is missing (a peer that yarn or --legacy-peer-deps leave out)', async () => {
    unlinkSync(join(project, 'node_modules/@tensorflow/tfjs'));
    const r = await netc('train', 'forum.net', '--steps', '1', '--out', 'run-without-tfjs');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netc: @tensorflow\/tfjs could not be loaded \(.*\); netc runs on the project's TF\.js: npm install @tensorflow\/tfjs\n$/m);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});
