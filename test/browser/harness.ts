// A real browser for tests: esbuild bundles an entry module for the browser, a loopback HTTP server
// serves it (with TF.js's .wasm files), and a headless Chromium driven by puppeteer-core runs it.
//
// The entry is a .ts or .js module exporting `run(input)` (or a default function) that returns a
// JSON-serialisable value. The harness picks the TF.js backend before calling it, so the same entry
// runs in Node on any backend too, and the two results can be compared.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export type BrowserBackend = 'cpu' | 'wasm' | 'webgpu';

/** Where Chromium is: $NETC_CHROMIUM when set (only there), else the usual Debian/Ubuntu/Google paths. */
export function findChromium(): string | undefined {
  const chosen = process.env['NETC_CHROMIUM'];
  const candidates = chosen ? [chosen] : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
  return candidates.find((path) => existsSync(path));
}

export interface BundleOptions {
  backend: BrowserBackend;
  /** esbuild aliases, e.g. { 'netc/kernels': '/abs/path/src/netc-kernels.ts' } */
  alias?: Record<string, string>;
  /** imports left out of the bundle (a compiled module's Node part loads `netc` and `node:*` with import()) */
  external?: string[];
}

export interface Bundle {
  js: string;
  /** every file esbuild put in the bundle, relative to the repository root */
  inputs: string[];
  /** the bundled files outside node_modules (the entry and what it imports), less the harness's boot module */
  sources: string[];
  /** the npm packages bundled, the boot module's TF.js included */
  packages: string[];
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The boot module: the backend's package, the entry, and a window.__netc.run that calls it. */
function bootSource(entry: string, backend: BrowserBackend): string {
  const backendImport = {
    cpu: '', // @tensorflow/tfjs registers cpu (and webgl) itself
    wasm: `import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm'; setWasmPaths('/wasm/');`,
    webgpu: `import '@tensorflow/tfjs-backend-webgpu';`,
  }[backend];
  return `
import * as tf from '@tensorflow/tfjs';
${backendImport}
import * as entry from ${JSON.stringify(resolve(entry))};
window.__netc = {
  async run(input) {
    if (!(await tf.setBackend(${JSON.stringify(backend)}))) throw new Error('tf.setBackend(${backend}) failed');
    await tf.ready();
    const run = entry.run ?? entry.default;
    if (typeof run !== 'function') throw new Error('the entry exports neither run() nor a default function');
    return { result: await run(input), backend: tf.getBackend() };
  },
};`;
}

/** Bundles the entry for the browser (esm, in memory). Fails on anything browser-only esbuild can't resolve. */
export async function bundleForBrowser(entry: string, options: BundleOptions): Promise<Bundle> {
  const out = await build({
    stdin: { contents: bootSource(entry, options.backend), resolveDir: root, loader: 'js', sourcefile: 'netc-boot.js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    alias: options.alias,
    external: options.external,
    // so that an entry outside the repository (a module netc compile wrote to a temp dir) finds TF.js
    nodePaths: [join(root, 'node_modules')],
  });
  const inputs = Object.keys(out.metafile.inputs);
  // '(disabled):fs' and the like: Node modules that TF.js's "browser" fields map to nothing
  const files = inputs.filter((input) => !input.startsWith('(disabled):') && input !== 'netc-boot.js');
  const packages = files.map((input) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1]);
  return {
    js: out.outputFiles[0].text,
    inputs,
    sources: files.filter((_, i) => !packages[i]),
    packages: [...new Set(packages.filter((name): name is string => !!name))].sort(),
  };
}

function wasmDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'));
}

// No COOP/COEP headers on purpose: without cross-origin isolation the page has no SharedArrayBuffer, so
// the wasm backend takes its single-threaded SIMD build, the one TF.js uses in Node (see runtime/backend.ts).
// The data: icon keeps Chromium from asking for /favicon.ico, whose 404 would read as a console error.
const PAGE = '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>netc</title><script type="module" src="/bundle.js"></script>';

/** Serves the page, the bundle and /wasm/*.wasm on 127.0.0.1 (a secure context, which WebGPU needs). */
async function serve(js: string): Promise<{ server: Server; url: string }> {
  const dir = wasmDir();
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const wasm = /^\/wasm\/([\w.-]+\.wasm)$/.exec(path);
    if (path === '/') response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else if (path === '/bundle.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else if (wasm && existsSync(join(dir, wasm[1]))) {
      response.writeHead(200, { 'content-type': 'application/wasm' }).end(readFileSync(join(dir, wasm[1])));
    } else response.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/` };
}

/**
 * Which WebGPU adapter the page gets on a machine without a GPU. Chromium blocklists CPU adapters
 * ("CPU adapters not fully tested or conformant") on its Vulkan backend, lavapipe's included, so:
 * - 'swiftshader': Dawn's Vulkan backend on the SwiftShader that ships inside Chromium, handed out as a
 *   fallback adapter once --enable-unsafe-webgpu is given; needs nothing from the system.
 * - 'angle-vulkan': Dawn's OpenGL ES backend on ANGLE on the system's Vulkan driver (here Mesa's
 *   lavapipe). It is a compatibility-mode adapter, so the page asks for featureLevel 'compatibility'.
 */
export type WebGPUAdapter = 'swiftshader' | 'angle-vulkan';

export interface LaunchOptions {
  backend: BrowserBackend;
  /** for backend 'webgpu'; 'swiftshader' unless given */
  adapter?: WebGPUAdapter;
}

/** Chromium's flags. --no-sandbox: tests run as root, where Chromium's sandbox refuses to start. */
export function chromiumFlags({ backend, adapter = 'swiftshader' }: LaunchOptions): string[] {
  if (backend !== 'webgpu') return ['--no-sandbox'];
  const angle = adapter === 'angle-vulkan' ? ['--use-webgpu-adapter=opengles', '--use-angle=vulkan'] : [];
  return ['--no-sandbox', '--enable-unsafe-webgpu', ...angle];
}

/** Makes every requestAdapter() in the page (TF.js's included) ask for a compatibility-mode adapter. */
function requestCompatibilityAdapters(): void {
  const gpu = (navigator as unknown as { gpu?: { requestAdapter(options?: object): Promise<unknown> } }).gpu;
  if (!gpu) return;
  const request = gpu.requestAdapter.bind(gpu);
  gpu.requestAdapter = (options?: object) => request({ ...options, featureLevel: 'compatibility' });
}

interface Session {
  page: Page;
  /** console errors, uncaught page errors and failed requests, in order */
  errors: string[];
}

/** Serves `js`, opens it in a fresh headless Chromium, calls `use`, and always closes both. */
async function withPage<T>(js: string, launch: LaunchOptions, use: (session: Session) => Promise<T>): Promise<T> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found (apt-get install chromium, or set NETC_CHROMIUM)');
  const { server, url } = await serve(js);
  let browser: Browser | undefined;
  try {
    browser = await puppeteer.launch({ executablePath, headless: true, args: chromiumFlags(launch) });
    const page = await browser.newPage();
    if (launch.backend === 'webgpu' && launch.adapter === 'angle-vulkan') await page.evaluateOnNewDocument(requestCompatibilityAdapters);
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(`console: ${m.text()}`)));
    page.on('pageerror', (e) => void errors.push(`page: ${e instanceof Error ? e.message : String(e)}`));
    page.on('requestfailed', (r) => void errors.push(`request: ${r.url()} ${r.failure()?.errorText ?? ''}`));
    await page.goto(url, { waitUntil: 'load' });
    return await use({ page, errors });
  } finally {
    await browser?.close().catch(() => undefined);
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
}

/** Rejects after `ms` with `what`; the caller's finally then closes the browser, ending the hung call. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RunOptions extends BundleOptions, LaunchOptions {
  /** the entry module's path */
  entry: string;
  /** passed to the entry's run(); must survive JSON */
  input: unknown;
  timeoutMs?: number;
}

export interface BrowserRun {
  result: unknown;
  /** tf.getBackend() in the page after the run */
  backend: string;
  /** console errors and page errors seen while the page ran; a failed run's error message has them too */
  errors: string[];
}

/** Bundles `entry`, runs its run(input) in headless Chromium on `backend`, and returns what it returned. */
export async function runInBrowser(options: RunOptions): Promise<BrowserRun> {
  const { js } = await bundleForBrowser(options.entry, options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  return withPage(js, options, async ({ page, errors }) => {
    const call = page.evaluate(async (input) => {
      const netc = (window as unknown as { __netc?: { run(input: unknown): Promise<{ result: unknown; backend: string }> } }).__netc;
      if (!netc) throw new Error('the bundle did not load (window.__netc is missing)');
      return netc.run(input);
    }, options.input as never);
    try {
      const { result, backend } = await within(timeoutMs, `the browser run took over ${timeoutMs} ms`, call);
      return { result, backend, errors };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error([`in the browser (${options.backend}): ${message}`, ...errors].join('\n  '));
    }
  });
}

export type AdapterProbe = { adapter: string } | { missing: string };

/**
 * What navigator.gpu.requestAdapter() gives in headless Chromium for `adapter`, or why nothing. An
 * 'angle-vulkan' request answered by a fallback adapter counts as missing: that is SwiftShader again.
 */
export async function probeBrowserWebGPU(adapter: WebGPUAdapter = 'swiftshader', timeoutMs = 20_000): Promise<AdapterProbe> {
  if (!findChromium()) return { missing: 'no Chromium found' };
  const probe = await withPage('', { backend: 'webgpu', adapter }, ({ page }) =>
    within(
      timeoutMs,
      'requestAdapter() did not answer',
      page.evaluate(async (): Promise<AdapterProbe> => {
        const gpu = (navigator as unknown as { gpu?: { requestAdapter(): Promise<{ info?: Record<string, unknown> } | null> } }).gpu;
        if (!gpu) return { missing: 'navigator.gpu is undefined' };
        const adapter = await gpu.requestAdapter();
        if (!adapter) return { missing: 'navigator.gpu.requestAdapter() returned null' };
        const info = adapter.info ?? {};
        const name = [info['vendor'], info['architecture']].filter(Boolean).join(' ') || 'an adapter that names no vendor';
        return { adapter: `${name}${info['isFallbackAdapter'] ? ' (fallback adapter)' : ''}` };
      }),
    ),
  );
  if (adapter === 'angle-vulkan' && 'adapter' in probe && probe.adapter.endsWith('(fallback adapter)')) {
    return { missing: `asked for ANGLE on Vulkan, got ${probe.adapter}` };
  }
  return probe;
}
