// Backend selection: 'auto' and what it says, the optional node packages, the same numbers on cpu and
// wasm, and webgpu against cpu where a Vulkan adapter exists. The webgpu test never passes silently:
// without an adapter it is skipped with the reason printed, and NETC_REQUIRE_WEBGPU=1 turns that into
// a failure (CI sets it after installing the driver).
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackendError, selectBackend, tensorData } from '../src/runtime/backend.js';
import { webgpuUnavailable } from './helpers.js';

type TF = Awaited<ReturnType<typeof selectBackend>>['tf'];

const require = createRequire(import.meta.url);
function installed(pkg: string): boolean {
  try {
    require.resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}
const nodeInstalled = installed('@tensorflow/tfjs-node');
const nodeGpuInstalled = installed('@tensorflow/tfjs-node-gpu');

async function select(requested: Parameters<typeof selectBackend>[0]) {
  const lines: string[] = [];
  const result = await selectBackend(requested, { log: (line) => lines.push(line) });
  return { ...result, lines };
}

/** Uniform numbers in [-0.5, 0.5) from a fixed LCG, so every backend starts from the same values. */
function values(seed: number, n: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

/** matMul, two conv2d, and 20 Adam steps on a small dense layer, on whichever backend is active. */
async function smallComputation(tf: TF, adamSteps = 20): Promise<Record<string, Float32Array>> {
  const out: Record<string, Float32Array> = {};
  const a = tf.tensor2d(values(1, 32 * 24), [32, 24]);
  const b = tf.tensor2d(values(2, 24 * 16), [24, 16]);
  const image = tf.tensor4d(values(3, 2 * 7 * 7 * 3), [2, 7, 7, 3]);
  const filter = tf.tensor4d(values(4, 3 * 3 * 3 * 4), [3, 3, 3, 4]);
  const mm = tf.matMul(a, b);
  const same = tf.conv2d(image, filter, 1, 'same');
  const strided = tf.conv2d(image, filter, 2, 'valid');
  out['matMul'] = await tensorData(mm);
  out['conv2d same'] = await tensorData(same);
  out['conv2d stride 2'] = await tensorData(strided);
  tf.dispose([a, b, image, filter, mm, same, strided]);

  const x = tf.tensor2d(values(5, 64 * 8), [64, 8]);
  const y = tf.tensor2d(values(6, 64 * 4), [64, 4]);
  const w = tf.variable(tf.tensor2d(values(7, 8 * 4), [8, 4]));
  const bias = tf.variable(tf.tensor1d(values(8, 4)));
  const adam = tf.train.adam(0.01);
  const losses = new Float32Array(adamSteps);
  for (let step = 0; step < adamSteps; step++) {
    const loss = adam.minimize(() => tf.losses.meanSquaredError(y, tf.tanh(tf.add(tf.matMul(x, w), bias))), true);
    losses[step] = (await tensorData(loss!))[0];
    loss!.dispose();
  }
  out['adam kernel'] = await tensorData(w);
  out['adam bias'] = await tensorData(bias);
  out['adam losses'] = losses;
  tf.dispose([x, y, w, bias]);
  adam.dispose();
  return out;
}

function expectClose(actual: Record<string, Float32Array>, expected: Record<string, Float32Array>, tolerance: number) {
  for (const key of Object.keys(expected)) {
    const diff = maxAbsDiff(actual[key], expected[key]);
    expect(diff, `${key}: max |difference| ${diff}`).toBeLessThanOrEqual(tolerance);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('selectBackend', () => {
  // first, so that no earlier test has used the cpu backend yet
  it('silences the cpu backend "install our node backend" banner, and only that', async () => {
    const warn = vi.spyOn(console, 'warn');
    const { tf } = await select('cpu');
    const t = tf.add(tf.tensor1d([1, 2]), tf.tensor1d([3, 4]));
    expect(Array.from(await tensorData(t))).toEqual([4, 6]);
    const printed = warn.mock.calls.map((call) => call.join(' ')).join('\n');
    expect(printed).not.toContain('node backend');
    // the flag that hides TF.js's warnings is not left on
    expect(tf.env().getBool('PROD')).toBe(false);
  });

  it("'auto' takes the fastest backend present and says why", async () => {
    const { name, tf, lines } = await select('auto');
    expect(lines).toHaveLength(1);
    expect(tf.getBackend()).toBe(name === 'node' || name === 'node-gpu' ? 'tensorflow' : name);
    if (!nodeInstalled && !nodeGpuInstalled) {
      expect(name).toBe('wasm');
      expect(lines[0]).toBe("backend: wasm (auto: the node-gpu and node backends' packages are not installed (@tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node); SIMD, single-threaded)");
    } else {
      expect(lines[0]).toMatch(new RegExp(`^backend: ${name}\\b`));
    }
  });

  it('uses the SIMD build of the wasm backend and says so', async () => {
    const { name, tf, lines } = await select('wasm');
    expect(name).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
    expect(lines).toEqual(['backend: wasm (SIMD, single-threaded)']);
  });

  it('names what is missing when an absent node backend is asked for', async () => {
    if (nodeInstalled) {
      // installed: it runs, or (its install script did not run) says what to do
      const result = await select('node').catch((e: unknown) => e);
      if (result instanceof BackendError) {
        expect(result.message).toMatch(
          /^@tensorflow\/tfjs-node is installed but could not be loaded \(.+\); reinstall it \(npm rebuild @tensorflow\/tfjs-node\) or use --backend wasm or cpu$/,
        );
      } else {
        expect((result as { name: string }).name).toBe('node');
      }
    } else {
      const error = await select('node').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).backend).toBe('node');
      expect((error as BackendError).message).toBe(
        '@tensorflow/tfjs-node is not installed (its install script downloads libtensorflow); use --backend wasm or cpu',
      );
    }
    if (!nodeGpuInstalled) {
      await expect(select('node-gpu')).rejects.toThrow(
        /^@tensorflow\/tfjs-node-gpu is not installed \(.*\); use --backend node, wasm or cpu$/,
      );
    }
  });

  it('rejects an unknown backend name', async () => {
    await expect(selectBackend('tpu' as 'cpu', { log: () => {} })).rejects.toThrow(
      "unknown backend 'tpu'; expected auto, node-gpu, node, webgpu, wasm, cpu",
    );
  });

  it('reads int32 tensors as float32', async () => {
    const { tf } = await select('cpu');
    const data = await tensorData(tf.tensor1d([1, -2, 3], 'int32'));
    expect(data).toBeInstanceOf(Float32Array);
    expect(Array.from(data)).toEqual([1, -2, 3]);
  });
});

describe('cpu and wasm agree', () => {
  it('on matMul, conv2d and Adam steps, within 1e-5', async () => {
    const cpu = await smallComputation((await select('cpu')).tf);
    const wasm = await smallComputation((await select('wasm')).tf);
    expectClose(wasm, cpu, 1e-5);
    // the Adam steps did train: the loss went down
    const losses = cpu['adam losses'];
    expect(losses[losses.length - 1]).toBeLessThan(losses[0]);
  });
});

// ---- webgpu -------------------------------------------------------------------------------------------

const webgpuMissing = await webgpuUnavailable();
const webgpuRequired = process.env['NETC_REQUIRE_WEBGPU'] === '1';
if (webgpuMissing != null && !webgpuRequired) {
  console.warn(
    `SKIPPED: the webgpu-vs-cpu test did not run: ${webgpuMissing}. ` +
      'Set NETC_REQUIRE_WEBGPU=1 to make this a failure.',
  );
}

describe('webgpu', () => {
  it.skipIf(webgpuMissing != null && !webgpuRequired)(
    'matches cpu within 1e-4 (matMul, conv2d, 20 Adam steps)',
    async () => {
      if (webgpuMissing != null) {
        throw new Error(`NETC_REQUIRE_WEBGPU=1, but webgpu cannot run here: ${webgpuMissing}`);
      }
      const cpu = await smallComputation((await select('cpu')).tf);
      const { name, tf, lines } = await select('webgpu');
      expect(name).toBe('webgpu');
      expect(tf.getBackend()).toBe('webgpu');
      expect(lines[0]).toMatch(/^backend: webgpu \(.+\)$/);
      const gpu = await smallComputation(tf);
      expectClose(gpu, cpu, 1e-4);
    },
  );

  // the other side: where no adapter exists, asking for webgpu says what to install
  it.runIf(webgpuMissing != null)(
    'without an adapter, says a Vulkan driver is needed (runs only where there is none)',
    async () => {
      const error = await select('webgpu').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).message).toMatch(
        /^no WebGPU adapter found \(Dawn: [^\n]+\): Dawn needs a Vulkan driver; .*bookworm-backports .*mesa-vulkan-drivers libvulkan1.*, or use --backend wasm or cpu$/,
      );
    },
  );
});
