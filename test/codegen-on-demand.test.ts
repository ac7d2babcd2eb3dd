// Code is generated only where it is asked for: netc check, the language server, train and compile stop
// at the verified ensemble IR; `netc ir --after fuse|wgsl` runs the one pass it names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, passes } from '../src/pipeline.js';
import { fileHost } from '../src/cli/host.js';

const path = 'examples/forum.net';
const source = readFileSync(path, 'utf8');
const compiled = (after?: string) => compile(source, path, { host: fileHost(path), ...(after ? { after } : {}) });

describe('code generation on demand', () => {
  it('the fuse and wgsl passes are the ones that generate code', () => {
    expect(passes.filter((p) => p.generates).map((p) => p.name)).toEqual(['fuse', 'wgsl']);
  });

  it('a compile that names no generating pass verifies the ensemble IR and generates nothing', () => {
    const state = compiled();
    expect(state.diagnostics).toEqual([]);
    expect(state.ensemble).toBeDefined();
    expect(state.run).toBeDefined();
    expect(state.fused).toBeUndefined();
    expect(state.wgsl).toBeUndefined();
  });

  it('--after fuse generates the wasm step alone, --after wgsl the kernels alone', () => {
    const fused = compiled('fuse');
    expect(fused.fused && 'step' in fused.fused ? fused.fused.step.bytes.length : 0).toBeGreaterThan(0);
    expect(fused.wgsl).toBeUndefined();
    const wgsl = compiled('wgsl');
    expect(wgsl.wgsl && 'step' in wgsl.wgsl).toBe(true);
    expect(wgsl.fused).toBeUndefined();
  });
});
