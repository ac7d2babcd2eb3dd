// The direction of imports, held by a test. .dependency-cruiser.cjs states it (src/ is a house of floors: a part
// imports only parts below it, no file is in an import circle, only runtime/backend.ts loads TF.js, with import()).
// src/ is cruised with those rules and has no violation, and the cruise really saw src/ whole. The rules are shown
// able to fail, on a small tree laid out like src/ with one mistake of each kind. And since the rules see only
// the imports, a child process shows the outcome at run time: compiling a .net file loads no TF.js.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnNode } from './helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Cruises `baseDir`/src with the project's rules and `baseDir`/tsconfig.json, whatever the cwd. */
async function cruiseSrc(baseDir: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
  const fileName = join(baseDir, 'tsconfig.json');
  const { output } = await cruise(['src'], { ...options, baseDir, tsConfig: { fileName } }, undefined, { tsConfig: extractTSConfig(fileName) });
  return output as ICruiseResult;
}

/** A violation as `depcruise --output-type err` names it: the rule, then the import (or the whole circle). */
const describeViolation = (v: IViolation) => `${v.rule.name}: ${[v.from, ...(v.cycle?.map((c) => c.name) ?? [v.to])].join(' → ')}`;

describe('src/', () => {
  let result: ICruiseResult;
  beforeAll(async () => void (result = await cruiseSrc(root)));

  it('keeps the direction of .dependency-cruiser.cjs', () => expect(result.summary.violations.map(describeViolation)).toEqual([]));

  it('was cruised, not skipped', () => {
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(result.summary.totalDependenciesCruised).toBeGreaterThan(600);
  });

  it('was cruised whole: every .ts file under src/', () => {
    const cruised = new Set(result.modules.map((m) => m.source));
    const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.map((f) => `src/${f}`).filter((f) => !cruised.has(f))).toEqual([]);
  });
});

// one mistake of each kind, beside imports the rules allow: train is above kernels; the circle closes through a
// type-only import; a front-end file loads TF.js as a value, where runtime/backend.ts may load it with import()
const fixture: Record<string, string> = {
  'tsconfig.json': '{ "compilerOptions": { "module": "NodeNext" }, "include": ["src"] }',
  'src/train/b.ts': 'export const b = 1;\n',
  'src/kernels/a.ts': "import { b } from '../train/b.js';\nexport const a = b;\n",
  'src/layers/x.ts': "import { y } from './y.js';\nexport type X = number;\nexport const x = y;\n",
  'src/layers/y.ts': "import type { X } from './x.js';\nexport const y: X = 1;\n",
  'src/check/z.ts': "import * as tf from '@tensorflow/tfjs';\nexport const z = tf.tensor;\n",
  'src/runtime/backend.ts': "import type { Tensor } from '@tensorflow/tfjs';\nexport type T = Tensor;\nexport const load = () => import('@tensorflow/tfjs');\n",
};

describe('the rules', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netc-architecture-'));
    for (const [path, text] of Object.entries(fixture)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir'); // so '@tensorflow/tfjs' resolves
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('report an import against the direction, a circle and a front-end file loading TF.js, and nothing else', async () => {
    const { summary } = await cruiseSrc(dir);
    expect(summary.violations.map((v) => `${v.rule.name} ${v.from}`).sort(), summary.violations.map(describeViolation).join('\n')).toEqual([
      'kernels-imports-downward src/kernels/a.ts',
      'no-circular src/layers/x.ts',
      'tfjs-loaded-by-the-backend-only src/check/z.ts',
    ]);
  });
});

// compiles examples/lenet.net and says whether TF.js core's engine global is set, then imports TF.js (the control)
const probe = `
import { readFileSync } from 'node:fs';
import { compile } from './src/pipeline.ts';
const path = 'examples/lenet.net';
const state = compile(readFileSync(path, 'utf8'), path);
const errors = state.diagnostics.filter((d) => d.category === 'error').map((d) => d.message);
const loaded = () => '_tfengine' in globalThis;
const before = loaded();
await import('@tensorflow/tfjs');
console.log(JSON.stringify({ errors, ensemble: state.ensemble !== undefined, before, after: loaded() }));
`;

describe('the front end', () => {
  it('compiles a .net file without loading TF.js (which importing it would show)', async () => {
    const { code, out, err } = await spawnNode(['--import', 'tsx', '--input-type=module', '-e', probe], root);
    expect(code, err).toBe(0);
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ errors: [], ensemble: true, before: false, after: true });
  });
});
