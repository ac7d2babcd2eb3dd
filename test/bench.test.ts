// The benchmark's quick mode (`npm run bench -- --quick`) completes and writes well-formed results: every
// kind of row (netc by lowering and engine, the naive loop, PyTorch per version, jax-js, netc train end to
// end, Seed 000's workload, the physical floor's place) with tiny N. No timing is asserted: the numbers
// depend on the machine and on what else runs.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeFloor, floorMs } from '../bench/floor.js';

const out = mkdtempSync(join(tmpdir(), 'netc-bench-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function runQuick(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bench/bench.ts', '--quick', '--out', out], { timeout: 480_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);

describe('npm run bench -- --quick', () => {
  it('completes and writes results.json and RESULTS.md', { timeout: 540_000 }, async () => {
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

    // every configuration ran, with a time per step and its memory; netc's fused engine may be absent, and
    // then its rows say why instead of a time
    expect(results.rows.length).toBeGreaterThan(10);
    for (const row of results.rows) {
      const name = `${row.model} ${row.impl} ${row.lowering ?? row.method} ${row.engine ?? ''} N=${row.n}`;
      expect(row.error, name).toBeUndefined();
      expect(['forum', 'lenet']).toContain(row.model);
      expect(['naive', 'netc', 'torch', 'jax']).toContain(row.impl);
      if (row.impl === 'netc') expect(['ops', 'fused']).toContain(row.engine);
      if (row.unavailable !== undefined) {
        expect(row.impl === 'netc' && row.engine === 'fused', name).toBe(true);
        expect(typeof row.unavailable).toBe('string');
        expect(row.measured).toBeUndefined();
        continue;
      }
      expect(finite(row.msPerStep) && row.msPerStep > 0).toBe(true);
      expect(row.measured.steps).toBeGreaterThan(0);
      expect(row.measured.peakRss).toBeGreaterThan(0);
      expect(finite(row.membersPerGbRss)).toBe(true);
      expect(finite(row.measured.lastLoss)).toBe(true);
      if (row.impl === 'torch' || row.impl === 'jax') continue;
      expect(row.measured.tfBytes).toBeGreaterThan(0);
      expect(finite(row.membersPerGbTf)).toBe(true);
    }

    // the grouped forum row twice: engine fused (measured, or not with the reason) and engine ops
    const grouped15 = results.rows.filter((r: { model: string; impl: string; lowering: string; n: number }) => r.model === 'forum' && r.impl === 'netc' && r.lowering === 'grouped' && r.n === 15);
    expect(grouped15.map((r: { engine: string }) => r.engine).sort()).toEqual(['fused', 'ops']);
    const fused15 = grouped15.find((r: { engine: string }) => r.engine === 'fused');
    expect(finite(fused15.msPerStep) || typeof fused15.unavailable === 'string').toBe(true);
    expect(r.stdout).toMatch(/netc grouped fused on wasm: (\d|— \()/);

    // PyTorch: a tiny row (forum bmm at N=15, one thread) with every torch version found, one row per
    // version; otherwise the bench says why not and carries on
    expect(typeof results.torch.note).toBe('string');
    const torchRows = results.rows.filter((r: { impl: string }) => r.impl === 'torch');
    if (results.torch.available) {
      expect(r.stdout).toMatch(/PyTorch/);
      const versions = results.torch.all.map((t: { torch: string }) => t.torch);
      expect(new Set(versions).size).toBe(versions.length);
      expect(versions[0]).toBe(results.versions.torch);
      expect(torchRows.map((t: { model: string; method: string; n: number; torch: string }) => `${t.torch} ${t.model} ${t.method} ${t.n}`)).toEqual(versions.map((v: string) => `${v} forum bmm 15`));
      for (const t of torchRows) expect(t.measured.threads).toBe(1);
      const s15 = results.speedups.find((s: { model: string; n: number; lowering: string; engine: string }) => s.model === 'forum' && s.n === 15 && s.lowering === 'grouped' && s.engine === 'ops');
      expect(finite(s15.overTorch.bmm)).toBe(true);
    } else {
      expect(torchRows).toEqual([]);
      expect(r.stdout).toMatch(/torch: PyTorch not measured: .*carrying on without it/);
    }

    // jax-js: the forum step at N=15 (a devDependency, so there unless --no-jax)
    const jaxRows = results.rows.filter((r: { impl: string }) => r.impl === 'jax');
    if (results.jax.available) {
      expect(jaxRows.map((j: { model: string; n: number }) => `${j.model} ${j.n}`)).toEqual(['forum 15']);
      expect(jaxRows[0].measured.threads).toBe(1);
      expect(jaxRows[0].measured.jax).toBe(results.versions.jax);
      const s15 = results.speedups.find((s: { model: string; n: number; lowering: string; engine: string }) => s.model === 'forum' && s.n === 15 && s.lowering === 'grouped' && s.engine === 'ops');
      expect(finite(s15.overJax)).toBe(true);
    } else expect(jaxRows).toEqual([]);

    const lowerings = new Set(results.rows.filter((r: { impl: string }) => r.impl === 'netc').map((r: { lowering: string }) => r.lowering));
    expect([...lowerings].sort()).toEqual(['blockdiag', 'grouped', 'loop']);
    for (const s of results.speedups) expect(s.speedup === null || finite(s.speedup)).toBe(true);

    // netc train end to end at N=15, against a PyTorch user's loop where torch imports
    expect(results.train.rows.map((t: { n: number }) => t.n)).toEqual([15]);
    const train15 = results.train.rows[0];
    expect(train15.netcError).toBeUndefined();
    expect(train15.netc.steps).toBe(results.train.steps);
    expect(train15.netc.members).toBe(15);
    expect(finite(train15.netc.memberStepsPerSecond) && train15.netc.memberStepsPerSecond > 0).toBe(true);
    expect(finite(train15.netc.seconds)).toBe(true);
    expect(train15.torch.length).toBe(results.torch.available ? 1 : 0);
    for (const t of train15.torch) {
      expect(t.error).toBeUndefined();
      expect(t.result.steps).toBe(results.train.steps);
      expect(finite(t.result.memberStepsPerSecond) && t.result.memberStepsPerSecond > 0).toBe(true);
    }

    // JAX on XLA (bench/jax_xla.py): the forum at N=15 on one XLA thread beside netc train where a Python
    // imports jax; otherwise (CI) skipped at once, with the reason
    expect(typeof results.jaxXla.note).toBe('string');
    if (results.jaxXla.available) {
      expect(train15.jax.error).toBeUndefined();
      expect(train15.jax.result.threads).toBe(1);
      expect(train15.jax.result.steps).toBe(results.train.steps);
      expect(finite(train15.jax.result.memberStepsPerSecond) && train15.jax.result.memberStepsPerSecond > 0).toBe(true);
    } else {
      expect(train15.jax).toBeUndefined();
      expect(r.stdout).toMatch(/jax \(Python, XLA\): JAX \(Python\) not measured: /);
    }

    // Seed 000's workload: netc train with its defaults and with one checkpoint, and PyTorch's two versions
    expect(results.seed000.netc.length).toBe(2);
    for (const v of results.seed000.netc) {
      expect(v.error).toBeUndefined();
      expect(v.result.steps).toBe(results.seed000.steps);
      expect(finite(v.result.seconds) && v.result.seconds > 0).toBe(true);
    }
    expect(results.seed000.torch.length).toBe(results.torch.available ? 1 : 0);
    for (const t of results.seed000.torch) {
      expect(t.error).toBeUndefined();
      expect(t.steps).toBe(results.seed000.steps);
      expect(finite(t.naive.seconds) && finite(t.merged.seconds)).toBe(true);
    }

    // the physical floor has its place, empty until its inputs are measured
    expect(results.floor.rates === null ? typeof results.floor.missing : 'object').toBe(results.floor.rates === null ? 'string' : 'object');

    // compile time of every example
    expect(results.compile.files.length).toBeGreaterThanOrEqual(8);
    for (const f of results.compile.files) expect(finite(f.medianMs) && finite(f.coldMs)).toBe(true);

    // targets: PASS/MISS where measured, null where quick mode does not reach them
    // eleven speed, PyTorch (LeNet's against the torch loop in wall and in CPU time), memory and compile
    // targets, two scale-out targets per LeNet size (one in quick mode), then the fused step's eight (netc
    // train against torch and jax-js at three N, Seed 000, the floor), then the WGSL step against the webgpu
    // op path (quick mode: forum N=15 and LeNet N=2), then netc train's step against the bench's at N=15,
    // forum x100,000's memory while training and in all (quick mode: x10,000) and LeNet x30's netc train
    // against the PyTorch loop (not measured in quick mode); JAX on XLA's eight (netc train against it at three
    // N, the whole machine against JAX and PyTorch at N=1000, Seed 000's whole processes: three)
    expect(results.targets.length).toBe(11 + 2 + 8 + 2 + 4 + 8);
    // netc train's long run at N=15 trained, and its ratio to the bench's step is measured
    expect(results.train.steady.error).toBeNull();
    const steadyTarget = results.targets.find((t: { name: string }) => t.name.startsWith("netc train's ms per step"));
    expect(typeof steadyTarget.value).toBe('number');
    // the memory run trained, and its process's peak was read
    expect(results.train.memory.error).toBeNull();
    expect(finite(results.train.memory.result.peakRss)).toBe(true);
    expect(results.targets.filter((t: { name: string }) => t.name.includes('peak RSS') && t.name.startsWith('forum x')).length).toBe(2);
    // quick mode runs no PyTorch LeNet at N=30: the CPU-time target is there, not measured
    const cpuTarget = results.targets.find((t: { name: string }) => t.name.includes('CPU ms per step'));
    expect(cpuTarget.pass).toBeNull();
    // LeNet's generated step ran, with its CPU time per step beside the wall clock's
    const lenetFused = results.rows.filter((r: { model: string; engine?: string }) => r.model === 'lenet' && r.engine === 'fused');
    expect(lenetFused.length).toBeGreaterThan(0);
    for (const r of lenetFused) expect(finite(r.measured.cpuMsMedian) && finite(r.measured.cpuMsMin)).toBe(true);
    // the forum and LeNet steps on webgpu, fused WGSL and ops: measured, or failed where there is no adapter
    expect(results.webgpu.map((r: { model: string; engine: string }) => `${r.model} ${r.engine}`)).toEqual(['forum fused', 'forum ops', 'lenet fused', 'lenet ops']);
    for (const r of results.webgpu) expect(finite(r.msPerStep) || (typeof r.error === 'string' && process.env['NETC_REQUIRE_WEBGPU'] !== '1'), r.error).toBe(true);
    if (results.webgpu.every((r: { msPerStep: number }) => finite(r.msPerStep))) expect(readFileSync(join(out, 'RESULTS.md'), 'utf8')).toContain('| model | N | fused WGSL ms/step | op path ms/step | op path / fused |');
    const seedTarget = results.targets.find((t: { name: string }) => t.name.startsWith("Seed 000's workload"));
    expect(seedTarget.pass === null ? !results.torch.available : typeof seedTarget.value === 'number').toBe(true);
    for (const t of results.targets) {
      expect(typeof t.name).toBe('string');
      expect(typeof t.required).toBe('string');
      expect([true, false, null]).toContain(t.pass);
    }

    const md = readFileSync(join(out, 'RESULTS.md'), 'utf8');
    expect(md).toMatch(/^# netc benchmark results/);
    expect(md).toContain('| N | naive ms/step | netc fused ms/step | speed-up | netc ops ms/step | speed-up |');
    expect(md).toContain('### Forum step side by side');
    expect(md).toMatch(/\| physical floor /);
    expect(md).toContain('## `netc train` end to end');
    expect(md).toContain("## Seed 000's workload");
    expect(md).toContain('## Memory');
    expect(md).toContain('## Compile time');
    expect(md).toContain('## Targets');
  });
});

describe('the physical floor (bench/floor.ts)', () => {
  it('is the longer of the arithmetic at GFLOP/s and the traffic at GB/s', () => {
    // 2 MFLOP at 10 GFLOP/s: 0.2 ms; 1 MB at 20 GB/s: 0.05 ms
    expect(floorMs({ flops: 2e6, bytes: 1e6 }, { gflops: 10, gbps: 20 })).toBeCloseTo(0.2, 12);
    expect(floorMs({ flops: 2e6, bytes: 8e6 }, { gflops: 10, gbps: 20 })).toBeCloseTo(0.4, 12);
    expect(describeFloor({ flops: 2e6, bytes: 1e6 }, { gflops: 10, gbps: 20 })).toMatch(/^0\.200 ms \(compute: /);
    expect(describeFloor({ flops: 2e6, bytes: 8e6 }, { gflops: 10, gbps: 20 })).toMatch(/^0\.400 ms \(memory: /);
  });
});
