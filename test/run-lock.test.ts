// One writer per run directory (src/cli/run-lock.ts): a second train, resume, import or report of a run a
// live process holds is refused with the holder's PID; a lock left by a process killed with -9 is taken over;
// the lock goes when the writer ends. And `netc predict --output` never overwrites a run's files or, without
// --force, any existing file.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { lockRun, LOCK_FILE } from '../src/cli/run-lock.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-lock-'));
const XOR = ['train', 'examples/xor.net', '--steps', '5', '--backend', 'cpu'];
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |bug in netc/);

let trained: string;
beforeAll(async () => {
  trained = join(tmp(), 'run');
  const r = await netc(...XOR, '--out', trained);
  expect(r.code, r.err).toBe(0);
});

/** A copy of the trained run, to change. */
function copyRun(): string {
  const dir = join(tmp(), 'run');
  cpSync(trained, dir, { recursive: true });
  return dir;
}

/** A lock file as a live process other than this one holds it: the parent of this process. */
function heldByParent(dir: string): void {
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, command: 'train' }) + '\n');
}

describe('a run directory a live process holds', () => {
  it('is not held in a copy: a lock copied with the files (a snapshot of a live run) names the directory it was taken in', () => {
    const dir = copyRun();
    const lock = lockRun(dir, 'train');
    try {
      const copy = join(tmp(), 'copy');
      cpSync(dir, copy, { recursive: true });
      expect(existsSync(join(copy, LOCK_FILE))).toBe(true);
      const again = lockRun(copy, 'train');
      again.release();
      // the original is still held, by this process's live lock
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).dir).toBe(realpathSync(dir));
    } finally {
      lock.release();
    }
  });

  it('refuses a resume, --force, import and report, naming the PID, and changes nothing', async () => {
    const dir = copyRun();
    heldByParent(dir);
    const before = readFileSync(join(dir, 'population.json'), 'utf8');
    const attempts = [
      ['train', '--resume', dir, '--steps', '10'],
      [...XOR, '--out', dir, '--force'],
      ['import', join(tmp(), 'none'), '--into', dir, '--member', '0'],
      ['report', dir],
    ];
    for (const argv of attempts) {
      const r = await netc(...argv);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err).toContain(`is in use by another netc process (netc train, PID ${process.ppid})`);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      noStack(r.err);
    }
    expect(readFileSync(join(dir, 'population.json'), 'utf8')).toBe(before);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
  });

  it('lets only one of two trains into one new directory', async () => {
    const dir = join(tmp(), 'same');
    const [a, b] = await Promise.all([netc(...XOR, '--out', dir), netc(...XOR, '--members', '2', '--out', dir)]);
    expect([a.code, b.code].sort()).toEqual([0, 1]);
    const refused = a.code === 1 ? a : b;
    expect(refused.err).toMatch(/in use by another netc process|already holds a netc run/);
    noStack(refused.err);
    const members = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).members;
    expect(JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8')).members).toBe(members);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('refuses a second lock in one process too', () => {
    const dir = tmp();
    const lock = lockRun(dir, 'import');
    expect(() => lockRun(dir, 'report')).toThrow(`PID ${process.pid}`);
    lock.release();
    lockRun(dir, 'report').release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});

describe('a lock whose holder is gone', () => {
  it('is taken over after the holder was killed with -9, and released at the end', async () => {
    const dir = copyRun();
    const take = `import(${JSON.stringify(resolve('dist/cli/run-lock.js'))}).then((m) => { m.lockRun(process.argv[1], 'train'); process.kill(process.pid, 'SIGKILL'); })`;
    expect(() => execFileSync(process.execPath, ['--input-type=module', '-e', take, dir], { stdio: 'pipe' })).toThrow();
    const stale = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'));
    expect(stale.pid).not.toBe(process.pid);
    const r = await netc('train', '--resume', dir, '--steps', '8');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8')).position.step).toBe(8);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('a new run leaves no lock behind', () => {
    expect(existsSync(join(trained, LOCK_FILE))).toBe(false);
  });
});

describe('netc predict --output', () => {
  const predict = (dir: string, ...rest: string[]) => netc('predict', dir, '--backend', 'cpu', ...rest);

  it("refuses the run's own files", async () => {
    const dir = copyRun();
    for (const name of ['run.json', 'population.json', 'metrics.jsonl']) {
      const before = readFileSync(join(dir, name));
      const r = await predict(dir, '--output', join(dir, name), '--force');
      expect(r.code).toBe(1);
      expect(r.err).toContain(`is one of the files of the run ${dir}`);
      expect(readFileSync(join(dir, name))).toEqual(before);
    }
  });

  it('refuses an existing file without --force and replaces it with', async () => {
    const out = join(tmp(), 'p.csv');
    writeFileSync(out, 'mine\n');
    const r = await predict(trained, '--output', out);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`--output ${out} exists; give --force to replace it`);
    expect(readFileSync(out, 'utf8')).toBe('mine\n');
    const forced = await predict(trained, '--output', out, '--force');
    expect(forced.code, forced.err).toBe(0);
    expect(readFileSync(out, 'utf8')).toMatch(/^example,label,/);
  });
});
