// A large population's summary and report stay bounded (issue 24, item 11): report.html drew every member
// (3.3 KB of page and ~130 KB of memory per member: 100,000 members of forum.net did not finish), and
// summary.json was one string of every member. Tested by sizes and counts, not by time: the report of ten
// times the members is about the same size, and no piece of summary.json grows with the members.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeReport } from '../src/report/report.js';
import { CURVE_MEMBERS, SCATTER_MEMBERS, TABLE_ROWS, sampleRanked } from '../src/report/sample.js';
import { summaryChunks } from '../src/cli/train-summary.js';
import { writeAtomicChunks } from '../src/util/write-atomic.js';

/** A finished run of n members, 3 epochs each, lr varied, written as netc writes it. */
function syntheticRun(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'netc-report-scale-'));
  const lr = (m: number) => 0.001 * (1 + (m % 97));
  const loss = (m: number, epoch: number) => 0.2 + ((m * 7919) % 1000) / 1000 + 1 / epoch;
  const lines: string[] = [];
  for (let epoch = 1; epoch <= 2; epoch++) {
    for (let m = 0; m < n; m++) lines.push(JSON.stringify({ epoch, step: epoch * 10, member: m, hyperparameters: { lr: lr(m) }, lr: lr(m), loss: loss(m, epoch), val_loss: loss(m, epoch) + 0.01 }));
  }
  writeFileSync(join(dir, 'metrics.jsonl'), lines.join('\n') + '\n');
  const per_member = Array.from({ length: n }, (_, m) => ({ member: m, hyperparameters: { lr: lr(m) }, lr: lr(m), metrics: { loss: loss(m, 2), val_loss: loss(m, 2) + 0.01 } }));
  writeAtomicChunks(join(dir, 'summary.json'), summaryChunks({ model: 'm', members: n, steps: 30, epochs: 3, per_member }));
  return dir;
}

describe('a large population', () => {
  it('draws a sample by rank: ten times the members make about the same report, and it says so', async () => {
    const [small, large] = [syntheticRun(SCATTER_MEMBERS), syntheticRun(10 * SCATTER_MEMBERS)];
    const sizes = [] as number[];
    for (const dir of [small, large]) sizes.push(statSync(await writeReport(dir)).size);
    expect(sizes[1] / sizes[0]).toBeLessThan(1.2);
    const html = readFileSync(join(large, 'report.html'), 'utf8');
    expect(html.match(/<tr data-member=/g)!.length).toBe(TABLE_ROWS);
    expect(html).toContain(`The first ${TABLE_ROWS} of ${10 * SCATTER_MEMBERS} members; every member is in summary.json.`);
    expect(html).toContain(`${CURVE_MEMBERS} of the ${10 * SCATTER_MEMBERS} members are drawn, evenly by rank (the best among them)`);
    expect(html).toContain(`${SCATTER_MEMBERS} of the ${10 * SCATTER_MEMBERS} members are drawn`);
  });

  it('a sample by rank starts with the best and spreads evenly; a population that fits is drawn whole', () => {
    const ranked = Array.from({ length: 1000 }, (_, i) => i);
    expect(sampleRanked(ranked, 4)).toEqual([0, 250, 500, 750]);
    expect(sampleRanked(ranked.slice(0, 3), 4)).toEqual([0, 1, 2]);
  });

  it('writes summary.json in pieces that do not grow with the members, one member a line, as JSON', () => {
    const summary = (n: number) => ({ model: 'm', members: n, per_member: Array.from({ length: n }, (_, m) => ({ member: m, hyperparameters: { lr: 0.01 }, metrics: { loss: 0.5 } })) });
    const longest = (n: number) => Math.max(...[...summaryChunks(summary(n))].map((c) => c.length));
    expect(longest(100_000)).toBeLessThan(2 * longest(10));
    const text = [...summaryChunks(summary(3))].join('');
    expect(JSON.parse(text)).toEqual(summary(3));
    expect(text.split('\n').filter((l) => l.startsWith('    {"member":'))).toHaveLength(3);
    expect(JSON.parse([...summaryChunks({ per_member: [] })].join(''))).toEqual({ per_member: [] });
  });
});
