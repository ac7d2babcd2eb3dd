// issue 24, item 15: `--workers 99999` started 99,999 processes (load average 120). The count is capped at the
// members and at a few per core, with one warning line that says what was used; `--shards` under --queue is
// capped at the members and at maxShards the same way. Item 13: a worker killed with -9, written to before
// its exit is seen (EPIPE), is that worker's death: it is replaced and the job goes to the new one.
import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { plural } from '../src/util/plural.js';
import { makeTransport, maxShards, shardCount, workerCount, workersPerCore } from '../src/cli/transport-option.js';
import { LocalWorkers } from '../src/scale/local-workers.js';
import type { RunContext, ShardJob } from '../src/scale/shard-job.js';

describe('--workers K', () => {
  it('is cut to the members, then to a few per core, and says what it uses', () => {
    expect(workerCount(99999, 8, 2)).toEqual({ count: 8, warning: 'netc: warning: --workers 99999 is more than the 8 members to train: using 8 workers\n' });
    expect(workerCount(99999, 1000, 2)).toEqual({ count: 8, warning: `netc: warning: --workers 99999 is more than ${workersPerCore} per core of this machine's 2 cores: using 8 workers\n` });
    expect(workerCount(3, 1, 16)).toEqual({ count: 1, warning: 'netc: warning: --workers 3 is more than the 1 member to train: using 1 worker\n' });
  });

  it('is left as it is when it fits, and auto is one per core up to the members, without a warning', () => {
    expect(workerCount(4, 8, 2)).toEqual({ count: 4 });
    expect(workerCount('auto', 3, 16)).toEqual({ count: 3 });
    expect(workerCount('auto', 100, 16)).toEqual({ count: 16 });
  });

  it('makes that many workers (none is started before the run opens them)', async () => {
    let err = '';
    const transport = await makeTransport({ workers: 99999 }, 'cpu', { out: () => {}, err: (t) => void (err += t) }, 1_000_000);
    const cap = workersPerCore * availableParallelism();
    expect(transport?.slots).toBe(cap);
    expect(err).toBe(`netc: warning: --workers 99999 is more than ${workersPerCore} per core of this machine's ${plural(availableParallelism(), 'core')}: using ${cap} workers\n`);
    await transport?.close();
  });
});

describe('--shards K under --queue', () => {
  it('is cut to the members, then to maxShards, and says what it uses', () => {
    expect(shardCount(99999, 8)).toEqual({ count: 8, warning: 'netc: warning: --shards 99999 is more than the 8 members to train: using 8 shards\n' });
    expect(shardCount(99999, 1_000_000)).toEqual({ count: maxShards, warning: `netc: warning: --shards 99999 is more than ${maxShards}, the most netc cuts a population into: using ${maxShards} shards\n` });
    expect(shardCount(4, 8)).toEqual({ count: 4 });
  });
});

describe('a local worker killed with -9', () => {
  it('written to before its exit is seen (EPIPE): the worker is replaced and the job reaches the new one, no stack trace', async () => {
    const workers = new LocalWorkers(1, 'cpu');
    // the context is only read by a job: a job that cannot run comes back as the new worker's one-line error
    await workers.open({ id: 'epipe' } as unknown as RunContext);
    const [pid] = workers.pids();
    process.kill(pid!, 'SIGKILL');
    // block this thread (no events: its exit is not seen) until the child is surely gone, then write to it
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    const unhandled: unknown[] = [];
    const onError = (e: unknown) => unhandled.push(e);
    process.on('uncaughtException', onError);
    try {
      await expect(workers.run([{ kind: 'nothing' } as unknown as ShardJob])).rejects.toThrow(/^a worker failed: /);
      expect(workers.pids()[0]).not.toBe(pid);
    } finally {
      process.off('uncaughtException', onError);
      await workers.close();
    }
    expect(unhandled).toEqual([]);
  });
});
