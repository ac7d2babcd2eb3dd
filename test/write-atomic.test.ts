// Atomic writes (util/write-atomic.ts) never write through a file planted under their temporary name: the
// name is drawn from crypto's random bytes, and the file is created exclusively, so a symbolic link put
// there (the attack: a link from `FILE.tmp-PID` to a file of the victim's, before `netc fmt` or `netc
// extract` writes FILE) is neither followed nor replaced.
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

// the first draw of random bytes is a fixed one (an attacker's guess); the others are crypto's own
const draws = vi.hoisted(() => ({ fixed: [] as Buffer[] }));
vi.mock('node:crypto', async (original) => {
  const crypto = await original<typeof import('node:crypto')>();
  return { ...crypto, randomBytes: vi.fn((n: number) => draws.fixed.shift() ?? crypto.randomBytes(n)) };
});

const { createTemp, writeAtomic, writeAtomicByAsync, TEMP_SUFFIX } = await import('../src/util/write-atomic.js');

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-atomic-'));

describe('writeAtomic', () => {
  it('does not follow a symbolic link planted at FILE.tmp-PID (the name it used to write under)', () => {
    const dir = tmp();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(dir, `out.txt.tmp-${process.pid}`));
    writeAtomic(join(dir, 'out.txt'), 'new text');
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('new text');
    expect(lstatSync(join(dir, 'out.txt')).isSymbolicLink()).toBe(false);
  });

  it('creates its temporary file exclusively: a link planted at a guessed name is left alone and another name drawn', () => {
    const dir = tmp();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious');
    const guess = Buffer.from('0123456789abcdef', 'hex');
    symlinkSync(victim, join(dir, `out.txt.tmp-${guess.toString('hex')}`));
    draws.fixed.push(guess);
    writeAtomic(join(dir, 'out.txt'), 'new text');
    expect(draws.fixed).toEqual([]);
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('new text');
    // the planted link is still there, untouched; no temporary file of netc's is left
    expect(readdirSync(dir).sort()).toEqual(['out.txt', `out.txt.tmp-${guess.toString('hex')}`, 'victim.txt']);
  });

  it('names temporary files with 64 random bits, a new name each time', () => {
    const dir = tmp();
    const names = Array.from({ length: 4 }, () => {
      const t = createTemp(join(dir, 'f'));
      return t.name;
    });
    for (const n of names) expect(n).toMatch(TEMP_SUFFIX);
    expect(new Set(names).size).toBe(4);
    expect(names.some((n) => n.includes(String(process.pid)))).toBe(false);
  });

  it('leaves the file as it was when the read-back check of the written file fails', async () => {
    const dir = tmp();
    const path = join(dir, 'data.bin');
    writeFileSync(path, 'old');
    const refused = writeAtomicByAsync(
      path,
      async (fd) => void writeFileSync(fd, 'new'),
      (written) => {
        expect(readFileSync(written, 'utf8')).toBe('new');
        throw new Error('did not read back');
      },
    );
    await expect(refused).rejects.toThrow('did not read back');
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['data.bin']);
    expect(existsSync(path)).toBe(true);
  });
});
