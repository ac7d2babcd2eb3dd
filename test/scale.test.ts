// Scale-out: a population trained in shards by worker processes on this machine (--workers) or by
// `netc worker` processes through a BullMQ queue on a real Redis (--queue) ends byte-identical to the
// same run in one process, with PBT, halving and early stopping, under every lowering — also when a
// worker is killed with SIGKILL in the middle of a job.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { expectSameRun, runFiles } from './run-files.js';

const bin = new URL('../bin/netc.js', import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), 'netc-scale-'));

const source = (members: number, vary: string, schedules: string, extra = '') => `model m(input: [2]) {
  dense(32, activation: relu)
  dropout(0.2)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 7 ${vary} }
train { data: moons(n: ${extra ? 2000 : 400}, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: adam(lr: 0.01) batch: ${extra ? 10 : 20} epochs: 4 }
${schedules}
`;
const PBT_ES = 'schedule pbt { every: 1 epochs, metric: loss, quantile: 0.25 }\nschedule early_stopping { patience: 1, metric: val_loss, min_delta: 0.02 }';

function file(text: string): string {
  const path = join(tmp(), 'pop.net');
  writeFileSync(path, text);
  return path;
}



/** Trains `f` in one process, the reference every sharded run must equal. */
async function straight(f: string, ...extra: string[]): Promise<string> {
  const out = tmp();
  const r = await netc('train', f, '--backend', 'cpu', ...extra, '--out', out);
  expect(r.code, r.err).toBe(0);
  return out;
}

describe('--workers: worker processes on this machine', () => {
  it.each(['grouped', 'loop'])('with PBT and early stopping under %s, equals one process', async (lowering) => {
    const f = file(source(8, 'vary lr: loguniform(0.001, 0.1)', PBT_ES));
    const reference = await straight(f, '--lowering', lowering);
    const out = tmp();
    const r = await netc('train', f, '--backend', 'cpu', '--lowering', lowering, '--workers', '2', '--out', out);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('training in shards through 2 local workers');
    expectSameRun(out, reference);
    expect(readFileSync(join(reference, 'events.jsonl'), 'utf8')).toMatch(/"exploit"/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ transport: '2 local workers', shards: 2 });
  });

  it('under blockdiag, sums run over whole block rows, whose length is the shard size: equal within 1e-5', async () => {
    // the masked matMul adds exact zeros for the other members, but its tiles fall differently for another
    // member count, so the member's own products are summed in another grouping (rounding differs)
    const f = file(source(8, 'vary lr: loguniform(0.001, 0.1)', 'schedule pbt { every: 1 epochs, metric: loss, quantile: 0.25 }'));
    const reference = await straight(f, '--lowering', 'blockdiag');
    const out = tmp();
    expect((await netc('train', f, '--backend', 'cpu', '--lowering', 'blockdiag', '--workers', '2', '--out', out)).code).toBe(0);
    const [a, b] = [runFiles(reference), runFiles(out)];
    expect(b['events.jsonl']).toEqual(a['events.jsonl']);
    const bin = Object.keys(a).find((k) => k.endsWith('.bin'))!;
    const [x, y] = [a[bin] as Buffer, b[bin] as Buffer].map((buf) => new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4));
    let worst = 0;
    x.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - y[i]) / Math.max(Math.abs(v), 1e-2))));
    console.log(`blockdiag, 2 workers vs one process: worst relative difference ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-5);
  });

  it('halving that empties a shard goes on with the other, and equals one process', async () => {
    // members 4..7 (the second shard) barely learn: the first halving stops all of them
    const f = file(source(8, 'vary lr: [0.02, 0.03, 0.04, 0.05, 1e-6, 2e-6, 3e-6, 4e-6]', 'schedule halving { every: 1 epochs, keep: 0.5, metric: loss }'));
    const reference = await straight(f);
    const out = tmp();
    expect((await netc('train', f, '--backend', 'cpu', '--workers', '2', '--out', out)).code).toBe(0);
    const stops = readFileSync(join(out, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(stops.filter((e) => e.step === stops[0].step).map((e) => e.member).sort()).toEqual([4, 5, 6, 7]);
    expectSameRun(out, reference);
  });

  it('a worker killed with SIGKILL is replaced and its job run again: the result does not change', async () => {
    const f = file(source(6, 'vary lr: loguniform(0.001, 0.1)', PBT_ES, 'slow'));
    const reference = await straight(f);
    const out = tmp();
    const run = netc('train', f, '--backend', 'cpu', '--workers', '2', '--out', out);
    const killed = await killAWorker(() => spawnSync('pgrep', ['-P', String(process.pid), '-f', 'worker-process'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number));
    const r = await run;
    expect(r.code, r.err).toBe(0);
    expect(killed).toBe(true);
    expectSameRun(out, reference);
  });
});

/** Waits until the workers are busy, then SIGKILLs one of them; false if none could be found in time. */
async function killAWorker(pids: () => number[]): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    await new Promise((r) => setTimeout(r, 25));
    const found = pids();
    if (found.length >= 2 && i > 40) {
      process.kill(found[0], 'SIGKILL');
      return true;
    }
  }
  return false;
}

// ---- through a BullMQ queue on a real Redis --------------------------------------------------------

const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedis) {
  const why = 'redis-server is not installed (apt-get install redis-server)';
  if (process.env.NETC_REQUIRE_REDIS === '1') it('Redis is required here (NETC_REQUIRE_REDIS=1)', () => expect.fail(why));
  else console.log(`SKIPPED: the --queue tests: ${why}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

describe.runIf(haveRedis)('--queue: netc worker processes through Redis', () => {
  let redis: ChildProcess;
  let url = '';
  const workers: { child: ChildProcess; log: () => string }[] = [];

  const startWorker = () => {
    let log = '';
    const child = spawn('node', [bin, 'worker', '--queue', url, '--backend', 'cpu'], { env: { ...process.env, NETC_WORKER_LOCK_MS: '1500' } });
    child.stderr!.on('data', (d) => void (log += d));
    const w = { child, log: () => log };
    workers.push(w);
    return w;
  };
  const serving = async (w: { log: () => string }) => {
    for (let i = 0; i < 400 && !w.log().includes('serving'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(w.log()).toContain('serving');
  };

  beforeAll(async () => {
    const port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 200 && spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 25));
    const [a, b] = [startWorker(), startWorker()];
    await Promise.all([serving(a), serving(b)]);
  });

  afterAll(() => {
    for (const w of workers) w.child.kill('SIGKILL');
    redis?.kill('SIGKILL');
  });

  it('two workers train the shards; the run equals one process, and each worker logs its jobs', async () => {
    const f = file(source(8, 'vary lr: loguniform(0.001, 0.1)', PBT_ES));
    const reference = await straight(f);
    const out = tmp();
    const r = await netc('train', f, '--backend', 'cpu', '--queue', url, '--out', out);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`through queue ${url}, 2 shards`);
    expectSameRun(out, reference);
    for (const w of workers.slice(0, 2)) expect(w.log()).toMatch(/job \d+: train 4 members/);
  });

  it('a worker killed with SIGKILL mid-job: its job goes to another worker, and the run does not change', async () => {
    const f = file(source(6, 'vary lr: loguniform(0.001, 0.1)', PBT_ES, 'slow'));
    const reference = await straight(f);
    const out = tmp();
    const run = netc('train', f, '--backend', 'cpu', '--queue', url, '--shards', '2', '--out', out);
    // both workers hold a job (2 active): kill the first
    let killed = false;
    for (let i = 0; i < 800 && !killed; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const active = Number(spawnSync('redis-cli', ['-u', url, 'llen', 'bull:netc-shards:active'], { encoding: 'utf8' }).stdout.trim());
      if (active === 2) killed = workers[0].child.kill('SIGKILL');
    }
    startWorker();
    const r = await run;
    expect(killed).toBe(true);
    expect(r.code, r.err).toBe(0);
    expectSameRun(out, reference);
  });

  it('Redis unreachable: a clear message and exit code 1, and no word of a checkpoint it does not have', async () => {
    const out = tmp();
    const r = await netc('train', file(source(2, '', '')), '--backend', 'cpu', '--queue', 'redis://127.0.0.1:1', '--out', out);
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot reach Redis at redis://127.0.0.1:1');
    expect(r.err).not.toContain('internal error');
    expect(r.err).not.toContain('continued from its last checkpoint');
    expect(r.err).toContain(`nothing was checkpointed yet; the run starts from its beginning with: netc train --resume ${out}`);
  });
});

describe.runIf(haveRedis)('--queue: a worker and then Redis lost mid-run', () => {
  it('says what it waits for every few seconds (the stalled job, then Redis), and stops after --queue-timeout with the resume command', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let log = '';
    const worker = spawn('node', [bin, 'worker', '--queue', url, '--backend', 'cpu'], { env: { ...process.env, NETC_WORKER_LOCK_MS: '1500' } });
    worker.stderr!.on('data', (d) => void (log += d));
    try {
      for (let i = 0; i < 400 && !log.includes('serving'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(log).toContain('serving');
      let err = '';
      const io = { out: () => {}, err: (t: string) => void (err += t) };
      const out = tmp();
      const { trainCommand } = await import('../src/cli/train-command.js');
      const run = trainCommand(file(source(4, '', '', 'slow')), { backend: 'cpu', queue: url, queueTimeout: 2, out, progress: false, progressSeconds: 1 }, io);
      // the worker dies holding its second job, which no other worker can take: a stalled wait
      for (let i = 0; i < 800 && !/job 1:/.test(log); i++) await new Promise((r) => setTimeout(r, 25));
      worker.kill('SIGKILL');
      for (let i = 0; i < 200 && !/waiting for 1 of 1 shard job/.test(err); i++) await new Promise((r) => setTimeout(r, 25));
      redis.kill('SIGKILL');
      const code = await run;
      expect(code, err).toBe(1);
      expect(err).toMatch(new RegExp(`netc: waiting for 1 of 1 shard job through ${url} for \\d+ s \\(a job whose worker died waits for the stalled-job check`));
      expect(err).toMatch(/netc: waiting for 1 of 1 shard job .*: Redis unreachable for \d+ s \(.*ECONNREFUSED.*\); the run stops after 2 s of it/);
      expect(err).toMatch(new RegExp(`netc: lost Redis at ${url}: unreachable for \\d+ s .*longer than --queue-timeout 2`));
      expect(err).toContain(`netc train --resume ${out}`);
      expect(err).not.toMatch(/\n\s+at |internal error/);
    } finally {
      worker.kill('SIGKILL');
      redis.kill('SIGKILL');
    }
  });
});
