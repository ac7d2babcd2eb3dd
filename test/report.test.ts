// The training report (RUN/report.html): charts rendered to inline SVG, nothing fetched from the
// network, the leaderboard best first, the best member highlighted, lineage only for runs with events,
// and the file replaced atomically.
import { closeSync, cpSync, existsSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bestIndex, rank } from '../src/report/rank.js';
import { curvePoints } from '../src/report/curves-spec.js';
import { BEST_COLOR } from '../src/report/render-svg.js';
import { readRun, renderReport, writeReport, type ReportInput } from '../src/report/report.js';
import { logTicks } from '../src/report/scales.js';
import { scatterSpec, variedHyperparameters } from '../src/report/scatter-spec.js';
import { main } from '../src/cli/main.js';

const FIXTURE = 'test/fixtures/run';
const count = (html: string, re: RegExp) => (html.match(re) ?? []).length;
const svgs = (html: string) => html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
const rowMembers = (html: string) => [...html.matchAll(/<tr data-member="(\d+)"/g)].map((m) => Number(m[1]));

let input: ReportInput;
let withEvents: string;
let withoutEvents: string;

beforeAll(async () => {
  input = { ...(await readRun(FIXTURE)), finishedAt: '2026-01-02T03:04:05Z' };
  [withEvents, withoutEvents] = await Promise.all([renderReport(input), renderReport({ ...input, events: undefined })]);
});

describe('bestIndex', () => {
  it("is rank's first row, by one pass: for every metric, with ties, NaN and missing values", () => {
    const pick = (i: number, values: number[]) => values[(i * 7919) % values.length];
    const rows = Array.from({ length: 200 }, (_, i) => ({
      member: 199 - i,
      hyperparameters: {},
      metrics: { loss: pick(i, [0.5, 0.25, NaN, 0.25, Infinity, 0.7]), ...(i % 3 ? { val_loss: pick(i + 1, [0.4, 0.3, 0.3, NaN]) } : {}), ...(i % 4 ? { val_accuracy: pick(i + 2, [0.9, 0.95, 0.95, NaN]) } : {}) },
    }));
    const best = (subset: typeof rows, metric?: 'loss' | 'val_loss' | 'val_accuracy') => subset[bestIndex(subset.map((r) => r.member), subset.map((r) => r.metrics), metric)];
    for (const subset of [rows, rows.map((r) => ({ ...r, metrics: { loss: r.metrics.loss } })), rows.slice(0, 1)]) {
      expect(best(subset)).toBe(rank(subset)[0]);
      for (const metric of ['loss', 'val_loss', 'val_accuracy'] as const) expect(best(subset, metric)).toBe(rank(subset, metric)[0]);
    }
    expect(bestIndex([], [])).toBe(-1);
  });
});

describe('reading a run directory', () => {
  it('reads summary.json, metrics.jsonl and events.jsonl; null metrics (diverged) become NaN', () => {
    expect(input.summary.per_member).toHaveLength(6);
    expect(input.metrics).toHaveLength(23);
    expect(input.events?.map((e) => e.event)).toEqual(['exploit', 'exploit', 'stop']);
    expect(input.metrics.find((l) => l.member === 5 && l.epoch === 1)?.loss).toBeNaN();
  });

  it('has no events when the run has no events.jsonl', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    cpSync(FIXTURE, dir, { recursive: true });
    rmSync(join(dir, 'events.jsonl'));
    expect((await readRun(dir)).events).toBeUndefined();
  });
});

describe('renderReport', () => {
  it('draws the loss, accuracy, one scatter per varied hyperparameter and the lineage as inline SVG', () => {
    expect(variedHyperparameters(input.summary.per_member)).toEqual(['lr', 'drop.rate']);
    expect(svgs(withEvents)).toHaveLength(5);
    expect(svgs(withoutEvents)).toHaveLength(4);
    for (const id of ['curve-loss', 'curve-accuracy', 'hyper-0', 'hyper-1', 'lineage-chart']) expect(withEvents).toContain(`<figure id="${id}">`);
    // every chart has drawn marks (not an empty frame)
    for (const svg of svgs(withEvents)) expect(count(svg, /<path|<line/g)).toBeGreaterThan(10);
  });

  it('shows the lineage section only when the run has events', () => {
    expect(withEvents).toContain('<section id="lineage">');
    expect(withEvents).toMatch(/<td>200<\/td><td class="text">exploit<\/td><td>4<\/td><td>1<\/td>/);
    expect(withEvents).toContain('halving: bottom half by val_loss');
    expect(withoutEvents).not.toContain('id="lineage"');
    expect(withoutEvents).not.toContain('events.jsonl');
  });

  it('shows a lineage section without a chart when events.jsonl has nothing to draw', async () => {
    const html = await renderReport({ ...input, events: [] });
    expect(html).toContain('<section id="lineage">');
    expect(svgs(html)).toHaveLength(4);
  });

  it('is self-contained: no script, no remote or external references', () => {
    for (const html of [withEvents, withoutEvents]) {
      expect(html).not.toMatch(/(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
      expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(\s*["']?(https?:)?\/\//i);
    }
  });

  it('gives every SVG id a chart prefix, so ids are unique in the page', () => {
    const ids = [...withEvents.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const ref of withEvents.matchAll(/url\(#([^)]+)\)/g)) expect(ids).toContain(ref[1]);
  });

  it('lists the leaderboard best first, ranked as the CLI ranks', () => {
    const expected = rank(input.summary.per_member).map((r) => r.member);
    expect(expected).toEqual([1, 4, 2, 5, 3, 0]);
    expect(rowMembers(withEvents)).toEqual(expected);
    expect(withEvents).toContain('<tr data-member="1" class="best">');
    expect(count(withEvents, /<tr[^>]*class="best"/g)).toBe(1);
    expect(withEvents).toContain('<th class="key">val_accuracy</th>');
    // the stopped member says where and why
    expect(withEvents).toMatch(/<tr data-member="0">.*<td class="text" title="halving: bottom half by val_loss">step 300<\/td><\/tr>/);
  });

  it('highlights the best member in the curves', () => {
    const points = curvePoints(input.metrics, 'loss', 1);
    expect(new Set(points.filter((p) => p.best).map((p) => p.member))).toEqual(new Set([1]));
    expect(points.filter((p) => p.best)).toHaveLength(8); // 4 epochs, train and validation
    expect(points.find((p) => p.member === 5 && p.epoch === 1)?.value).toBeNull(); // diverged: a gap
    const loss = svgs(withEvents)[0];
    expect(loss).toMatch(new RegExp(`<path[^>]*stroke="${BEST_COLOR}"[^>]*stroke-width="3"`));
    expect(withEvents).toContain('member 1 (best)');
  });

  it('draws one line per member in each split of the loss chart, a diverged epoch as a gap', () => {
    const loss = svgs(withEvents)[0]!;
    const lines = [...loss.matchAll(/<path aria-label="([^"]*)"[^>]*aria-roledescription="line mark" d="([^"]*)" stroke="([^"]*)"/g)];
    expect(lines).toHaveLength(12); // 6 members, train and validation
    expect(lines.filter((l) => l[3] === BEST_COLOR)).toHaveLength(2);
    const five = lines.filter((l) => l[1].includes('member: 5;')).map((l) => l[2]);
    // member 5's loss is NaN in epochs 1 and 2: each of its lines starts at epoch 3, two thirds across a panel of 400 pixels
    expect(five).toHaveLength(2);
    for (const d of five) expect(d).toMatch(/^M266\.67,[\d.]+L400,[\d.]+$/);
  });

  it('puts a hyperparameter spanning more than a factor of 20 on a log scale', () => {
    const scale = (param: string) => JSON.stringify(scatterSpec(input.summary.per_member, param, 'val_accuracy', 1));
    expect(scale('lr')).toContain('"type":"log"');
    expect(scale('drop.rate')).not.toContain('"type":"log"');
    expect(logTicks([1e-4, 3e-3])).toEqual([0.0001, 0.0002, 0.0005, 0.001, 0.002]);
  });

  it('says so when no hyperparameter varies, and draws no scatter', async () => {
    const same = input.summary.per_member.map((m) => ({ ...m, hyperparameters: { lr: 0.02 } }));
    const html = await renderReport({ ...input, summary: { ...input.summary, per_member: same }, events: undefined });
    expect(svgs(html)).toHaveLength(2);
    expect(html).toContain('No hyperparameter differs between the members (lr = 0.02 for all)');
  });

  it('shows the model, file, members, steps, backend, lowering and time in the title block', () => {
    expect(withEvents).toContain('<title>netc report: fixture (examples/fixture.net)</title>');
    for (const fact of ['<dt>members</dt><dd>6</dd>', '<dd>400 (4 epochs)</dd>', '<dd>cpu</dd>', '<dd>grouped</dd>', '<dd>2026-01-02 03:04 UTC</dd>', '<dd>1.2 s (1945 member-steps/s)</dd>']) {
      expect(withEvents).toContain(fact);
    }
  });
});

describe('writeReport', () => {
  it('writes RUN/report.html by renaming a temporary file over the old one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    cpSync(FIXTURE, dir, { recursive: true });
    const path = join(dir, 'report.html');
    writeFileSync(path, 'old report');
    const old = openSync(path, 'r');
    try {
      expect(await writeReport(dir)).toBe(path);
      // a new file took the name; a reader of the old one still sees the old one, whole
      expect(statSync(path).ino).not.toBe(fstatSync(old).ino);
      const buf = Buffer.alloc(64);
      expect(buf.toString('utf8', 0, readSync(old, buf, 0, 64, 0))).toBe('old report');
    } finally {
      closeSync(old);
    }
    const html = readFileSync(path, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(svgs(html)).toHaveLength(5);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('writes nothing when the directory has neither summary.json nor run.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    await expect(writeReport(dir)).rejects.toThrow(/summary\.json: not found, and .* has no run\.json either: it is not a netc run directory/);
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('runs at the edges: one member, one epoch, all-NaN metrics, stops at step 0', () => {
  type Metrics = { loss: number; [name: string]: number };
  const member = (id: number, metrics: Metrics, hyperparameters: Record<string, number> = { lr: 0.01 }) => ({ member: id, hyperparameters, metrics });
  const line = (epoch: number, id: number, metrics: Metrics) => ({ epoch, step: 10 * epoch, member: id, hyperparameters: {}, ...metrics });
  const oneMember: ReportInput = {
    summary: { members: 1, steps: 20, epochs: 2, per_member: [member(0, { loss: 0.5, accuracy: 0.8, val_loss: 0.6, val_accuracy: 0.7 })] },
    metrics: [line(1, 0, { loss: 0.7, accuracy: 0.6, val_loss: 0.8, val_accuracy: 0.5 }), line(2, 0, { loss: 0.5, accuracy: 0.8, val_loss: 0.6, val_accuracy: 0.7 })],
  };
  const bestPath = new RegExp(`<path[^>]*stroke="${BEST_COLOR}"[^>]*stroke-width="3"`);

  it('draws the curves of a single member, without an "other members" legend entry', async () => {
    const html = await renderReport(oneMember);
    expect(svgs(html)).toHaveLength(2);
    for (const svg of svgs(html)) expect(svg).toMatch(bestPath);
    expect(html).toContain('member 0 (best)');
    expect(html).not.toContain('other members');
  });

  it('draws the learning rate of a single member whose rate moved (an lr_schedule)', async () => {
    const moved = { ...oneMember, metrics: oneMember.metrics.map((l, i) => ({ ...l, lr: 0.1 / (i + 1) })) };
    const html = await renderReport(moved);
    expect(html).toContain('<figure id="curve-lr">');
    expect(svgs(html)).toHaveLength(3);
    expect(html).not.toContain('other members');
  });

  it('draws a run of one epoch as points', async () => {
    const input: ReportInput = { summary: { per_member: [member(0, { loss: 0.5 }, { lr: 0.1 }), member(1, { loss: 0.4 }, { lr: 0.2 })] }, metrics: [line(1, 0, { loss: 0.5 }), line(1, 1, { loss: 0.4 })] };
    const html = await renderReport(input);
    expect(svgs(html)).toHaveLength(2); // the loss curve and the lr scatter
    expect(count(svgs(html)[0]!, /<path[^>]*aria-roledescription="point"|class="mark-symbol/g)).toBeGreaterThan(0);
    const single = await renderReport({ summary: { per_member: [member(0, { loss: 0.5 })] }, metrics: [line(1, 0, { loss: 0.5 })] });
    expect(svgs(single)).toHaveLength(1);
  });

  it('draws the best member when every other member diverged (all their values NaN)', async () => {
    const input: ReportInput = {
      summary: { per_member: [member(0, { loss: 0.3 }, { lr: 0.1 }), member(1, { loss: NaN }, { lr: 0.2 })] },
      metrics: [line(1, 0, { loss: 0.4 }), line(1, 1, { loss: NaN }), line(2, 0, { loss: 0.3 }), line(2, 1, { loss: NaN })],
    };
    const html = await renderReport(input);
    expect(svgs(html)).toHaveLength(2);
    expect(svgs(html)[0]).toMatch(bestPath);
    // nothing grey is drawn, so the legends name only the best member
    expect(html).not.toContain('other members');
  });

  it('draws a curve for each logged metric, mse and mae too, and lists them in the leaderboard', async () => {
    const m = { loss: 0.5, mse: 0.3, mae: 0.4, val_loss: 0.6, val_mse: 0.35, val_mae: 0.45 };
    const html = await renderReport({ summary: { per_member: [member(0, m), member(1, { ...m, loss: 0.7 })] }, metrics: [line(1, 0, m), line(1, 1, m), line(2, 0, m), line(2, 1, m)] });
    for (const id of ['curve-loss', 'curve-mse', 'curve-mae']) expect(html).toContain(`<figure id="${id}">`);
    expect(html).toContain('<thead><tr><th>rank</th><th>member</th><th>lr</th><th>loss</th><th>mse</th><th>mae</th><th class="key">val_loss</th><th>val_mse</th><th>val_mae</th></tr></thead>');
  });

  it('trains a file of one member (the default) and writes its report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    const file = join(dir, 'one.net');
    writeFileSync(file, 'model m(input: [2]) { dense(1, activation: sigmoid) }\ntrain { data: xor(n: 40), validation: 0.25, loss: binary_crossentropy, epochs: 2 }\n');
    let err = '';
    const code = await main(['train', file, '--backend', 'cpu', '--out', join(dir, 'run')], { out: () => {}, err: (t) => void (err += t) });
    expect(code, err).toBe(0);
    expect(err).not.toContain('could not write');
    const drawn = readFileSync(join(dir, 'run', 'report.html'), 'utf8');
    expect(svgs(drawn)).toHaveLength(2);
    // netc train drew it from the lines it kept in memory: the same page as from metrics.jsonl read back
    await writeReport(join(dir, 'run'));
    expect(readFileSync(join(dir, 'run', 'report.html'), 'utf8')).toBe(drawn);
  });

  it('says every value is non-finite when all metrics are NaN, and still names the varied hyperparameter', async () => {
    const input: ReportInput = {
      summary: { per_member: [member(0, { loss: NaN, accuracy: NaN }, { lr: 0.1 }), member(1, { loss: NaN, accuracy: NaN }, { lr: 0.2 })] },
      metrics: [line(1, 0, { loss: NaN, accuracy: NaN }), line(1, 1, { loss: NaN, accuracy: NaN })],
    };
    const html = await renderReport(input);
    expect(svgs(html)).toHaveLength(0);
    expect(html).toContain('every member&#39;s loss and accuracy is non-finite');
    expect(html).not.toContain('metrics.jsonl is empty');
    expect(html).not.toContain('No hyperparameter differs');
    expect(html).toContain('lr varies, but no member has a finite final loss');
  });

  it('draws the lineage of members stopped at step 0 of a run of 0 steps', async () => {
    const input: ReportInput = {
      summary: { steps: 0, per_member: [member(0, { loss: 0.3 }), member(1, { loss: 0.4 })] },
      metrics: [],
      events: [
        { step: 0, event: 'stop', member: 0, reason: 'stopped at once' },
        { step: 0, event: 'stop', member: 1, reason: 'stopped at once' },
      ],
    };
    const html = await renderReport(input);
    expect(html).toContain('<figure id="lineage-chart">');
    const svg = svgs(html)[0]!;
    expect(svg).not.toMatch(/NaN|Infinity/);
    // a step axis of some width, the stops drawn at its start
    expect(svg).toContain("X-axis titled 'step' for a linear scale with values from 0.0 to 1.0");
    for (const m of [0, 1]) expect(svg).toContain(`aria-label="step: 0; member: ${m}; kind: stopped"`);
  });

  it('netc report writes the report of a one-member run and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(oneMember.summary));
    writeFileSync(join(dir, 'metrics.jsonl'), oneMember.metrics.map((l) => JSON.stringify(l) + '\n').join(''));
    let err = '';
    const code = await main(['report', dir], { out: () => {}, err: (t) => void (err += t) });
    expect(code, err).toBe(0);
    expect(svgs(readFileSync(join(dir, 'report.html'), 'utf8'))).toHaveLength(2);
  });
});

describe('a run killed before it finished (run.json and metrics.jsonl, no summary.json)', () => {
  const killed = (withMetrics = true) => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-report-'));
    cpSync(FIXTURE, dir, { recursive: true });
    rmSync(join(dir, 'summary.json'));
    if (!withMetrics) writeFileSync(join(dir, 'metrics.jsonl'), '');
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ format: 'netc-run-1', file: 'examples/fixture.net', model: { name: 'fixture' }, ensemble: { members: 6, lowering: 'grouped' } }));
    return dir;
  };

  it('is drawn from what there is: each member at its last metrics line, and says how to finish it', async () => {
    const dir = killed();
    const { summary } = await readRun(dir);
    expect(summary.unfinished).toEqual({ step: 400, resume: `netc train examples/fixture.net --resume ${dir}` });
    expect(summary.per_member.map((m) => m.member)).toEqual([0, 1, 2, 3, 4, 5]);
    // member 0 was stopped at step 300: its last line is its last word
    expect(summary.per_member[0]).toEqual({ member: 0, hyperparameters: { lr: 0.0001, 'drop.rate': 0 }, metrics: { loss: 0.52, accuracy: 0.8267, val_loss: 0.55, val_accuracy: 0.817 } });
    const html = readFileSync(await writeReport(dir), 'utf8');
    expect(svgs(html).length).toBeGreaterThanOrEqual(4);
    expect(rowMembers(html)).toHaveLength(6);
    expect(html).toContain(`This run has not finished: it has no summary.json, so this report is drawn from metrics.jsonl, up to step 400. Finish it with <code>netc train examples/fixture.net --resume ${dir}</code>`);
    expect(html).not.toContain('<dt>finished</dt>');
  });

  it('netc report writes it and says on stderr that the run has not finished and how to finish it', async () => {
    const dir = killed();
    let out = '';
    let err = '';
    const code = await main(['report', dir], { out: (t) => void (out += t), err: (t) => void (err += t) });
    expect(code).toBe(0);
    expect(out).toBe(`report: ${join(dir, 'report.html')}\n`);
    expect(err).toBe(`netc: ${dir} has not finished (no summary.json): the report shows its metrics up to step 400; finish the run with: netc train examples/fixture.net --resume ${dir}\n`);
  });

  it('killed before any epoch ended, it has nothing to draw yet, and the error says how to finish it', async () => {
    const dir = killed(false);
    await expect(writeReport(dir)).rejects.toThrow(`no epoch ended before it stopped (metrics.jsonl is empty), so there is nothing to draw yet; finish the run with: netc train examples/fixture.net --resume ${dir}`);
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
  });
});
