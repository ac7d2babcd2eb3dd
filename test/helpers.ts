// One-line test helpers, in the esbuild habit: each test states an input and the expected outcome.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { main } from '../src/cli/main.js';
import { formatDiagnostics } from '../src/diagnostics/format.js';
import { compile, type CompileOptions, type CompileState } from '../src/pipeline.js';
import { hasErrors } from '../src/diagnostics/diagnostic.js';
import { outputShape } from '../src/check/check-model.js';
import type { Shape } from '../src/core/arg-spec.js';

export function compileText(source: string, path = 'test.net', options: CompileOptions = {}): CompileState {
  return compile(source, path, options);
}

/** The diagnostics of `source` exactly as `netc check` prints them. */
export function diagnosticsText(source: string): string {
  return formatDiagnostics(compileText(source).diagnostics, source);
}

/** Asserts the printed diagnostics; pass '' to assert that the source is clean. */
export function expectDiagnostics(source: string, expected: string): void {
  expect(diagnosticsText(source).trim()).toBe(expected.trim());
}

/** Asserts that the source has an error with this code whose message contains `fragment`. */
export function expectError(source: string, code: number, fragment = '', options: CompileOptions = {}): void {
  const { diagnostics } = compileText(source, 'test.net', options);
  const match = diagnostics.find((d) => d.code === code && d.message.includes(fragment));
  expect(match, `expected NET${code} containing "${fragment}", got:\n${formatDiagnostics(diagnostics, source)}`).toBeDefined();
}

export function expectClean(source: string, options: CompileOptions = {}): CompileState {
  const state = compileText(source, 'test.net', options);
  expect(formatDiagnostics(state.diagnostics.filter((d) => d.category === 'error'), source)).toBe('');
  expect(hasErrors(state.diagnostics)).toBe(false);
  return state;
}

/** A model around `layers` with the given input, and no train block. */
export function modelSource(input: Shape, layers: string): string {
  return `model m(input: [${input.join(', ')}]) {\n${layers}\n}\n`;
}

/** The inferred output shape of `layers` applied to `input`. */
export function shapeOf(input: Shape, layers: string): Shape {
  const state = expectClean(modelSource(input, layers));
  return outputShape(state.program!.model);
}

/** Runs the CLI in this process, as `netc ARGV...` would, capturing what it prints. */
export async function netc(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

/** Runs node with `args` in `cwd`; resolves with its exit code and output. */
export function spawnNode(args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * null when Dawn finds a WebGPU adapter here, else why not. Probed directly, not through selectBackend, and in a
 * child process: Dawn's native code prints notes to stderr as it opens an adapter, which would land in the
 * test log (issue 37).
 */
export async function webgpuUnavailable(): Promise<string | null> {
  const script =
    "const { create } = await import('webgpu');" +
    "process.stdout.write((await create([]).requestAdapter()) ? 'adapter' : 'none'); process.exit(0);";
  const probe = await spawnNode(['--input-type=module', '-e', script], fileURLToPath(new URL('../', import.meta.url)));
  if (probe.out === 'adapter') return null;
  if (probe.out === 'none') {
    return 'Dawn found no WebGPU adapter (no usable Vulkan driver; on Debian bookworm: apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1)';
  }
  const said = probe.err.split('\n').find((line) => line.trim() !== '') ?? `the probe exited with ${probe.code}`;
  return `the webgpu package could not start Dawn: ${said}`;
}
