// --backend webgpu where Dawn finds no adapter: netc's own one-line message, without the warning Dawn's
// native code prints (with the path of the machine it was built on).
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-webgpu-'));

describe('--backend webgpu', () => {
  it("where it cannot run, says why in netc's words, without Dawn's raw warning and its build paths", async () => {
    const bin = new URL('../bin/netc.js', import.meta.url).pathname;
    const r = spawnSync('node', [bin, 'train', 'examples/xor.net', '--steps', '1', '--backend', 'webgpu', '--engine', 'auto', '--out', join(tmp(), 'run')], { encoding: 'utf8' });
    if (r.status === 0) {
      // an adapter exists here: webgpu trains, xor.net by the fused WGSL step (Dawn may print its notes about software Vulkan's limits)
      expect(r.stdout).toContain('webgpu, grouped, fused WGSL step)');
      return;
    }
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^netc: no WebGPU adapter found .*Dawn needs a Vulkan driver/);
    expect(r.stderr).not.toMatch(/\/home\/runner|\.cpp:\d+|^Warning:/m);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
