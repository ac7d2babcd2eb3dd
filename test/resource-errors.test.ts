// Errors of the machine, not of netc: a full disk, a read-only file system, no memory. They end in one
// line saying what ran out and exit code 1, never "a bug in netc" (exit code 70).
import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main.js';
import { passes } from '../src/pipeline.js';

async function failingWith(error: unknown) {
  const lower = passes.find((p) => p.name === 'lower')!;
  const spy = vi.spyOn(lower, 'run').mockImplementation(() => {
    throw error;
  });
  let err = '';
  try {
    const code = await main(['check', 'examples/xor.net'], { out: () => {}, err: (t) => void (err += t) });
    return { code, err };
  } finally {
    spy.mockRestore();
  }
}

const systemError = (code: string, syscall: string, path: string) => Object.assign(new Error(`${code}: something, ${syscall} '${path}'`), { code, syscall, path });

describe('resource errors', () => {
  it.each([
    ['ENOSPC', 'write', 'runs/x/population-19.bin', 'netc: cannot write runs/x/population-19.bin: no space left on the device (ENOSPC)'],
    ['EROFS', 'open', 'runs/x/run.json', 'netc: cannot open runs/x/run.json: the file system is read-only (EROFS)'],
    ['EACCES', 'mkdir', 'runs/x', 'netc: cannot mkdir runs/x: permission denied (EACCES)'],
    ['ENOMEM', 'read', 'data.csv', 'netc: cannot read data.csv: out of memory (ENOMEM)'],
  ])('%s is a message and exit code 1', async (code, syscall, path, message) => {
    const r = await failingWith(systemError(code, syscall, path));
    expect(r.code).toBe(1);
    expect(r.err).toBe(message + '\n');
  });

  it.each([
    [new RangeError('Array buffer allocation failed')],
    [new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded')],
    [new Error('Aborted(Cannot enlarge memory arrays to size 2147549184 bytes (OOM). ...)')],
  ])('running out of memory (%s) is a message and exit code 1', async (error) => {
    const r = await failingWith(error);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netc: out of memory \(.+\); train fewer members at once \(--members, or --resident K\) or use a smaller batch\n$/);
  });

  it('anything else is still a bug in netc, exit code 70', async () => {
    const r = await failingWith(new RangeError('Invalid array length'));
    expect(r.code).toBe(70);
    expect(r.err).toContain('This is a bug in netc');
  });
});
