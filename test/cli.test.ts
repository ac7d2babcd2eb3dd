// The command line, run in-process through main() with captured output, and once as the real binary.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('netc check on what is not a .net text file', () => {
  const file = (name: string, bytes: Uint8Array | string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'netc-cli-')), name);
    writeFileSync(path, bytes);
    return path;
  };
  it('says a file with a NUL byte is binary, in one diagnostic at that byte, with no excerpt', async () => {
    const path = file('image.net', Buffer.concat([Buffer.from('model m(\n  x'), Buffer.alloc(2000, 0)]));
    const r = await run('check', path);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`${path}(2,4): error NET1010: '${path}' is not a .net text file (binary data at byte offset 12: a NUL byte)\n\n1 error in 1 of 1 file\n`);
  });
  it('says so for bytes that are not UTF-8, and names UTF-16', async () => {
    const latin1 = file('latin1.net', Buffer.from('model caf\xe9(input: [2]) { dense(1) }', 'latin1'));
    expect((await run('check', latin1)).err).toContain(`${latin1}(1,10): error NET1010: '${latin1}' is not a .net text file (binary data at byte offset 9: not UTF-8)`);
    const utf16 = file('utf16.net', Buffer.from('\ufeffmodel m', 'utf16le'));
    expect((await run('check', utf16)).err).toContain('(binary data at byte offset 0: a UTF-16 byte order mark; save the file as UTF-8)');
  });
  it('prints at most 50 diagnostics of a long file of mistakes, with their count', async () => {
    const path = file('many.net', '@\n'.repeat(3000));
    const r = await run('check', path);
    expect(r.code).toBe(1);
    expect(r.err.match(/: error NET/g)).toHaveLength(50);
    // 3000 unexpected characters and the missing model block
    expect(r.err).toContain(`${path}: 2951 more errors are not shown`);
    expect(r.err).toContain('3001 errors in 1 of 1 file');
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

  it('prints the WGSL kernels of the step after the wgsl pass, or why there are none', async () => {
    const r = await run('ir', 'examples/forum.net', '--after', 'wgsl');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^WGSL step of forum \(grouped\) for N=15, batch 5: 8 compute kernels/);
    expect(r.out).toContain('  | fn main(@builtin(global_invocation_id) gid: vec3<u32>) {');
    const lenet = await run('ir', 'examples/lenet.net', '--after', 'wgsl');
    expect(lenet.code).toBe(0);
    expect(lenet.out).toMatch(/^WGSL step of lenet5 \(grouped\) for N=30, batch 64: \d+ compute kernels/);
    const mlp = await run('ir', 'examples/mnist-mlp.net', '--after', 'wgsl');
    expect(mlp.code).toBe(0);
    expect(mlp.out).toMatch(/^WGSL step of mlp \(grouped\) for N=8, batch 64: 10 compute kernels/);
    expect(mlp.out).toContain('forward dropout_1: dropout');
    const resnet = await run('ir', 'examples/residual.net', '--after', 'wgsl');
    expect(resnet.code).toBe(0);
    expect(resnet.out).toMatch(/^WGSL step of resnet \(grouped\) for N=10, batch 32: 22 compute kernels/);
    expect(resnet.out).toContain('gradient dense_1: its 2 readers\' gradients added up');
    const kfold = await run('ir', 'examples/kfold-moons.net', '--after', 'wgsl');
    expect(kfold.code).toBe(0);
    expect(kfold.out).toMatch(/^no WGSL step for moons: it does not cover members' own input rows \(a split\)/);
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
  it('a count above 2^53 is exit code 2, not rounded', async () => {
    const r = await run('train', 'examples/xor.net', '--steps', '9007199254740993');
    expect(r.code).toBe(2);
    expect(r.err).toContain("expected an integer up to 9007199254740991 (2^53 - 1), got '9007199254740993'");
  });
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
