// `netc compile FILE -o OUT` never writes over a file it reads: the .net file itself (under its own name,
// another spelling, a symbolic link or a hard link to it) or a data file the model's check read. Each is
// one line and exit 1, as cp's "are the same file" and gcc's "input file is the same as output file" are,
// and the file stays as it was.
import { linkSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';

const SOURCE = `model m(input: [2]) {
  dense(4, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 2 }
train { data: csv("d.csv", label: "y") loss: binary_crossentropy batch: 4 steps: 2 }
`;
const CSV = 'a,b,y\n0,1,1\n1,0,1\n0,0,0\n1,1,0\n';

let dir: string;
let net: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netc-compile-out-'));
  net = join(dir, 'm.net');
  writeFileSync(net, SOURCE);
  writeFileSync(join(dir, 'd.csv'), CSV);
  symlinkSync(net, join(dir, 'link.ts'));
  linkSync(net, join(dir, 'hard.ts'));
});

describe('netc compile -o', () => {
  it.each([
    ['the .net file itself', () => net, ''],
    ['the .net file spelt another way', () => `${dir}/./../${relative(join(dir, '..'), dir)}//m.net`, '(the same file under another name or through a link)'],
    ['the .net file spelt relative to the current directory', () => relative(process.cwd(), net), '(the same file under another name or through a link)'],
    ['a symbolic link to the .net file', () => join(dir, 'link.ts'), '(the same file under another name or through a link)'],
    ['a hard link to the .net file', () => join(dir, 'hard.ts'), '(the same file under another name or through a link)'],
  ])('refuses %s, and leaves it as it was', async (_, out, note) => {
    const r = await netc('compile', net, '-o', out());
    expect(r.code, r.err).toBe(1);
    expect(r.err).toBe(`netc: -o ${out()} is the input file ${net}${note ? ` ${note}` : ''}; write the module to a new .ts file, as in -o model.ts\n`);
    expect(readFileSync(net, 'utf8')).toBe(SOURCE);
  });

  it('refuses a data file the model reads, and leaves it as it was', async () => {
    const r = await netc('compile', net, '-o', join(dir, 'd.csv'));
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain(`netc: -o ${join(dir, 'd.csv')} is the input file ${join(dir, 'd.csv')}; write the module`);
    expect(readFileSync(join(dir, 'd.csv'), 'utf8')).toBe(CSV);
  });

  it('writes a new .ts file (the check can pass)', async () => {
    const r = await netc('compile', net, '-o', join(dir, 'model.ts'));
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'model.ts'), 'utf8')).toContain('export');
    expect(readFileSync(net, 'utf8')).toBe(SOURCE);
  });
});
