// PBT as a user watches it: each exploit is a line of the progress output as it happens (below a progress
// bar, which is drawn again under it), and after a run stopped right after an exploit, the leaderboard and
// summary.json pair each member's metrics with the hyperparameters they were measured under and say what
// the member copied since.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { TrainProgress } from '../src/cli/train-progress.js';
import { trainCommand } from '../src/cli/train-command.js';
import { formatHyper, formatMetric } from '../src/report/format.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-pbt-'));
const lines = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Runs netc in this process; `onErr` sees every piece it writes to stderr. */
async function netc(argv: string[], onErr: (text: string) => void = () => {}) {
  let [out, err] = ['', ''];
  const code = await main(argv, {
    out: (t) => void (out += t),
    err: (t) => {
      err += t;
      onErr(t);
    },
  });
  return { code, out, err };
}

// 300 training examples in batches of 20: 15 steps an epoch; PBT after epochs 2, 4 and 6
const SOURCE = `model m(input: [2]) {
  dense(16, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 8 seed: 5 vary lr: loguniform(0.0005, 0.5) }
train { data: moons(n: 400, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 8 }
schedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.25, perturb: [0.8, 1.2], resample: 0.25 }
`;

function pbtFile(): string {
  const path = join(tmp(), 'pbt.net');
  writeFileSync(path, SOURCE);
  return path;
}

describe('exploits while training runs', () => {
  it('each exploit is one line of the progress output, after the epoch it follows and before the next', async () => {
    const out = tmp();
    const r = await netc(['train', pbtFile(), '--backend', 'cpu', '--out', out]);
    expect(r.code, r.err).toBe(0);
    const exploits = lines(out, 'events.jsonl').filter((e) => e.event === 'exploit');
    expect(exploits.length).toBe(6);
    const err = r.err.split('\n');
    for (const e of exploits) {
      const line = `step ${e.step}: member ${e.member} copied member ${e.source}, lr ${formatHyper(e.hyperparameters.lr)}`;
      const at = err.indexOf(line);
      expect(at, `${line}\nin:\n${r.err}`).toBeGreaterThan(-1);
      const epoch = e.step / 15;
      expect(err.findIndex((l) => l.startsWith(`epoch ${epoch}/8:`))).toBeLessThan(at);
      expect(err.findIndex((l) => l.startsWith(`epoch ${epoch + 1}/8:`))).toBeGreaterThan(at);
    }
  });

  it('with a progress bar, the line goes above the bar, which is drawn again below it, nothing left of it above', () => {
    const screen = new Screen();
    const io = { out: () => {}, err: (t: string) => void screen.write(t) };
    const progress = new TrainProgress({ io, bar: true, stream: screen.stream, steps: 120, epochs: 8, start: { step: 0, epoch: 0 }, everySeconds: 10 });
    progress.step({ step: 30, steps: 120, epoch: 2, epochs: 8, memberStepsPerSecond: 100, bestLoss: 0.5 });
    progress.exploit({ step: 30, event: 'exploit', member: 3, source: 6, hyperparameters: { lr: 0.49999999999999994 } });
    progress.exploit({ step: 30, event: 'exploit', member: 5, source: 6, hyperparameters: { lr: 0.25 } });
    progress.stop();
    const rows = screen.rows().filter((l) => l.trim());
    expect(rows.slice(0, 2)).toEqual(['step 30: member 3 copied member 6, lr 0.5', 'step 30: member 5 copied member 6, lr 0.25']);
    expect(rows).toHaveLength(3);
    expect(rows[2]).toMatch(/^train \|.*\| 30\/120 steps/);
  });

  it('a large population prints the first exploits of a step and counts the rest', () => {
    let err = '';
    const progress = new TrainProgress({ io: { out: () => {}, err: (t) => void (err += t) }, bar: false, steps: 100, epochs: 1, start: { step: 0, epoch: 0 }, everySeconds: 10 });
    for (let m = 0; m < 100; m++) progress.exploit({ step: 50, event: 'exploit', member: m, source: 200, hyperparameters: { lr: 0.1 } });
    progress.stop();
    const printed = err.trim().split('\n');
    expect(printed.filter((l) => l.startsWith('step 50: member '))).toHaveLength(10);
    expect(printed[printed.length - 1]).toBe('step 50: and 90 more exploits (events.jsonl has every one)');
  });
});

describe('a run stopped right after an exploit', () => {
  it("pairs each member's metrics with the lr they were measured under, and says what the member copied since", async () => {
    const out = tmp();
    // Ctrl-C as epoch 2 ends: PBT acts at that step, one more step trains, and the run stops mid-epoch 3
    const r = await netc(['train', pbtFile(), '--backend', 'cpu', '--out', out], (t) => t.startsWith('epoch 2/') && process.emit('SIGINT'));
    expect(r.code, r.err).toBe(1);
    const exploits = lines(out, 'events.jsonl').filter((e) => e.event === 'exploit');
    expect(exploits.length).toBe(2);
    const metrics = lines(out, 'metrics.jsonl');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    for (const e of exploits) {
      const last = metrics.filter((l) => l.member === e.member).pop();
      expect(last.step).toBe(30);
      const row = summary.per_member.find((m: { member: number }) => m.member === e.member);
      expect(row.metrics.val_loss).toBe(last.val_loss);
      expect(row.hyperparameters).toEqual(last.hyperparameters);
      expect(row.lr).toBe(last.lr);
      expect(row.copied).toEqual({ step: 30, source: e.source, hyperparameters: e.hyperparameters });
      const board = r.out.split('\n').find((l) => l.includes(`│ ${e.member} (copied ${e.source} @30) │`));
      expect(board, r.out).toBeDefined();
      expect(board).toContain(`${formatMetric(last.hyperparameters.lr)} → ${formatMetric(e.hyperparameters.lr)}`);
      expect(report).toContain(`<td>${e.member} (copied ${e.source} @30)</td><td>${formatHyper(last.hyperparameters.lr)} → ${formatHyper(e.hyperparameters.lr)}</td>`);
    }
    expect(r.out).toContain('copied K @S');

    // the checkpoint carries it: resumed and stopped again before an epoch ends, the rows are the same
    let out2 = '';
    const io = { out: (t: string) => void (out2 += t), err: (t: string) => void (/^step \d+\/\d+/.test(t) && process.emit('SIGINT')) };
    expect(await trainCommand(undefined, { resume: out, backend: 'cpu', progress: false, progressSeconds: 0 }, io)).toBe(1);
    const again = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(again.steps).toBeGreaterThan(summary.steps);
    expect(again.per_member.map(({ member, hyperparameters, lr, metrics, copied }: Record<string, unknown>) => ({ member, hyperparameters, lr, metrics, copied }))).toEqual(summary.per_member);
  });
});

/**
 * A terminal of one screen, enough for a progress bar: text, carriage return, newline, and the escape
 * sequences readline and cli-progress write (cursor to a column, erase in line; the others change nothing here).
 */
class Screen {
  private readonly lines: string[] = [''];
  private row = 0;
  private col = 0;
  readonly stream: NodeJS.WriteStream;

  constructor() {
    const stream = new Writable({ write: (chunk, _enc, done) => (this.write(String(chunk)), done()) }) as unknown as NodeJS.WriteStream;
    Object.assign(stream, { isTTY: true, columns: 120 });
    this.stream = stream;
  }

  write(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\x1b') {
        const csi = /^\x1b\[([?\d;]*)([A-Za-z])/.exec(text.slice(i));
        if (csi) {
          this.escape(csi[1], csi[2]);
          i += csi[0].length - 1;
        } else i += 1; // ESC 7, ESC 8: save and restore, which a bar on one line does not need
      } else if (c === '\r') this.col = 0;
      else if (c === '\n') {
        this.row++;
        this.col = 0;
        if (this.row === this.lines.length) this.lines.push('');
      } else {
        const line = this.lines[this.row].padEnd(this.col);
        this.lines[this.row] = line.slice(0, this.col) + c + line.slice(this.col + 1);
        this.col++;
      }
    }
  }

  private escape(args: string, code: string): void {
    const n = Number(args || '0');
    const line = this.lines[this.row];
    if (code === 'G') this.col = Math.max(0, (Number(args) || 1) - 1);
    else if (code === 'K') this.lines[this.row] = n === 0 ? line.slice(0, this.col) : n === 1 ? ' '.repeat(this.col) + line.slice(this.col) : '';
  }

  rows(): string[] {
    return this.lines.map((l) => l.trimEnd());
  }
}
