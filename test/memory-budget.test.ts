// Out of memory is one line and exit code 1, never a bug report (issue 24, item 11): the population's
// memory is estimated before anything is allocated and a run that would not fit is refused with the
// estimate and the --resident K that fits (V8's fatal heap error cannot be caught, so the estimate must
// come first); what TF.js's WebAssembly heap throws at its limit is mapped to the same one line.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { compile } from '../src/pipeline.js';
import { memoryProblem, WASM_HEAP_BYTES } from '../src/cli/memory-budget.js';
import { estimateMemory } from '../src/train/memory.js';
import { dataSize } from '../src/data/load.js';
import { resourceMessage } from '../src/cli/resource-error.js';

const GB = 2 ** 30;
const budget = { host: 64 * GB, hostWhy: 'available on this machine now', heap: 4 * GB };
const ensemble = (file: string, members: number) => compile(`${file}`, 'x.net', { members }).ensemble!;
const FORUM = `model forum(input: [2]) { dense(20, activation: sigmoid) dense(1, activation: sigmoid) }
train { data: xor(n: 1000) loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 5 epochs: 1 }`;
const LENET = `model lenet(input: [28, 28, 1]) {
  conv2d(6, kernel: 5, padding: same, activation: relu) maxpool2d(2) conv2d(16, kernel: 5, activation: relu) maxpool2d(2)
  flatten() dense(120, activation: relu) dense(84, activation: relu) dense(10, activation: softmax)
}
train { data: mnist(limit: 100) loss: sparse_categorical_crossentropy optimizer: adam batch: 64 epochs: 1 }`;

describe('the memory estimate', () => {
  it('grows with the members: weights and optimizer slots per member, the batch on top', () => {
    const [a, b] = [1000, 4000].map((n) => estimateMemory(ensemble(FORUM, n), 'adam', 5, n));
    // forum: 81 parameters, adam's two slots
    expect(a.perResidentMember).toBeGreaterThan(81 * 3 * 4);
    expect(b.device / a.device).toBeCloseTo(4, 1);
    expect(b.host / a.host).toBeCloseTo(4, 1);
  });

  it('refuses LeNet x3000 on wasm with the --resident K that fits its 4 GB heap, and K passes', () => {
    const plan = { ensemble: ensemble(LENET, 3000), optimizer: 'adam', batch: 64, backend: 'wasm', sharded: false };
    const problem = memoryProblem(plan, budget)!;
    expect(problem).toMatch(/^training 3000 members at once needs about [\d.]+ GB, more than the wasm backend's 4\.0 GB WebAssembly heap; --resident (\d+) trains them in waves of \1 that fit$/);
    const k = Number(/--resident (\d+)/.exec(problem)![1]);
    expect(estimateMemory(plan.ensemble, 'adam', 64, 3000, k).device).toBeLessThanOrEqual(WASM_HEAP_BYTES);
    expect(memoryProblem({ ...plan, resident: k }, budget)).toBeUndefined();
    expect(memoryProblem({ ...plan, resident: k + 1 }, budget)).toMatch(/^training \d+ of 3000 members at once/);
    // worker processes hold the members on their own devices: only the host is checked here
    expect(memoryProblem({ ...plan, sharded: true }, budget)).toBeUndefined();
  });

  it("refuses ten million members before V8's heap would end the process", () => {
    const plan = { ensemble: ensemble(FORUM, 10_000_000), optimizer: 'adam', batch: 5, backend: 'wasm', sharded: false };
    expect(memoryProblem(plan, budget)).toMatch(/^10000000 members need about [\d.]+ GB of JavaScript objects .*more than V8's heap limit of 4\.0 GB; train fewer members/);
    expect(memoryProblem({ ...plan, ensemble: ensemble(FORUM, 100_000) }, budget)).toBeUndefined();
  });

  it('names the data set, not the members, when a generated set does not fit (issue 37)', () => {
    const file = (n: string) => FORUM.replace('xor(n: 1000)', `xor(n: ${n})`);
    const state = compile(file('1e12'), 'x.net', { members: 15 });
    const data = dataSize(state.program!.train!.data)!;
    // 1e12 examples of 2 float32 features and a float32 label
    expect(data).toEqual({ shown: 'xor(n: 1000000000000)', examples: 1e12, bytes: 12e12 });
    const plan = { ensemble: state.ensemble!, optimizer: 'adam', batch: 5, backend: 'wasm', sharded: false, data };
    expect(memoryProblem(plan, budget)).toBe('the data set (xor(n: 1000000000000): 1000000000000 examples, 11175.9 GB) does not fit in the 64.0 GB available on this machine now; use fewer examples');
    // ten million members that need 20 GB of JavaScript objects are still the members' problem beside a small set
    const many = { ...plan, ensemble: ensemble(FORUM, 10_000_000), data: dataSize(compile(FORUM, 'x.net').program!.train!.data) };
    expect(memoryProblem(many, budget)).toMatch(/; train fewer members/);
    // moons and spirals shuffle a copy: twice the bytes
    expect(dataSize(compile(file('1e12').replace('xor', 'moons'), 'x.net').program!.train!.data)!.bytes).toBe(24e12);
    expect(memoryProblem({ ...plan, data: dataSize(compile(file('1000000'), 'x.net').program!.train!.data) }, budget)).toBeUndefined();
  });

  it('netc train: NETC_MEMORY_LIMIT_MB below the estimate is one line, exit code 1, and nothing written', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'netc-mem-')), 'run');
    process.env.NETC_MEMORY_LIMIT_MB = '50';
    try {
      const r = await netc('train', 'examples/forum.net', '--members', '100000', '--steps', '1', '--out', out);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/\nnetc: 100000 members need about [\d.]+ GB of memory .*more than the 0\.05 GB NETC_MEMORY_LIMIT_MB; train fewer members\n$/);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(existsSync(out)).toBe(false);
    } finally {
      delete process.env.NETC_MEMORY_LIMIT_MB;
    }
  });

  it('netc train of xor(n: 1e12): one line naming the data set, exit code 1, and nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-mem-'));
    const net = join(dir, 'big.net');
    writeFileSync(net, FORUM.replace('xor(n: 1000)', 'xor(n: 1e12)'));
    const r = await netc('train', net, '--steps', '1', '--out', join(dir, 'run'));
    expect(r.code, r.err).toBe(1);
    expect(r.err).toMatch(/\nnetc: the data set \(xor\(n: 1000000000000\): 1000000000000 examples, 11175\.9 GB\) does not fit in the [\d.]+ GB available on this machine now; use fewer examples\n$/);
    expect(r.err).not.toContain('members');
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it("maps TF.js's WebAssembly heap failures to the out-of-memory line", () => {
    const oob = new WebAssembly.RuntimeError('memory access out of bounds');
    expect(resourceMessage(oob)).toMatch(/^out of memory \(memory access out of bounds\); train fewer members at once/);
    expect(resourceMessage(new RangeError('Invalid typed array length: 4294967296'))).toMatch(/^out of memory/);
    expect(resourceMessage(new RangeError('Maximum call stack size exceeded'))).toBeUndefined();
  });
});
