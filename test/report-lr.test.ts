// The report's learning-rate chart: drawn from metrics.jsonl's `lr` when a member's rate moved during the
// run (an lr_schedule), left out when every rate stayed put or the run predates the field.
import { describe, expect, it } from 'vitest';
import { readRun, renderReport, type ReportInput } from '../src/report/report.js';
import { lrPoints } from '../src/report/lr-spec.js';

const FIXTURE = 'test/fixtures/run';
const svgs = (html: string) => html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];

async function withRates(rate: (member: number, epoch: number) => number | undefined): Promise<ReportInput> {
  const input = await readRun(FIXTURE);
  return { ...input, finishedAt: '2026-01-02T03:04:05Z', metrics: input.metrics.map((l) => ({ ...l, lr: rate(l.member, l.epoch) })) };
}

describe('the learning-rate chart', () => {
  it('is drawn when a rate moved, each member a line over the steps, the best on top', async () => {
    const html = await renderReport(await withRates((m, epoch) => 0.01 * (m + 1) * 0.5 ** epoch));
    expect(html).toContain('<figure id="curve-lr">');
    const chart = svgs(html.slice(html.indexOf('<figure id="curve-lr">')))[0] ?? '';
    expect(chart).toContain('learning rate');
    expect((chart.match(/<path/g) ?? []).length).toBeGreaterThan(6);
  });

  it('is left out when every rate stayed put, or the run has no rates', async () => {
    for (const input of [await withRates((m) => 0.01 * (m + 1)), await withRates(() => undefined)]) {
      const html = await renderReport(input);
      expect(html).not.toContain('curve-lr');
      expect(svgs(html)).toHaveLength(5);
    }
  });

  it('keeps the last line of an epoch written twice (a resumed run)', () => {
    const line = (lr: number) => ({ epoch: 1, step: 10, member: 0, hyperparameters: {}, loss: 1, lr });
    expect(lrPoints([line(0.1), line(0.2)], 0).map((p) => p.lr)).toEqual([0.2]);
  });
});
