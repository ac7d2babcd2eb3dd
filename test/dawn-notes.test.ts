// Dawn's harmless notes ("Warning: maxDynamic...PerPipelineLayout artificially reduced ...", printed by native
// code on opening an adapter) never reach a user of `netc train --backend webgpu`, and nothing else is lost
// with them (issue 37, smaller things). The CLI test needs a WebGPU adapter: without one it is skipped with
// the reason printed, and NETC_REQUIRE_WEBGPU=1 makes a missing adapter fail, as in wgsl-step.test.ts.
import { describe, expect, it } from 'vitest';
import { NoteFilter, wantsDawnFilter } from '../src/cli/dawn-notes.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, webgpuUnavailable } from './helpers.js';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The CLI as a user runs it (bin/netc.js, which loads dist/: npm run build first). */
const cli = (...argv: string[]) => spawnNode(['bin/netc.js', ...argv], root);

const UNIFORM =
  'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.';
const STORAGE =
  'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.';

function filtered(chunks: string[]): { text: string; writes: string[] } {
  const writes: string[] = [];
  const filter = new NoteFilter((text) => writes.push(text));
  for (const chunk of chunks) filter.push(chunk);
  filter.end();
  return { text: writes.join(''), writes };
}

describe("the filter of Dawn's notes", () => {
  it('drops the known notes and keeps every other line, in order', () => {
    const real = "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file";
    const { text } = filtered([`${UNIFORM}\n${STORAGE}\nbackend: webgpu\n${real}\n`, `${UNIFORM} (and more)\n`]);
    expect(text).toBe(`backend: webgpu\n${real}\n${UNIFORM} (and more)\n`);
  });

  it('finds a note split across chunks at any point', () => {
    for (let cut = 1; cut < UNIFORM.length; cut += 7) {
      expect(filtered([`a\n${UNIFORM.slice(0, cut)}`, `${UNIFORM.slice(cut)}\nb\n`]).text).toBe('a\nb\n');
    }
  });

  it('passes a progress line on at once, without waiting for its end', () => {
    const { writes } = filtered(['\r\x1b[2Kepoch 1/1: step 5/10', '\r\x1b[2Kepoch 1/1: step 10/10\n']);
    expect(writes[0]).toBe('\r\x1b[2Kepoch 1/1: step 5/10');
  });

  it('gives back a held start of a line that ended with the stream', () => {
    expect(filtered(['Warning: max']).text).toBe('Warning: max');
  });

  it('is asked for by --backend webgpu only', () => {
    expect(wantsDawnFilter(['train', 'a.net', '--backend', 'webgpu'], {})).toBe(true);
    expect(wantsDawnFilter(['train', 'a.net', '--backend=webgpu'], {})).toBe(true);
    expect(wantsDawnFilter(['train', 'a.net', '--backend', 'wasm'], {})).toBe(false);
    expect(wantsDawnFilter(['train', 'a.net', '--backend', 'webgpu'], { NETC_DAWN_FILTERED: '1' })).toBe(false);
  });

  it("keeps the command's exit code and its own messages", async () => {
    const r = await cli('train', 'no-such.net', '--backend', 'webgpu');
    expect(r.code).toBe(1);
    expect(r.err).toBe("netc: cannot read 'no-such.net': no such file\n");
  });
});

const missing = await webgpuUnavailable();
const required = process.env['NETC_REQUIRE_WEBGPU'] === '1';
const skip = missing != null && !required;
if (skip) console.warn(`SKIPPED: netc train --backend webgpu's output was not checked: ${missing}`);

describe('netc train --backend webgpu', () => {
  it.skipIf(skip)("prints none of Dawn's notes", async () => {
    if (missing) throw new Error(`NETC_REQUIRE_WEBGPU=1 but ${missing}`);
    const out = join(mkdtempSync(join(tmpdir(), 'netc-dawn-notes-')), 'run');
    const r = await cli('train', 'examples/forum.net', '--backend', 'webgpu', '--steps', '2', '--out', out);
    rmSync(out, { recursive: true, force: true });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('backend: webgpu');
    expect(r.err).not.toMatch(/artificially reduced|PerPipelineLayout/);
    expect(r.err).not.toContain('looks like you are running TensorFlow.js in Node.js');
  }, 180_000);
});
