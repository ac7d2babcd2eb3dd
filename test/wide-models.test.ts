// A model too wide for the machine is refused by the memory estimate before anything is allocated, and the
// refusal names the real cause (issue 37 item 8 and the out-of-memory advice): `netc train` of
// dense(100000000) once died of V8 heap exhaustion generating a training step it had not yet estimated.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../src/pipeline.js';
import { memoryProblem } from '../src/cli/memory-budget.js';

const GB = 2 ** 30;
const wide = (units: number, batch = 16) => `model m(input: [4]) {\n  dense(${units})\n  dense(3, activation: softmax)\n}\ntrain {\n  data: iris()\n  loss: sparse_categorical_crossentropy\n  steps: 0\n  batch: ${batch}\n}\n`;

/** bin/netc.js with `args` in `cwd`, killed after `ms`; its exit code (null when killed), stderr and seconds. */
function run(args: string[], cwd: string, env: Record<string, string>, ms: number): Promise<{ code: number | null; err: string; seconds: number }> {
  const start = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve('bin/netc.js'), ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, err, seconds: (performance.now() - start) / 1000 });
    });
  });
}

describe('a model too wide for the machine', () => {
  it('the compiler up to the verified ensemble IR does not grow with a layer width', () => {
    const time = (units: number) => {
      const start = performance.now();
      const state = compile(wide(units), 'w.net', { after: 'verify-ensemble' });
      expect(state.ensemble).toBeDefined();
      return performance.now() - start;
    };
    time(10);
    expect(time(100_000_000)).toBeLessThan(2000);
  });

  it('netc train of dense(100000000) is refused by the estimate at once, naming the model as the cause', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-wide-'));
    writeFileSync(join(dir, 'wide.net'), wide(100_000_000));
    const r = await run(['train', 'wide.net', '--backend', 'cpu', '--out', 'run'], dir, { NETC_MEMORY_LIMIT_MB: '2000' }, 50_000);
    expect(r.code, r.err).toBe(1);
    expect(r.err).toMatch(/netc: 1 member needs about [\d.]+ GB of memory .* more than the 2\.0 GB NETC_MEMORY_LIMIT_MB; each member's model has 800000003 parameters \([\d.]+ GB of float32 weights before its optimizer state\); make the model smaller\n$/);
    expect(r.seconds).toBeLessThan(30);
  }, 60_000);

  it('names a huge batch as the cause, not the members', () => {
    const ensemble = compile(wide(10, 1_000_000_000), 'b.net').ensemble!;
    const problem = memoryProblem({ ensemble, optimizer: 'adam', batch: 1e9, backend: 'cpu', sharded: false }, { host: 16 * GB, hostWhy: 'available on this machine now', heap: 4 * GB });
    expect(problem).toMatch(/a batch of 1000000000 needs about [\d.]+ GB of activations; use a smaller batch$/);
  });
});
