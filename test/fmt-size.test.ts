// netc fmt of a 50 MB file died of V8's out-of-memory error (issue 37 item 10): a file over the bound is
// refused before it is read, with a diagnostic, and left as it is; standard input the same.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fmtCommand, MAX_SOURCE_BYTES } from '../src/cli/fmt-command.js';

const run = (files: string[], stdin?: Buffer) => {
  let out = '';
  let err = '';
  const code = fmtCommand(files, {}, { out: (t) => void (out += t), err: (t) => void (err += t) }, () => stdin ?? Buffer.alloc(0));
  return { code, out, err };
};

describe('netc fmt of a file too large', () => {
  const big = 'model m(input: [4]) {\n' + '  dense(10,activation:relu)\n'.repeat(Math.ceil(MAX_SOURCE_BYTES / 27) + 10) + '}\n';

  it('refuses a file over the bound with NET1013 at its start, and leaves it as it is', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'netc-fmt-big-')), 'big.net');
    writeFileSync(file, big);
    const r = run([file]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`${file}(1,1): error NET1013: '${file}' is ${(big.length / 2 ** 20).toFixed(1)} MB; netc reads .net files of up to ${MAX_SOURCE_BYTES / 2 ** 20} MB (a model file is a few KB)\n`);
    expect(readFileSync(file, 'utf8')).toBe(big);
    expect(statSync(file).size).toBe(big.length);
  });

  it('refuses standard input over the bound the same way', () => {
    const r = run(['-'], Buffer.from(big));
    expect(r.code).toBe(1);
    expect(r.err).toContain("<stdin>(1,1): error NET1013: '<stdin>' is");
    expect(r.out).toBe('');
  });
});
