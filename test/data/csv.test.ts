// csv(): header, label columns, numbers, and every mistake located by file, line and column.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDataError } from '../../src/data/dataset.js';
import { call, dataErrorOf, expectMatchesShape, load, tempDir } from './helpers.js';

const dir = tempDir();
let files = 0;
/** Writes `text` to a fresh csv file in the temp folder; returns its name. */
function csv(text: string): string {
  const name = `f${files++}.csv`;
  writeFileSync(join(dir, name), text);
  return name;
}

describe('csv', () => {
  it('takes the first column as the label by default', async () => {
    const path = csv('y,a,b\n1,2,3\n4,5,6\n');
    const ds = await load('csv', { path }, dir);
    expectMatchesShape(ds, call('csv', { path }), dir);
    expect(ds.count).toBe(2);
    expect(Array.from(ds.x)).toEqual([2, 3, 5, 6]);
    expect(Array.from(ds.y)).toEqual([1, 4]);
    expect(ds.labels).toEqual({ kind: 'values', columns: 1 });
  });

  it('takes named label columns in the order given; the rest are features in file order', async () => {
    const path = csv('a, y2 ,b,y1,c\n1,2,3,4,5\n-1.5,2e3,.5,+7,0\n');
    const args = { path, label: ['y1', 'y2'] };
    const ds = await load('csv', args, dir);
    expectMatchesShape(ds, call('csv', args), dir);
    expect(Array.from(ds.x)).toEqual([1, 3, 5, -1.5, 0.5, 0]);
    expect(Array.from(ds.y)).toEqual([4, 2, 7, 2000]);
  });

  it('accepts empty lines, CRLF, quotes and a byte order mark', async () => {
    const path = csv('\uFEFF"y","x"\r\n1,"2"\r\n\r\n3,4\r\n\r\n\r\n');
    const ds = await load('csv', { path }, dir);
    expect(ds.count).toBe(2);
    expect(Array.from(ds.x)).toEqual([2, 4]);
  });

  it('a header alone is refused at the header line (training on it would never end)', async () => {
    const path = csv('y,x\n');
    const e = await dataErrorOf(() => load('csv', { path }, dir));
    expect([e.code, e.file, e.line]).toEqual([4018, join(dir, path), 1]);
  });

  it('a non-number names the file, line, column and text', async () => {
    const path = csv('y,a,b\n1,2,3\n\n4,5,abc\n');
    const e = await dataErrorOf(() => load('csv', { path }, dir));
    expect([e.code, e.file, e.line, e.column]).toEqual([4012, join(dir, path), 4, 3]);
    expect(e.message).toBe('column "b" must hold a number, got "abc"');
    expect(formatDataError(e)).toBe(`${join(dir, path)}(4,3): error NET4012: column "b" must hold a number, got "abc"`);
  });

  it('refuses what Number() would wrongly take', async () => {
    for (const text of ['0x10', 'Infinity', 'NaN', '1;5', '1.2.3']) {
      const e = await dataErrorOf(() => load('csv', { path: csv(`y,x\n1,${text}\n`) }, dir));
      expect([e.code, e.line, e.column]).toEqual([4012, 2, 2]);
      expect(e.message).toContain(text);
    }
  });

  // issue 24, item 6: 3.5e38 and 1e400 became Infinity in float32, and 20 steps later every weight was NaN
  it('a number float32 cannot hold is an error at its line and column, in features and labels alike', async () => {
    for (const [text, at] of [['3.5e38', 'x'], ['-1e400', 'x'], ['1e39', 'y']] as const) {
      const row = at === 'x' ? `1,${text}` : `${text},1`;
      const path = csv(`y,x\n1,2\n${row}\n`);
      const e = await dataErrorOf(() => load('csv', { path }, dir));
      expect([e.code, e.line, e.column]).toEqual([4019, 3, at === 'x' ? 2 : 1]);
      expect(formatDataError(e)).toBe(`${join(dir, path)}(3,${at === 'x' ? 2 : 1}): error NET4019: column "${at}" holds ${text}, which is not a finite float32 (the largest is about 3.4e38): training on it would turn every weight into NaN; scale the values down`);
    }
    const edge = await load('csv', { path: csv('y,x\n1,3.4e38\n2,1e-50\n') }, dir);
    expect(Array.from(edge.x)).toEqual([Math.fround(3.4e38), 0]);
  });

  it('a missing value is an error', async () => {
    const e = await dataErrorOf(() => load('csv', { path: csv('y,a,b\n1,2,3\n,5,6\n') }, dir));
    expect([e.code, e.line, e.column, e.message]).toEqual([4013, 3, 1, 'column "y" has no value']);
  });

  it('a row with the wrong number of fields is an error', async () => {
    const short = await dataErrorOf(() => load('csv', { path: csv('y,a,b\n1,2,3\n4,5\n') }, dir));
    expect([short.code, short.line, short.column, short.message]).toEqual([4014, 3, 3, 'this row has 2 field(s), the header has 3']);
    const long = await dataErrorOf(() => load('csv', { path: csv('y,a\n1,2\n3,4\n5,6,7\n') }, dir));
    expect([long.code, long.line, long.column]).toEqual([4014, 4, 3]);
  });

  it('a missing file is an error naming it', async () => {
    const e = await dataErrorOf(() => load('csv', { path: 'nowhere.csv' }, dir));
    expect([e.code, e.file]).toEqual([4011, join(dir, 'nowhere.csv')]);
    expect(e.message).toContain('"nowhere.csv"');
  });

  it('an unknown label column, an empty file and an unclosed quote are errors', async () => {
    const unknown = await dataErrorOf(() => load('csv', { path: csv('y,x\n1,2\n'), label: ['z'] }, dir));
    expect([unknown.code, unknown.line]).toEqual([4015, 1]);
    expect(unknown.message).toContain('no column "z"');
    expect((await dataErrorOf(() => load('csv', { path: csv('') }, dir))).code).toBe(4015);
    const quote = await dataErrorOf(() => load('csv', { path: csv('y,x\n1,"2\n') }, dir));
    expect([quote.code, quote.line]).toEqual([4015, 2]);
  });
});
