// Inputs that would hang `netc train`: a csv file with a header and no rows (an epoch of no batches never
// ended), data that leaves nothing to train on, and a FIFO as the .net file or the data (reading one waits
// for a writer). Each is refused with a diagnostic, exit code 1.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { netc } from './helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-data-'));
const net = (data: string, extra = '') => `model m(input: [2]) {\n  dense(1, activation: sigmoid)\n}\ntrain { data: ${data} loss: binary_crossentropy batch: 4 epochs: 1 ${extra} }\n`;

/** A folder with m.net reading `csv` as d.csv. */
function project(csv: string, extra = ''): string {
  const dir = tmp();
  writeFileSync(join(dir, 'd.csv'), csv);
  writeFileSync(join(dir, 'm.net'), net('csv("d.csv", label: "y")', extra));
  return dir;
}

const train = (dir: string, file = 'm.net') => netc('train', join(dir, file), '--backend', 'cpu', '--out', join(dir, 'run'));

describe('netc train refuses data it could never finish an epoch of', () => {
  it('a csv file with a header and no rows, at the header line', async () => {
    const dir = project('a,b,y\n');
    const r = await train(dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${join(dir, 'd.csv')}(1): error NET4018: the csv file "d.csv" has a header but no rows`);
  });

  it('idx files of no examples', async () => {
    const dir = tmp();
    // ubyte idx files: images [0, 2], labels [0]
    writeFileSync(join(dir, 'x.idx'), Buffer.from([0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0, 2]));
    writeFileSync(join(dir, 'y.idx'), Buffer.from([0, 0, 8, 1, 0, 0, 0, 0]));
    writeFileSync(join(dir, 'm.net'), net('idx(images: "x.idx", labels: "y.idx", classes: 2)').replace('sigmoid', 'softmax').replace('dense(1', 'dense(2').replace('binary_', 'categorical_'));
    const r = await train(dir);
    expect(r.code, r.err).toBe(1);
    expect(r.err).toMatch(/error NET4052: there are no examples to train on: .* gives 0 examples/);
  });
});

describe('a FIFO is refused, not read', () => {
  it('as the .net file', async () => {
    const dir = tmp();
    execFileSync('mkfifo', [join(dir, 'f.net')]);
    for (const command of ['check', 'fmt']) {
      const r = await netc(command, join(dir, 'f.net'));
      expect(r.code, command).toBe(1);
      expect(r.err).toContain(`netc: cannot read '${join(dir, 'f.net')}': it is a FIFO (named pipe), not a .net file`);
    }
  });

  it('as the data', async () => {
    const dir = project('a,b,y\n1,2,0\n');
    execFileSync('mkfifo', [join(dir, 'p.csv')]);
    writeFileSync(join(dir, 'p.net'), net('csv("p.csv", label: "y")'));
    const r = await train(dir, 'p.net');
    expect(r.code).toBe(1);
    expect(r.err).toContain('error NET4011: cannot read the data file "p.csv": it is a FIFO (named pipe), not a file');
  });
});
