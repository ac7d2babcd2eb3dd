// metrics.jsonl is written in batches (src/cli/line-buffer.ts), not one append per epoch; what a run
// reported is on disk before each checkpoint, at the end, and after a run that failed.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { LineBuffer } from '../src/cli/line-buffer.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-metrics-'));
const read = (path: string) => readFileSync(path, 'utf8');

describe('LineBuffer', () => {
  it('appends what was pushed when flushed, one newline after each line', () => {
    const path = join(tmp(), 'm.jsonl');
    writeFileSync(path, '');
    const lines = new LineBuffer(path, { chars: 1e6, ms: 1e9 });
    lines.push(['{"a":1}', '{"a":2}']);
    lines.push([]);
    lines.push(['{"a":3}']);
    expect(read(path)).toBe('');
    lines.flush();
    expect(read(path)).toBe('{"a":1}\n{"a":2}\n{"a":3}\n');
    lines.flush();
    expect(read(path)).toBe('{"a":1}\n{"a":2}\n{"a":3}\n');
  });

  it('writes by itself once `chars` are waiting, or `ms` after its last write', () => {
    const path = join(tmp(), 'm.jsonl');
    writeFileSync(path, '');
    const bySize = new LineBuffer(path, { chars: 10, ms: 1e9 });
    bySize.push(['12345']);
    expect(read(path)).toBe('');
    bySize.push(['1234']);
    expect(read(path)).toBe('12345\n1234\n');
    const byTime = new LineBuffer(path, { chars: 1e6, ms: 0 });
    byTime.push(['x']);
    expect(read(path)).toBe('12345\n1234\nx\n');
  });

  it('a write that fails keeps the lines for the next', () => {
    const dir = join(tmp(), 'gone');
    const lines = new LineBuffer(join(dir, 'm.jsonl'), { chars: 1e6, ms: 1e9 });
    lines.push(['a']);
    expect(() => lines.flush()).toThrow(/ENOENT/);
    lines.push(['b']);
    mkdirSync(dir);
    lines.flush();
    expect(read(join(dir, 'm.jsonl'))).toBe('a\nb\n');
  });
});

describe('metrics.jsonl of netc train', () => {
  it('keeps every epoch reported before the run failed', async () => {
    const dir = tmp();
    const file = join(dir, 'diverges.net');
    // one step an epoch; member 1's rate sends its loss past float32 at step 2, which under blockdiag ends the run
    writeFileSync(
      file,
      'model d(input: [2]) {\n  dense(4, activation: tanh)\n  dense(1)\n}\nensemble { members: 2 seed: 1 vary lr: [0.01, 1e30] }\ntrain { data: xor(n: 16) loss: mse optimizer: sgd batch: 16 epochs: 5 }\n',
    );
    let err = '';
    const out = join(dir, 'run');
    // no checkpoint before the end, which would write the lines before it
    const code = await main(['train', file, '--backend', 'cpu', '--lowering', 'blockdiag', '--checkpoint-every', '1000', '--out', out], { out: () => {}, err: (t) => void (err += t) });
    expect(code, err).toBe(1);
    expect(err).toContain('member 1 diverged (a non-finite loss) at step 2');
    const rows = read(join(out, 'metrics.jsonl')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.epoch, r.member])).toEqual([
      [1, 0],
      [1, 1],
    ]);
  });
});
