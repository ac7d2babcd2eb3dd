// bench/gpu.sh: `pack` builds a bundle that runs without node_modules, and `run --quick` runs the GPU
// benchmark from it: on webgpu where Dawn finds a Vulkan adapter (required with NETC_REQUIRE_WEBGPU=1, as
// .ci/run sets once it installed lavapipe), and on wasm. No timing is asserted.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'netc-gpu-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sh(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('bash', args, { cwd, timeout: 240_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe('bench/gpu.sh', () => {
  it('packs a bundle under 64 MiB that runs the GPU benchmark without node_modules', { timeout: 300_000 }, async () => {
    const bundle = join(dir, 'bundle');
    const pack = await sh(['bench/gpu.sh', 'pack', '--no-node', '--out', bundle], process.cwd());
    expect(pack.code, pack.out).toBe(0);
    let total = 0;
    for (const f of ['gpu-bench.mjs', 'node_modules/webgpu/index.js', 'node_modules/webgpu/dist/linux-x64/dawn.node', 'wasm/tfjs-backend-wasm-simd.wasm', 'examples/forum.net', 'examples/lenet.net']) {
      expect(existsSync(join(bundle, f)), f).toBe(true);
      total += statSync(join(bundle, f)).size;
    }
    expect(total).toBeLessThan(64 * 2 ** 20);

    // run it from a copy of the scripts elsewhere, so that no node_modules above it can be found
    const repo = join(dir, 'repo');
    cpSync('bench/gpu.sh', join(repo, 'bench', 'gpu.sh'));
    cpSync(bundle, join(repo, 'bundle'), { recursive: true });
    const run = await sh(['bench/gpu.sh', 'run', '--quick', '--bundle', 'bundle'], repo);
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain('== WebGPU adapter (Dawn)');
    const line = run.out.split('\n').find((l) => l.startsWith('RESULT '));
    expect(line, run.out).toBeDefined();
    const result = JSON.parse(line!.slice(7)) as { backends: Record<string, string>; rows: { backend: string; model: string; msPerStep?: number; error?: string }[] };
    for (const r of result.rows) expect(r.error, `${r.backend} ${r.model}`).toBeUndefined();
    const measured = (backend: string) => result.rows.filter((r) => r.backend === backend && Number.isFinite(r.msPerStep)).map((r) => r.model);
    // the forum rows: the fused step, then the op path
    expect(measured('wasm')).toEqual(['forum', 'forum', 'lenet']);
    if (result.backends.webgpu.startsWith('backend: webgpu')) expect(measured('webgpu')).toEqual(['forum', 'forum', 'forum', 'lenet', 'lenet']);
    else {
      expect(process.env['NETC_REQUIRE_WEBGPU'], `NETC_REQUIRE_WEBGPU=1 but ${result.backends.webgpu}`).not.toBe('1');
      expect(result.backends.webgpu).toMatch(/^not available: /);
    }
  });
});
