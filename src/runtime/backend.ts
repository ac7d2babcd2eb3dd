// Choosing the TF.js backend. Only the backends' own packages are loaded here, and only when asked for:
// importing this file loads nothing, so `netc check` never pays for TF.js.
//
//   node-gpu  @tensorflow/tfjs-node-gpu (libtensorflow with CUDA)   optional dependency
//   node      @tensorflow/tfjs-node (libtensorflow on the CPU)      optional dependency
//   webgpu    @tensorflow/tfjs-backend-webgpu on Dawn ('webgpu')    dependency; needs a Vulkan driver
//   wasm      @tensorflow/tfjs-backend-wasm (XNNPACK, SIMD)         dependency
//   cpu       TF.js's plain JavaScript kernels                      always there
//
// tfjs-node and tfjs-node-gpu are optional because their install scripts download libtensorflow, which
// fails where that download is not reachable; so their absence is normal, and 'auto' passes over them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { registerWasmKernels } from '../kernels/wasm-kernels.js';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { andList } from '../util/plural.js';
import { coreFirst } from './tf-core-first.js';
import type * as tfjs from '@tensorflow/tfjs';

export type BackendName = 'node-gpu' | 'node' | 'webgpu' | 'wasm' | 'cpu';

type TF = typeof tfjs;

/** A backend that was asked for by name and cannot run here; the message is one line saying why and what to do. */
export class BackendError extends Error {
  constructor(
    /** the backend that was asked for, as the user spelled it */
    readonly backend: string,
    message: string,
  ) {
    super(message);
    this.name = 'BackendError';
  }
}

const BACKEND_NAMES: readonly BackendName[] = ['node-gpu', 'node', 'webgpu', 'wasm', 'cpu'];

/**
 * What 'auto' tries, fastest first. webgpu is left out on purpose: on a machine without a GPU, Dawn runs
 * on Mesa's lavapipe (software Vulkan), which is slow: an Adam step of a tiny dense layer costs ~5 ms
 * (wasm: <1 ms) and a 256x256 matMul ~15 ms (wasm: ~1 ms). So webgpu proves correctness, not speed, and
 * runs only when asked for by name (`--backend webgpu`).
 */
const AUTO_ORDER: readonly BackendName[] = ['node-gpu', 'node', 'wasm', 'cpu'];

/**
 * Makes `requested` the active TF.js backend and returns it with the TF.js namespace to use. 'auto' takes
 * the fastest backend that loads here (node-gpu, node, wasm, cpu). Logs one line saying which backend
 * runs and why, e.g. `backend: wasm (auto: the node-gpu and node backends' packages are not installed (@tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node); SIMD, single-threaded)`.
 * Throws BackendError when a backend asked for by name cannot run here.
 */
export async function selectBackend(
  requested: BackendName | 'auto',
  options: { log?: (line: string) => void } = {},
): Promise<{ name: BackendName; tf: TF }> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  if (requested !== 'auto' && !BACKEND_NAMES.includes(requested)) {
    throw new BackendError(
      String(requested),
      `unknown backend '${String(requested)}'; expected auto, ${BACKEND_NAMES.join(', ')}`,
    );
  }
  const tf = await importTF(String(requested));
  if (requested !== 'auto') {
    const detail = await activate(tf, requested);
    log(`backend: ${requested}${detail ? ` (${detail})` : ''}`);
    return { name: requested, tf };
  }
  const passedOver: { name: BackendName; error: BackendError; missing: boolean }[] = [];
  for (const name of AUTO_ORDER) {
    try {
      const detail = await activate(tf, name);
      const why = describePassedOver(passedOver);
      const parts = [why && `auto: ${why}`, detail].filter((part) => part);
      log(`backend: ${name}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}`);
      return { name, tf };
    } catch (error) {
      if (!(error instanceof BackendError)) throw error;
      passedOver.push({ name, error, missing: error instanceof MissingPackage });
    }
  }
  // cpu is TF.js's own backend, so this is only reached if TF.js itself is broken
  throw new BackendError('auto', `no TF.js backend could be started: ${describePassedOver(passedOver)}`);
}

/**
 * TF.js as netc resolves it: the copy that selectBackend() starts backends on. A compiled module (netc
 * compile) takes TF.js from here instead of importing it itself, so that it shares netc's copy however netc
 * was installed (from a folder, netc resolves its own node_modules): two copies would each register every
 * kernel, and neither would see the backends the other started. Throws BackendError when TF.js is missing.
 */
export function loadTF(): Promise<TF> {
  return importTF('auto');
}

async function importTF(requested: string): Promise<TF> {
  try {
    // its core first, the rest when used (tf-core-first.ts); a bundle that holds TF.js loads all of it
    const tf = coreFirst(require) ?? (await requireTF<TF>('@tensorflow/tfjs', () => import('@tensorflow/tfjs') as unknown as Promise<TF>));
    // quiet wherever netc loads TF.js, not only where it selects a backend (see quietCpuBanner)
    quietCpuBanner(tf);
    return tf;
  } catch (error) {
    // a peer dependency: npm >= 7 installs it with netc; yarn, pnpm without auto-install-peers, or
    // --legacy-peer-deps leave it out
    throw new BackendError(
      requested,
      `@tensorflow/tfjs could not be loaded (${firstLine(error)}); netc runs on the project's TF.js: npm install @tensorflow/tfjs`,
    );
  }
}

/**
 * A tensor's values as float32, read with the asynchronous `data()`: `dataSync()` throws on the webgpu
 * backend in Node ("OffscreenCanvas is not defined"), and blocks on any GPU backend.
 */
export async function tensorData(t: tfjs.Tensor): Promise<Float32Array> {
  if (t.dtype === 'string') throw new TypeError('tensorData: a string tensor has no numeric values');
  const values = await t.data();
  return values instanceof Float32Array ? values : Float32Array.from(values as ArrayLike<number>);
}

// ---------------------------------------------------------------------------------------------------

/** An optional package that is not installed: 'auto' reports these as "not installed". */
class MissingPackage extends BackendError {}

/** A backend that is there but did not start; `reason` is the short form 'auto' reports when it moves on. */
class LoadFailure extends BackendError {
  constructor(
    backend: string,
    message: string,
    readonly reason: string,
  ) {
    super(backend, message);
  }
}

function describePassedOver(list: { name: BackendName; error: BackendError; missing: boolean }[]): string {
  const missing = list.filter((entry) => entry.missing).map((entry) => entry.name);
  const failed = list.filter((entry) => !entry.missing);
  const parts: string[] = [];
  if (missing.length > 0) {
    const names = andList(missing);
    // the backends' packages, named: "node is not installed" would read as if Node itself were missing
    const packages = missing.map((name) => `@tensorflow/tfjs-${name}`).join(', ');
    parts.push(`the ${names} backend${missing.length === 1 ? "'s package is" : "s' packages are"} not installed (${packages})`);
  }
  for (const entry of failed) {
    const reason = entry.error instanceof LoadFailure ? entry.error.reason : entry.error.message;
    parts.push(`${entry.name} failed (${reason})`);
  }
  return parts.join('; ');
}

/** Starts one backend; returns a short description for the log line, or throws BackendError. */
async function activate(tf: TF, name: BackendName): Promise<string> {
  let detail: string;
  switch (name) {
    case 'node-gpu':
      detail = await activateNode(tf, 'node-gpu', '@tensorflow/tfjs-node-gpu');
      break;
    case 'node':
      detail = await activateNode(tf, 'node', '@tensorflow/tfjs-node');
      break;
    case 'webgpu':
      detail = await activateWebGPU(tf);
      break;
    case 'wasm':
      detail = await activateWasm(tf);
      break;
    case 'cpu':
      await setBackendOrThrow(tf, 'cpu', 'cpu', 'the TF.js cpu backend');
      detail = '';
      break;
  }
  quietCpuBanner(tf);
  return detail;
}

async function setBackendOrThrow(tf: TF, name: BackendName, tfName: string, what: string): Promise<void> {
  // setBackend does not throw when a backend fails to start: it prints TF.js's warning with the cause
  // (left visible on purpose) and returns false.
  let ok: boolean;
  try {
    ok = await tf.setBackend(tfName);
  } catch (error) {
    throw new BackendError(name, `${what} could not be started: ${firstLine(error)}`);
  }
  if (!ok) throw new BackendError(name, `${what} could not be started (TF.js printed the cause above)`);
  await tf.ready();
}

/**
 * TF.js's cpu backend prints "Hi, looks like you are running TensorFlow.js in Node.js. To speed things up
 * dramatically, install our node backend..." through `log.warn` on its first tensor when IS_NODE is true.
 * `log.warn` stays quiet while the PROD flag is set, but PROD would also hide real warnings (a backend that
 * fails to start, with its stack), so it is set only while the cpu backend takes a throwaway first tensor.
 * Done whichever backend was chosen: a later `tf.setBackend('cpu')` reuses this instance, already quiet.
 */
function quietCpuBanner(tf: TF): void {
  if (tf.findBackendFactory('cpu') == null) return;
  const env = tf.env();
  const prod = env.getBool('PROD');
  env.set('PROD', true);
  try {
    const cpu = tf.findBackend('cpu');
    if (cpu != null) cpu.disposeData(cpu.write(new Float32Array(1), [1], 'float32'), true);
  } finally {
    env.set('PROD', prod);
  }
}

const require = createRequire(import.meta.url);

/**
 * A TF.js package by require(), not import(): they are CommonJS, and an import() of one has Node scan its
 * file and every file it re-exports (tfjs-core, -layers, -converter, -data, the backends: megabytes) for the
 * names it exports, which took 2-3x the time of loading them (about 0.4 of 0.6 s of CPU for @tensorflow/tfjs
 * and the wasm backend). Either way it is the one copy that Node's module cache holds. Where require() finds
 * no such package, `imported` (the same package by a literal import()) loads it: a bundle (bench/gpu.sh's,
 * by esbuild) holds TF.js inside itself, and esbuild bundles a literal import() but not a require() of a name.
 */
async function requireTF<T>(pkg: string, imported: () => Promise<T>): Promise<T> {
  try {
    return require(pkg) as T;
  } catch (error) {
    if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error;
    return imported();
  }
}

/** Whether a package can be resolved from here, without loading it. */
function isInstalled(pkg: string): boolean {
  try {
    require.resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n').find((line) => line.trim() !== '') ?? text).trim();
}

// ---- node, node-gpu ----------------------------------------------------------------------------------

async function activateNode(tf: TF, name: 'node' | 'node-gpu', pkg: string): Promise<string> {
  const alternatives = name === 'node-gpu' ? 'node, wasm or cpu' : 'wasm or cpu';
  if (!isInstalled(pkg)) {
    const needs =
      name === 'node-gpu'
        ? 'its install script downloads libtensorflow with CUDA; it needs an NVIDIA GPU with CUDA and cuDNN'
        : 'its install script downloads libtensorflow';
    throw new MissingPackage(name, `${pkg} is not installed (${needs}); use --backend ${alternatives}`);
  }
  // libtensorflow prints its INFO lines (CPU features, oneDNN) to stderr; keep its warnings and errors
  process.env['TF_CPP_MIN_LOG_LEVEL'] ??= '1';
  try {
    // a specifier in a variable: the package is optional, so TypeScript must not look for its types
    const specifier: string = pkg;
    await import(specifier);
  } catch (error) {
    const cause = firstLine(error);
    throw new LoadFailure(
      name,
      `${pkg} is installed but could not be loaded (${cause}); ` +
        `reinstall it (npm rebuild ${pkg}) or use --backend ${alternatives}`,
      `${pkg} is installed but could not be loaded: ${cause}`,
    );
  }
  // tfjs-node registers 'tensorflow' with the copy of @tensorflow/tfjs-core it resolves; if that is not ours,
  // our `tf` would never see it
  if (tf.findBackendFactory('tensorflow') == null) {
    throw new BackendError(
      name,
      `${pkg} loaded but registered its backend with another copy of @tensorflow/tfjs-core ` +
        `(this is ${tf.version_core}); install matching versions (npm dedupe) or use --backend ${alternatives}`,
    );
  }
  await setBackendOrThrow(tf, name, 'tensorflow', pkg);
  return '';
}

// ---- wasm ---------------------------------------------------------------------------------------------

let wasmPathsSet = false;

/**
 * The wasm backend in Node. It has three builds: plain, SIMD, and threaded+SIMD. In Node, TF.js detects
 * SIMD (V8 has it) but reports no thread support on purpose (WASM_HAS_MULTITHREAD_SUPPORT is false when
 * IS_NODE, tfjs#3830); forcing that flag on makes the backend fail to start, because emscripten starts
 * its pthread workers from blob: URLs, which Node's Worker rejects (ERR_WORKER_PATH). So the SIMD build,
 * single-threaded, is the fastest that works: a 256x256 matMul takes ~1.0 ms with SIMD, ~2.7 ms without it
 * (WASM_HAS_SIMD_SUPPORT forced off) and ~28 ms on the cpu backend (2-core AMD EPYC, Node 20).
 */
async function activateWasm(tf: TF): Promise<string> {
  let wasm: typeof import('@tensorflow/tfjs-backend-wasm');
  try {
    wasm = await requireTF('@tensorflow/tfjs-backend-wasm', () => import('@tensorflow/tfjs-backend-wasm'));
  } catch (error) {
    throw new BackendError(
      'wasm',
      `@tensorflow/tfjs-backend-wasm could not be loaded (${firstLine(error)}); npm install @tensorflow/tfjs-backend-wasm, or use --backend cpu`,
    );
  }
  if (!wasmPathsSet) {
    // Point the backend at the .wasm files next to its own Node bundle in node_modules, resolved the way
    // Node resolves the package, so this works from src/ (vitest, tsx) and from dist/ alike.
    const dir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
    if (!existsSync(join(dir, 'tfjs-backend-wasm-simd.wasm')) || !existsSync(join(dir, 'tfjs-backend-wasm.wasm'))) {
      throw new BackendError(
        'wasm',
        `the .wasm files of @tensorflow/tfjs-backend-wasm are missing from ${dir}; reinstall it (npm install @tensorflow/tfjs-backend-wasm)`,
      );
    }
    wasm.setWasmPaths(dir + sep);
    wasmPathsSet = true;
  }
  await setBackendOrThrow(tf, 'wasm', 'wasm', 'the wasm backend');
  registerWasmKernels(tf as never);
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true;
  const threads = wasm.getThreadsCount();
  return `${simd ? 'SIMD' : 'no SIMD'}, ${threads === 1 ? 'single-threaded' : `${threads} threads`}`;
}

// ---- webgpu -------------------------------------------------------------------------------------------

const VULKAN_HINT =
  "Dawn needs a Vulkan driver; without a GPU, install Mesa 25's lavapipe from Debian bookworm-backports " +
  "(apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1; bookworm's own Mesa 22.3 does not work)";

interface NavigatorWithGPU {
  gpu?: GPU;
}

/**
 * Whether Dawn finds an adapter, asked in a child process: where it finds none, Dawn's native code prints
 * its reason to stderr as a raw warning with a source path of the machine it was built on
 * ("Warning: Couldn't load Vulkan: ... at operator() (/home/runner/.../BackendVk.cpp:368)"), which no
 * JavaScript can silence in-process. Returns null when there is an adapter, else Dawn's reason (first line).
 */
function probeAdapter(): string | null {
  const script =
    'const { create } = await import(process.argv[1]);' +
    "const adapter = await create([]).requestAdapter({ powerPreference: 'high-performance' });" +
    "process.stdout.write(adapter ? 'adapter' : 'none'); process.exit(0);";
  const url = pathToFileURL(require.resolve('webgpu')).href;
  const probe = spawnSync(process.execPath, ['--input-type=module', '-e', script, url], { encoding: 'utf8', timeout: 60_000 });
  if (probe.stdout === 'adapter') return null;
  // Dawn's "Warning: REASON" lines, without the "    at FUNCTION (PATH:LINE)" lines under them
  const said = (probe.stderr ?? '').split('\n').filter((line) => line.trim() !== '' && !/^\s+at /.test(line));
  const reason = said.map((line) => line.replace(/^Warning:\s*/, '').trim())[0];
  if (probe.stdout === 'none') return reason ?? 'Dawn gave no reason';
  return reason ?? (probe.error ? firstLine(probe.error) : `the probe exited with ${probe.status ?? probe.signal}`);
}

/**
 * WebGPU in Node through Dawn (the 'webgpu' package; docs/gpu.md's Backends section names the Vulkan driver it
 * needs). Dawn's GPU object becomes `navigator.gpu` before the TF.js backend is imported, because that package registers
 * the backend only if `navigator.gpu` exists when it loads. Without a GPU, Dawn runs on software Vulkan:
 * correct, but slow. Whether there is an adapter is asked in a child process first (probeAdapter), so a
 * machine without one gets netc's message alone. Where there is one, Dawn may still print notes to stderr
 * as it opens it (on lavapipe: "Warning: maxDynamic...PerPipelineLayout artificially reduced"); they come
 * from native code in this process and cannot be silenced from here: the CLI drops them (cli/dawn-notes.ts).
 */
async function activateWebGPU(tf: TF): Promise<string> {
  const scope = globalThis as unknown as { navigator?: NavigatorWithGPU };
  if (scope.navigator?.gpu == null) {
    if (isInstalled('webgpu')) {
      const missing = probeAdapter();
      if (missing !== null) throw new BackendError('webgpu', `no WebGPU adapter found (Dawn: ${missing}): ${VULKAN_HINT}, or use --backend wasm or cpu`);
    }
    let dawn: typeof import('webgpu');
    try {
      dawn = await import('webgpu');
    } catch (error) {
      throw new BackendError(
        'webgpu',
        `the 'webgpu' package (Dawn for Node) could not be loaded (${firstLine(error)}); run npm install, or use --backend wasm or cpu`,
      );
    }
    // GPUBufferUsage, GPUMapMode, ...: only those this Node does not define itself
    for (const [key, value] of Object.entries(dawn.globals)) {
      if (!(key in globalThis)) (globalThis as Record<string, unknown>)[key] = value;
    }
    const gpu = dawn.create([]);
    if (scope.navigator != null) {
      // Node 21+ has a navigator of its own (without gpu)
      Object.defineProperty(scope.navigator, 'gpu', { value: gpu, configurable: true, writable: true });
    } else {
      Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
    }
  }
  const gpu = scope.navigator!.gpu!;
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (error) {
    throw new BackendError(
      'webgpu',
      `no WebGPU adapter (${firstLine(error)}): ${VULKAN_HINT}, or use --backend wasm or cpu`,
    );
  }
  if (adapter == null) {
    throw new BackendError('webgpu', `no WebGPU adapter found: ${VULKAN_HINT}, or use --backend wasm or cpu`);
  }
  try {
    await import('@tensorflow/tfjs-backend-webgpu');
  } catch (error) {
    throw new BackendError(
      'webgpu',
      `@tensorflow/tfjs-backend-webgpu could not be loaded (${firstLine(error)}); npm install @tensorflow/tfjs-backend-webgpu, or use --backend wasm or cpu`,
    );
  }
  if (tf.findBackendFactory('webgpu') == null) {
    throw new BackendError(
      'webgpu',
      '@tensorflow/tfjs-backend-webgpu was loaded before navigator.gpu was set up, so it did not register; ' +
        'select the backend through selectBackend only',
    );
  }
  await setBackendOrThrow(tf, 'webgpu', 'webgpu', 'the webgpu backend');
  const info = adapter.info;
  const described = info?.description || [info?.vendor, info?.architecture, info?.device].filter((s) => s).join(' ');
  const software = info?.architecture === 'software' || /llvmpipe|lavapipe|swiftshader/i.test(described);
  return `${described || 'unknown adapter'}${software ? '; software Vulkan: correct but slow' : ''}`;
}
