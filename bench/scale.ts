// Scale-out in `npm run bench`: member-steps per second of `netc train` in one process, with
// `--workers 2`, and through a BullMQ queue on a local redis-server with 2 `netc worker` processes, all in
// one run on this machine. Each is a real CLI run; the rate is summary.json's member_steps_per_second
// (training and the interval boundaries; process and worker start-up are outside it). Every mode starts
// fresh processes for each run (`--workers` forks its children, the queue mode gets two new `netc
// worker`s), so both scale-out modes pay the same first-job costs and the ratio measures the transport;
// the modes run in turns, `repeats` times, and a row is the median of its runs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ScaleRow {
  workload: string;
  members: number;
  steps: number;
  mode: 'one process' | '--workers 2' | 'queue, 2 workers';
  /** the median of the runs */
  memberStepsPerSecond: number | null;
  /** every run's member-steps/s, in the order run */
  samples?: number[];
  error?: string;
}

export interface ScalePlan {
  lenet: { members: number; steps: number }[];
  forum: { members: number; steps: number }[];
  /** runs of each mode, taken in turns */
  repeats?: number;
}

const LENET = (members: number) => `model lenet5(input: [28, 28, 1]) {
  conv2d(6, kernel: 5, padding: same, activation: relu)
  maxpool2d(2)
  conv2d(16, kernel: 5, activation: relu)
  maxpool2d(2)
  flatten()
  dense(120, activation: relu)
  dense(84, activation: relu)
  dense(10, activation: softmax)
}
ensemble { members: ${members} seed: 1 vary lr: loguniform(1e-4, 1e-2) }
train { data: mnist(limit: 2000) loss: categorical_crossentropy optimizer: adam(lr: 0.001) batch: 64 epochs: 1 }
`;

const FORUM = (members: number) => `model forum(input: [2]) {
  dense(20, activation: sigmoid)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 1 vary lr: loguniform(0.001, 0.1) }
train { data: xor(n: 1000, noise: 0.1) loss: binary_crossentropy optimizer: adam() batch: 5 epochs: 1 }
`;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function train(bin: string, file: string, steps: number, extra: string[]): Promise<number> {
  const out = mkdtempSync(join(tmpdir(), 'netc-bench-scale-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'train', file, '--backend', 'wasm', '--steps', String(steps), '--out', out, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`);
        resolve(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).member_steps_per_second);
      } catch (e) {
        reject(e);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

/** A local redis-server, or why not. */
async function startRedis(): Promise<{ url: string; stop(): void } | string> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return 'redis-server is not installed';
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 200 && spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 25));
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill('SIGKILL') };
}

/** Two fresh `netc worker` processes serving the queue, once both say so. */
async function startWorkers(bin: string, url: string): Promise<() => void> {
  const logs = ['', ''];
  const procs = logs.map((_, i) => {
    const w = spawn(process.execPath, [bin, 'worker', '--queue', url, '--backend', 'wasm'], { stdio: ['ignore', 'ignore', 'pipe'] });
    w.stderr.on('data', (d) => (logs[i] += d));
    return w;
  });
  for (let i = 0; i < 400 && !logs.every((l) => l.includes('serving')); i++) await new Promise((r) => setTimeout(r, 25));
  return () => procs.forEach((p: ChildProcess) => p.kill('SIGKILL'));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export async function measureScale(bin: string, plan: ScalePlan, log: (line: string) => void): Promise<{ rows: ScaleRow[]; queueNote?: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'netc-bench-scale-files-'));
  const redis = await startRedis();
  const queueNote = typeof redis === 'string' ? redis : undefined;
  const rows: ScaleRow[] = [];
  const workloads = [...plan.lenet.map((w) => ({ ...w, name: 'LeNet-5', text: LENET(w.members) })), ...plan.forum.map((w) => ({ ...w, name: 'forum MLP', text: FORUM(w.members) }))];
  try {
    for (const w of workloads) {
      const file = join(dir, `${w.name.replace(/\W/g, '')}-${w.members}.net`);
      writeFileSync(file, w.text);
      const modes: [ScaleRow['mode'], string[]][] = [
        ['one process', []],
        ['--workers 2', ['--workers', '2']],
        ...(typeof redis === 'string' ? [] : [['queue, 2 workers', ['--queue', redis.url, '--shards', '2']] as [ScaleRow['mode'], string[]]]),
      ];
      const samples = new Map<ScaleRow['mode'], number[]>(modes.map(([mode]) => [mode, []]));
      const errors = new Map<ScaleRow['mode'], string>();
      for (let rep = 0; rep < (plan.repeats ?? 1); rep++) {
        for (const [mode, extra] of modes) {
          log(`scale: ${w.name} x${w.members}, ${w.steps} steps, ${mode} (run ${rep + 1})`);
          const stopWorkers = mode === 'queue, 2 workers' && typeof redis !== 'string' ? await startWorkers(bin, redis.url) : undefined;
          try {
            const rate = await train(bin, file, w.steps, extra);
            samples.get(mode)!.push(rate);
            log(`  ${rate.toFixed(1)} member-steps/s`);
          } catch (e) {
            errors.set(mode, (e as Error).message);
            log(`  FAILED ${(e as Error).message}`);
          } finally {
            stopWorkers?.();
          }
        }
      }
      for (const [mode] of modes) {
        const runs = samples.get(mode)!;
        const error = errors.get(mode);
        rows.push({ workload: w.name, members: w.members, steps: w.steps, mode, memberStepsPerSecond: runs.length ? median(runs) : null, samples: runs, ...(error ? { error } : {}) });
      }
    }
  } finally {
    if (typeof redis !== 'string') redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, queueNote };
}

/** member-steps/s of a mode relative to another, for the same workload. */
export function scaleRatio(rows: ScaleRow[], workload: string, members: number, mode: ScaleRow['mode'], base: ScaleRow['mode']): number | undefined {
  const rate = (m: ScaleRow['mode']) => rows.find((r) => r.workload === workload && r.members === members && r.mode === m)?.memberStepsPerSecond ?? undefined;
  const a = rate(mode);
  const b = rate(base);
  return a && b ? a / b : undefined;
}
