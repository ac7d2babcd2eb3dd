// A module `netc compile` wrote, trained in a real browser page by its core alone (createPopulation, step,
// extractMember, netc/kernels: no netc runtime, nothing from Node), must end with the weights netc's own
// runtime trains on the same batches (what `netc train` runs), member by member: forum (15 members) and
// LeNet-5 (3), on Chromium's cpu and wasm backends, and on WebGPU where headless Chromium has an adapter.
// Skipped without Chromium (the reason printed); NETC_REQUIRE_BROWSER=1 makes that a failure.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tfjs from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { build, type BuildOptions, type BuildResult } from 'esbuild';
import { fileHost } from '../src/cli/host.js';
import { compile } from '../src/pipeline.js';
import { selectBackend } from '../src/runtime/backend.js';
import { Rng } from '../src/util/rng.js';
import type { TF } from '../src/kernels/tf.js';
import { bundleForBrowser, findChromium, probeBrowserWebGPU, runInBrowser, type LaunchOptions } from './browser/harness.js';
import type { ModuleInput, ModuleOutput } from './browser/fixture-module.js';
import { runtimePopulation } from './compiled.js';
import { netc } from './helpers.js';

const tf = tfjs as unknown as TF;
const root = fileURLToPath(new URL('../', import.meta.url));
const fixture = 'test/browser/fixture-module.ts';
const required = process.env['NETC_REQUIRE_BROWSER'] === '1';
const chromium = findChromium();
if (!chromium) {
  const why = 'no Chromium found (apt-get install chromium, or set NETC_CHROMIUM to its path)';
  if (required) it('Chromium is required here (NETC_REQUIRE_BROWSER=1)', () => expect.fail(why));
  else console.log(`SKIPPED: the compiled-module browser tests: ${why}`);
}

const dir = join(root, '.emit-tmp', `browser-${process.pid}`);
mkdirSync(dir, { recursive: true });
afterAll(() => import('node:fs').then((fs) => fs.rmSync(dir, { recursive: true, force: true })));

interface Case {
  name: string;
  net: string;
  members?: number;
  /** one example's input shape, and its label: a class of `classes` (one-hot), or 0/1 in one column */
  input: number[];
  classes: number;
  batch: number;
  /** how many batches a run trains */
  steps: number;
}
const cases: Case[] = [
  { name: 'forum', net: 'examples/forum.net', input: [2], classes: 0, batch: 8, steps: 50 },
  // small batches, and few: Chromium's cpu backend convolves in plain JavaScript
  { name: 'lenet', net: 'examples/lenet.net', members: 3, input: [28, 28, 1], classes: 10, batch: 2, steps: 20 },
];

/** 16 examples and `steps` batches of `batch` of them, drawn from a fixed stream. */
function data(c: Case): ModuleInput {
  const rng = Rng.of(21, c.name);
  const size = c.input.reduce((a, b) => a * b, 1);
  const x = Array.from({ length: 16 * size }, () => rng.uniform());
  const width = c.classes || 1;
  const y = Array.from({ length: 16 }, () => (c.classes ? rng.int(c.classes) : rng.int(2)));
  const labels = c.classes ? y.flatMap((k) => Array.from({ length: width }, (_, j) => (j === k ? 1 : 0))) : y;
  const batches = Array.from({ length: c.steps }, () => Array.from({ length: c.batch }, () => rng.int(16)));
  return { x, xShape: [16, ...c.input], y: labels, yShape: [16, width], batches };
}

const compiledFile = async (c: Case) => {
  const out = join(dir, `${c.name}.ts`);
  const r = await netc('compile', c.net, ...(c.members ? ['--members', String(c.members)] : []), '-o', out);
  expect(r.code, r.err).toBe(0);
  return out;
};

/** What netc's runtime trains on the same batches, on `backend` in this process: each member's weights. */
async function reference(c: Case, input: ModuleInput, backend: 'cpu' | 'wasm'): Promise<Record<string, number[]>[]> {
  await selectBackend(backend, { log: () => {} });
  const path = join(root, c.net);
  const state = compile(readFileSync(path, 'utf8'), path, { host: fileHost(path), members: c.members });
  // the engine the module picks in the page (the generated step where it covers the model), whatever NETC_ENGINE says
  const pop = runtimePopulation(tf, state, { engine: 'auto' });
  const x = tf.tensor(input.x, input.xShape);
  const y = tf.tensor(input.y, input.yShape);
  for (const batch of input.batches) {
    const rows = tf.tensor1d(batch, 'int32');
    const [bx, by] = [tf.gather(x, rows), tf.gather(y, rows)];
    pop.step({ kind: 'tensors', x: bx, y: by }).dispose();
    tf.dispose([rows, bx, by]);
  }
  const out = await Promise.all(pop.memberIds.map(async (_, m) => Object.fromEntries([...(await pop.memberWeights(m))].map(([k, v]) => [k, Array.from(v)]))));
  pop.dispose();
  tf.dispose([x, y]);
  return out;
}

function maxDifference(a: Record<string, number[]>[], b: Record<string, number[]>[]): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  a.forEach((member, m) => {
    expect(Object.keys(member).sort()).toEqual(Object.keys(b[m]).sort());
    for (const [name, values] of Object.entries(member)) values.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - b[m][name][i]))));
  });
  return worst;
}

const alias = (module: string) => ({ 'netc/kernels': join(root, 'src/netc-kernels.ts'), 'compiled-module': module });

it('bundles for the browser as it is: esbuild, platform browser, nothing marked external', async () => {
  const module = await compiledFile(cases[0]);
  // as in a project that installed netc: both of its entries resolve (here to their sources)
  const options = {
    entryPoints: [module],
    bundle: true,
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    alias: { netc: join(root, 'src/index.ts'), 'netc/kernels': join(root, 'src/netc-kernels.ts') },
    nodePaths: [join(root, 'node_modules')],
  } satisfies BuildOptions;
  const failed = (e: unknown) => e as BuildResult;
  const iife = await build(options).catch(failed);
  expect(iife.errors.map((m) => m.text)).toEqual([]);
  // as an ES module (what a page's <script type="module"> loads), not a warning either
  const esm = await build({ ...options, format: 'esm' }).catch(failed);
  expect([...esm.errors, ...esm.warnings].map((m) => m.text)).toEqual([]);
  // and nothing of netc's runtime or of Node is in it
  expect(esm.outputFiles?.[0].text).not.toMatch(/node:fs|src\/train\/trainer/);
});

it('bundles a compiled module for the browser with TF.js and netc/kernels only', async () => {
  const module = await compiledFile(cases[1]);
  const bundle = await bundleForBrowser(fixture, { backend: 'wasm', alias: alias(module) });
  const ours = bundle.sources.filter((f) => f !== fixture && !f.endsWith(`${cases[1].name}.ts`));
  // what the module pulled in of netc: netc/kernels' entry and the floors below it (kernels and the layout
  // rule, seeded streams), and the generated steps (k.fusedStep: the generators in step/, wasm/ and wgsl/, the
  // elementwise rules of math/, the layer kinds with every target's rule (their export rules' interop/ helpers too), the runtime files that run them on TF.js's wasm memory or webgpu device, and the copy of a call's state to a
  // shared memory for threads, which imports nothing of Node); nothing of the rest of
  // the runtime, the trainer or the CLI
  expect(ours.length).toBeGreaterThan(0);
  expect(ours).toContain('src/netc-kernels.ts');
  expect(ours).toContain('src/runtime/module-fused-step.ts');
  for (const f of ours) {
    expect(f).toMatch(/^src\/(kernels|core|util|math|wasm|wgsl|interop|step|layers|vocabulary)\/|^src\/netc-kernels\.ts$|^src\/runtime\/(module-|gpu-)?fused-step\.ts$|^src\/runtime\/step-hyper\.ts$|^src\/runtime\/threaded-steps\.ts$|^src\/diagnostics\/messages\.ts$/);
  }
  // and no package beyond what a page with TF.js alone bundles
  const plain = await bundleForBrowser('test/browser/fixture-train.ts', { backend: 'wasm' });
  expect(bundle.packages.filter((p) => !plain.packages.includes(p))).toEqual([]);
});

describe.runIf(chromium)('a compiled module trained in headless Chromium by its core alone', () => {
  for (const c of cases) {
    for (const backend of ['cpu', 'wasm'] as const) {
      it(`${c.name} on ${backend}: netc's weights within 1e-6`, async () => {
        const module = await compiledFile(c);
        const input = data(c);
        const page = await runInBrowser({ entry: fixture, input, backend, alias: alias(module), timeoutMs: 120_000 });
        expect(page.errors).toEqual([]);
        const result = page.result as ModuleOutput;
        expect(result.backend).toBe(backend);
        const difference = maxDifference(result.weights, await reference(c, input, backend));
        console.log(`${c.name}: browser ${backend} vs netc's runtime in Node: max |difference| ${difference.toExponential(2)}`);
        expect(difference).toBeLessThanOrEqual(1e-6);
        const losses = result.losses.map((l) => l.reduce((a, b) => a + b, 0));
        expect(losses.at(-1)).toBeLessThan(losses[0]); // it trained
      });
    }
  }

  for (const c of cases) {
    it(`${c.name}: picks WebGPU where the page has an adapter, and trains there close to netc on cpu`, { timeout: 180_000 }, async (context) => {
      const launch: LaunchOptions = { backend: 'webgpu', adapter: 'swiftshader' };
      const probe = await probeBrowserWebGPU('swiftshader');
      if ('missing' in probe) {
        if (required) expect.fail(`no WebGPU adapter in headless Chromium: ${probe.missing}`);
        console.log(`SKIPPED: the compiled-module webgpu test: ${probe.missing}`);
        return context.skip(probe.missing);
      }
      const module = await compiledFile(c);
      // SwiftShader runs every WebGPU kernel on the CPU, slowly: LeNet takes 5 of its steps there
      const all = data(c);
      const input = { ...all, batches: c.name === 'lenet' ? all.batches.slice(0, 5) : all.batches, pick: true };
      const page = await runInBrowser({ entry: fixture, input, ...launch, alias: alias(module), timeoutMs: 170_000 });
      expect(page.errors).toEqual([]);
      const result = page.result as ModuleOutput;
      expect(result.backend).toBe('webgpu');
      // both steps are covered by the WGSL step (forum: dense, sigmoid, binary cross-entropy, adam; LeNet: conv, pooling, flatten, softmax, categorical cross-entropy): the module runs it
      expect(result.fused).toBe('wgsl');
      const difference = maxDifference(result.weights, await reference(c, input, 'cpu'));
      console.log(`${c.name}: browser webgpu (${probe.adapter}) vs netc's runtime on cpu: max |difference| ${difference.toExponential(2)}`);
      expect(difference).toBeLessThanOrEqual(1e-4);
    });
  }
});
