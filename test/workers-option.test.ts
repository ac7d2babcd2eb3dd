// issue 24, item 15: `--workers 99999` started 99,999 processes (load average 120). The count is capped at the
// members and at a few per core, with one warning line that says what was used.
import { describe, expect, it } from 'vitest';
import { availableParallelism } from 'node:os';
import { plural } from '../src/util/plural.js';
import { makeTransport, workerCount, workersPerCore } from '../src/cli/transport-option.js';

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
