// The benchmark's quick mode (`npm run bench -- --quick`) completes and writes well-formed results. No
// timing is asserted: the numbers depend on the machine and on what else runs.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const out = mkdtempSync(join(tmpdir(), 'netc-bench-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function runQuick(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bench/bench.ts', '--quick', '--out', out], { timeout: 240_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);

describe('npm run bench -- --quick', () => {
  it('completes and writes results.json and RESULTS.md', { timeout: 300_000 }, async () => {
    const r = await runQuick();
    expect(r.code, r.stderr || r.stdout).toBe(0);
    expect(r.stdout).toMatch(/targets \(naive \/ netc/);

    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.quick).toBe(true);
    expect(finite(results.seconds)).toBe(true);
    expect(results.machine.cores).toBeGreaterThan(0);

    // scale-out: one process and --workers 2 were both measured (queue mode where redis-server exists)
    const modes = results.scale.rows.map((r: { mode: string; memberStepsPerSecond: number | null; error?: string }) => {
      expect(finite(r.memberStepsPerSecond), r.error).toBe(true);
      return r.mode;
    });
    expect(modes).toEqual(expect.arrayContaining(['one process', '--workers 2']));

    // the naive loop's backend and method were chosen by measurement, and said
    for (const model of ['forum', 'lenet']) {
      const choice = results.method.naive[model];
      expect(['cpu', 'wasm']).toContain(choice.backend);
      expect(['trainOnBatch', 'minimize']).toContain(choice.method);
      expect(choice.note).toMatch(/naive loop: /);
    }

    // every configuration ran, with a time per step and its memory
    expect(results.rows.length).toBeGreaterThan(10);
    for (const row of results.rows) {
      expect(row.error, `${row.model} ${row.impl} ${row.lowering ?? row.method} N=${row.n}`).toBeUndefined();
      expect(['forum', 'lenet']).toContain(row.model);
      expect(['naive', 'netc', 'torch']).toContain(row.impl);
      expect(finite(row.msPerStep) && row.msPerStep > 0).toBe(true);
      expect(row.measured.steps).toBeGreaterThan(0);
      expect(row.measured.peakRss).toBeGreaterThan(0);
      expect(finite(row.membersPerGbRss)).toBe(true);
      expect(finite(row.measured.lastLoss)).toBe(true);
      if (row.impl === 'torch') continue;
      expect(row.measured.tfBytes).toBeGreaterThan(0);
      expect(finite(row.membersPerGbTf)).toBe(true);
    }

    // PyTorch: a tiny row (forum bmm at N=15, one thread) where torch imports; otherwise the bench says why
    // not and carries on
    expect(typeof results.torch.note).toBe('string');
    const torchRows = results.rows.filter((r: { impl: string }) => r.impl === 'torch');
    if (results.torch.available) {
      expect(r.stdout).toMatch(/against PyTorch/);
      expect(torchRows.map((t: { model: string; method: string; n: number }) => `${t.model} ${t.method} ${t.n}`)).toEqual(['forum bmm 15']);
      expect(torchRows[0].measured.threads).toBe(1);
      const s15 = results.speedups.find((s: { model: string; n: number; lowering: string }) => s.model === 'forum' && s.n === 15 && s.lowering === 'grouped');
      expect(finite(s15.overTorch.bmm)).toBe(true);
    } else {
      expect(torchRows).toEqual([]);
      expect(r.stdout).toMatch(/torch: PyTorch not measured: .*carrying on without it/);
    }
    const lowerings = new Set(results.rows.filter((r: { impl: string }) => r.impl === 'netc').map((r: { lowering: string }) => r.lowering));
    expect([...lowerings].sort()).toEqual(['blockdiag', 'grouped', 'loop']);
    for (const s of results.speedups) expect(s.speedup === null || finite(s.speedup)).toBe(true);

    // compile time of every example
    expect(results.compile.files.length).toBeGreaterThanOrEqual(8);
    for (const f of results.compile.files) expect(finite(f.medianMs) && finite(f.coldMs)).toBe(true);

    // targets: PASS/MISS where measured, null where quick mode does not reach them
    // ten speed, PyTorch, memory and compile targets, then two scale-out targets per LeNet size (one in
    // quick mode)
    expect(results.targets.length).toBe(10 + 2);
    for (const t of results.targets) {
      expect(typeof t.name).toBe('string');
      expect(typeof t.required).toBe('string');
      expect([true, false, null]).toContain(t.pass);
    }

    const md = readFileSync(join(out, 'RESULTS.md'), 'utf8');
    expect(md).toMatch(/^# netc benchmark results/);
    expect(md).toContain('| N | naive ms/step | netc grouped ms/step | speed-up |');
    expect(md).toContain('## Memory');
    expect(md).toContain('## Compile time');
    expect(md).toContain('## Targets');
  });
});
