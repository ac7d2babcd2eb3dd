// The report's learning-rate chart: drawn from metrics.jsonl's `lr` when a member's rate moved during the
// run (an lr_schedule, PBT's exploits), left out when every rate stayed put or the run predates the field.
// It starts at step 0, and its caption names only what moved the rates.
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
    expect(lrPoints([line(0.1), line(0.2)], 0).map((p) => [p.step, p.lr])).toEqual([
      [0, 0.2],
      [10, 0.2],
    ]);
  });
});

/** The fixture as a PBT run without an lr_schedule: members 4 and 5 copy 1 and 2 as the first epoch ends (step 100). */
async function pbtRun(): Promise<ReportInput> {
  const input = await readRun(FIXTURE);
  const copied: Record<number, number> = { 4: 0.0036, 5: 0.0008 };
  const metrics = input.metrics.map((l) => {
    const lr = l.epoch > 1 && l.member in copied ? copied[l.member] : l.hyperparameters.lr;
    return { ...l, hyperparameters: { ...l.hyperparameters, lr }, lr };
  });
  const events = [4, 5].map((member) => ({ step: 100, event: 'exploit' as const, member, source: member - 3, hyperparameters: { lr: copied[member] } }));
  return { ...input, finishedAt: '2026-01-02T03:04:05Z', metrics, events };
}

/** The lr chart's figure: its caption and each line's points in SVG coordinates (the left edge at x = 0). */
function lrFigure(html: string): { caption: string; lines: [number, number][][]; firstSteps: string[] } {
  const figure = html.slice(html.indexOf('<figure id="curve-lr">'), html.indexOf('</figure>', html.indexOf('<figure id="curve-lr">')));
  const caption = /<figcaption>([\s\S]*?)<\/figcaption>/.exec(figure)?.[1] ?? '';
  const paths = [...figure.matchAll(/<path aria-label="([^"]*)"[^>]*aria-roledescription="line mark" d="([^"]*)"/g)];
  const lines = paths.map(([, , d]) => [...d.matchAll(/[ML]([-\d.e]+),([-\d.e]+)/g)].map(([, x, y]) => [Number(x), Number(y)] as [number, number]));
  return { caption, lines, firstSteps: paths.map(([, label]) => /step: (\d+)/.exec(label)?.[1] ?? '') };
}

describe('the learning-rate chart of a PBT run', () => {
  it("starts at step 0 with each member's first rate: an exploit as the first epoch ends is a step inside the chart, not a line on its left edge", async () => {
    const input = await pbtRun();
    const points = lrPoints(input.metrics, 1);
    for (let m = 0; m < 6; m++) {
      const own = points.filter((p) => p.member === m);
      expect(own[0]).toMatchObject({ step: 0, lr: own[1].lr });
    }
    const { lines, firstSteps } = lrFigure(await renderReport(input));
    expect(lines.length).toBeGreaterThan(0);
    expect(firstSteps.every((s) => s === '0')).toBe(true);
    for (const line of lines) {
      expect(line[0][0]).toBe(0);
      // a vertical segment (x unchanged, y moved) only inside the chart
      for (let i = 1; i < line.length; i++) if (line[i][0] === line[i - 1][0] && line[i][1] !== line[i - 1][1]) expect(line[i][0]).toBeGreaterThan(0);
    }
  });

  it("names what moved the rates: PBT's exploits, an lr_schedule, or both, and nothing the run did not have", async () => {
    const pbt = lrFigure(await renderReport(await pbtRun())).caption;
    expect(pbt).toContain('PBT');
    expect(pbt).not.toContain('lr_schedule');
    const schedule = lrFigure(await renderReport({ ...(await withRates((m, epoch) => 0.01 * (m + 1) * 0.5 ** epoch)), events: undefined })).caption;
    expect(schedule).toContain('lr_schedule');
    expect(schedule).not.toContain('PBT');
    const both = await pbtRun();
    both.metrics = both.metrics.map((l) => ({ ...l, lr: l.lr! * 0.9 ** l.epoch }));
    const caption = lrFigure(await renderReport(both)).caption;
    expect(caption).toContain('lr_schedule');
    expect(caption).toContain('PBT');
  });
});
