// The same plain TF.js training run in headless Chromium and in Node must end with the same weights,
// backend by backend (issue 13: the training core must run in a browser). The browser side is
// test/browser/harness.ts: an esbuild bundle served on loopback to Debian's chromium via puppeteer-core.
// Without Chromium the tests are skipped with the reason printed; NETC_REQUIRE_BROWSER=1 (set by .ci/run
// once it installed chromium) turns that into a failure.
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import '@tensorflow/tfjs-backend-wasm';
import { describe, expect, it } from 'vitest';
import { Rng } from '../src/util/rng.js';
import { bundleForBrowser, findChromium, probeBrowserWebGPU, runInBrowser, type LaunchOptions } from './browser/harness.js';
import { run as trainInNode, type TrainInput } from './browser/fixture-train.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

const fixture = 'test/browser/fixture-train.ts';
const required = process.env['NETC_REQUIRE_BROWSER'] === '1';
const chromium = findChromium();
if (!chromium) {
  const why = 'no Chromium found (apt-get install chromium, or set NETC_CHROMIUM to its path)';
  if (required) it('Chromium is required here (NETC_REQUIRE_BROWSER=1)', () => expect.fail(why));
  else console.log(`SKIPPED: the browser tests: ${why}`);
}

/** 50 Adam steps on 16 samples of a smooth 4 -> 2 function, from fixed weights. */
function trainInput(): TrainInput {
  const rng = Rng.of(13, 'browser');
  const matrix = (rows: number, cols: number, scale: number) =>
    Array.from({ length: rows }, () => Array.from({ length: cols }, () => rng.range(-scale, scale)));
  const x = matrix(16, 4, 1);
  const y = x.map(([a, b, c, d]) => [Math.sin(a + b), c * d]);
  const weights = { w1: matrix(4, 6, 0.5), b1: matrix(1, 6, 0.1)[0], w2: matrix(6, 2, 0.5), b2: [0, 0] };
  return { weights, x, y, steps: 50, learningRate: 0.05 };
}

function numbers(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value)) return value.flatMap(numbers);
  return Object.values(value as Record<string, unknown>).flatMap(numbers);
}

function maxDifference(a: unknown, b: unknown): number {
  const [x, y] = [numbers(a), numbers(b)];
  expect(x.length).toBe(y.length);
  return Math.max(...x.map((v, i) => Math.abs(v - y[i])));
}

async function inNode(backend: 'cpu' | 'wasm', input: TrainInput) {
  expect(await tf.setBackend(backend)).toBe(true);
  return trainInNode(input);
}

/** Runs the fixture in the browser on `backend` and in Node on `nodeBackend`; returns the max difference. */
async function compare(launch: LaunchOptions, nodeBackend: 'cpu' | 'wasm'): Promise<number> {
  const { backend } = launch;
  const input = trainInput();
  const browser = await runInBrowser({ entry: fixture, input, ...launch, timeoutMs: 30_000 });
  expect(browser.backend).toBe(backend);
  expect(browser.errors).toEqual([]);
  const node = await inNode(nodeBackend, input);
  const losses = (browser.result as { losses: number[] }).losses;
  expect(losses.at(-1)).toBeLessThan(losses[0] / 2); // it trained
  const difference = maxDifference(browser.result, node);
  const where = launch.adapter ? `${backend} (${launch.adapter})` : backend;
  console.log(`browser ${where} vs Node ${nodeBackend}: max |difference| = ${difference.toExponential(2)} over weights and losses`);
  return difference;
}

// No browser needed: esbuild fails on any Node-only import, and `sources` says what else came along.
it('bundles the fixture for the browser with TF.js and nothing else of ours', async () => {
  const bundle = await bundleForBrowser(fixture, { backend: 'wasm' });
  expect(bundle.sources).toEqual([fixture]);
  expect(bundle.packages).toContain('@tensorflow/tfjs-backend-wasm');
  await expect(bundleForBrowser('src/runtime/backend.ts', { backend: 'cpu' })).rejects.toThrow(/Could not resolve "node:/);
});

describe.runIf(chromium)('the same TF.js training in headless Chromium and in Node', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: equal weights within 1e-6`, async () => {
      expect(await compare({ backend }, backend)).toBeLessThanOrEqual(1e-6);
    });
  }

  // Node's reference is cpu: Node's own webgpu needs Mesa 25. SwiftShader ships inside the chromium
  // package, so with Chromium present (NETC_REQUIRE_BROWSER=1) its adapter is required; ANGLE on Vulkan
  // needs the system's driver too, so it is required only where .ci/run installed Mesa 25 as well.
  const adapters = [
    { adapter: 'swiftshader', required },
    { adapter: 'angle-vulkan', required: required && process.env['NETC_REQUIRE_WEBGPU'] === '1' },
  ] as const;
  for (const { adapter, required: adapterRequired } of adapters) {
    it(`webgpu on ${adapter}: equal weights to Node cpu within 1e-5`, async (context) => {
      const probe = await probeBrowserWebGPU(adapter);
      if ('missing' in probe) {
        const why = `no ${adapter} WebGPU adapter in headless Chromium: ${probe.missing}`;
        if (adapterRequired) expect.fail(`required here, but ${why}`);
        console.log(`SKIPPED: the browser webgpu test: ${why}`);
        return context.skip(why);
      }
      console.log(`browser webgpu adapter for ${adapter}: ${probe.adapter}`);
      expect(await compare({ backend: 'webgpu', adapter }, 'cpu')).toBeLessThanOrEqual(1e-5);
    });
  }

  it('reports an error thrown in the page, with what the console said', async () => {
    await expect(runInBrowser({ entry: 'test/browser/fixture-throws.ts', input: null, backend: 'cpu' })).rejects.toThrow(
      /in the browser \(cpu\): .*fixture-throws: thrown on purpose/,
    );
  });
});
