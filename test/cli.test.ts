// The command line, run in-process through main() with captured output, and once as the real binary.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

describe('netc check', () => {
  it('checks many files and summarises each clean one', async () => {
    const r = await run('check', 'examples/forum.net', 'examples/lenet.net');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'examples/forum.net: ok: model forum, 15 members, 81 parameters per member, output [1]\n' +
        'examples/lenet.net: ok: model lenet5, 30 members, 61706 parameters per member, output [10]\n',
    );
  });

  it('exits 1 on errors and still checks the other files', async () => {
    const r = await run('check', 'examples/errors/labels.net', 'examples/xor.net');
    expect(r.code).toBe(1);
    expect(r.err).toContain('examples/errors/labels.net(4,14): error NET2009');
    expect(r.out).toContain('examples/xor.net: ok');
    expect(r.err).toContain('4 errors in 1 of 2 files');
  });

  it('reports a missing file without a stack trace', async () => {
    const r = await run('check', 'no/such/file.net');
    expect(r.code).toBe(1);
    expect(r.err).toBe("netc: cannot read 'no/such/file.net': no such file\n1 error in 1 of 1 file\n");
  });
});

describe('netc ir', () => {
  it('prints the IR after the last pass by default', async () => {
    const r = await run('ir', 'examples/xor.net');
    expect(r.code).toBe(0);
    expect(r.out).toContain('%1 = dense_1: dense(%0, units: 8, activation: tanh');
  });

  it('prints the IR after a named pass', async () => {
    const r = await run('ir', 'examples/xor.net', '--after', 'lower');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^model xor\n/);
  });

  it('refuses an unknown pass with exit code 2', async () => {
    const r = await run('ir', 'examples/xor.net', '--after', 'optimise');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--after takes a pass that leaves IR: lower, verify');
  });
});

describe('usage', () => {
  it('an unknown command is exit code 2', async () => expect((await run('frobnicate')).code).toBe(2));
  it('a missing argument is exit code 2', async () => expect((await run('check')).code).toBe(2));
  it('--help is exit code 0', async () => expect((await run('--help')).code).toBe(0));
});

describe('the installed binary', () => {
  const bin = new URL('../bin/netc.js', import.meta.url).pathname;
  it('is built (npm ci runs the build through `prepare`)', () => {
    expect(existsSync(new URL('../dist/cli/main.js', import.meta.url)), 'dist/ is missing: run npm run build').toBe(true);
  });
  it('checks the examples with exit code 0', () => {
    const out = execFileSync('node', [bin, 'check', 'examples/forum.net'], { encoding: 'utf8' });
    expect(out).toContain('examples/forum.net: ok');
  });
  it('exits 1 with diagnostics and no stack trace for a bad file', () => {
    const r = spawnSync('node', [bin, 'check', 'examples/errors/syntax.net'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('error NET1003');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('internal errors', () => {
  it('say that they are a bug in netc, with exit code 70', async () => {
    const { passes } = await import('../src/pipeline.js');
    const { vi } = await import('vitest');
    const lower = passes.find((p) => p.name === 'lower')!;
    const spy = vi.spyOn(lower, 'run').mockImplementation(() => {
      throw new Error('boom');
    });
    try {
      const r = await run('check', 'examples/xor.net');
      expect(r.code).toBe(70);
      expect(r.err).toContain('netc: internal error: Error: boom');
      expect(r.err).toContain('This is a bug in netc, not in your file');
    } finally {
      spy.mockRestore();
    }
  });
});
