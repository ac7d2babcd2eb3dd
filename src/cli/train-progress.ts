// What `netc train` says while it trains. On a terminal: a progress bar. Otherwise (a pipe, a log file):
// a line at each epoch's end, and a line at least every `everySeconds` between them, so a long first
// epoch (30 s and more at 100k members) is not silent. PBT's exploits are lines of their own as they happen,
// above the bar.
import { createRequire } from 'node:module';
import type { SingleBar } from 'cli-progress';
import type { EpochReport, PopulationEvent, Progress } from '../train/trainer.js';
import { plural } from '../util/plural.js';
import { bestIndex } from '../report/rank.js';
import type { Io } from './io.js';
import { minFiniteLoss } from '../util/extrema.js';
import { formatHyper } from '../report/format.js';

export interface ProgressSetup {
  io: Io;
  /** draw a bar on stderr (a TTY) */
  bar: boolean;
  /** where the bar is drawn (default process.stderr; tests pass a terminal of their own) */
  stream?: NodeJS.WriteStream;
  steps: number;
  epochs: number;
  /** where training starts: 0, or a resumed checkpoint's step and epoch */
  start: { step: number; epoch: number };
  /** without a bar, a line at least this often */
  everySeconds: number;
}

/**
 * cli-progress, loaded where a bar is drawn: on a terminal only (a pipe, a log file and the bench get lines),
 * and loading it took 20 ms of CPU, a twentieth of a small run's whole command.
 */
const progressBars = () => createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');

export class TrainProgress {
  private readonly bar?: SingleBar;
  private lastDraw = 0;
  private lastLine = performance.now();
  private bestLoss = Infinity;
  /** the step of the exploits being printed, and how many of them were not */
  private exploits = { step: -1, printed: 0, more: 0 };

  constructor(private readonly setup: ProgressSetup) {
    if (setup.bar) {
      this.bar = new (progressBars().SingleBar)({
        stream: setup.stream ?? process.stderr,
        format: 'train |{bar}| {value}/{total} steps | epoch {epoch}/{epochs} | {rate} member-steps/s | best loss {best}',
        hideCursor: true,
        clearOnComplete: false,
        // drawn again after a line printed above it, though its text did not change
        forceRedraw: true,
      });
      this.bar.start(setup.steps, setup.start.step, { epoch: setup.start.epoch + 1, epochs: setup.epochs, rate: '-', best: '-' });
    }
  }

  /** How often the trainer is to call step(), in milliseconds: the bar's redraw, or the line's period if shorter. */
  get everyMs(): number {
    return Math.min(BAR_MS, this.setup.everySeconds * 1000);
  }

  /** As the trainer reports (at most every everyMs, and after the last step). */
  step(p: Progress): void {
    this.exploitsCounted();
    const now = performance.now();
    if (this.bar) {
      if (now - this.lastDraw < BAR_MS && p.step !== p.steps) return;
      this.lastDraw = now;
      this.bar.update(p.step, { epoch: p.epoch, epochs: p.epochs, rate: Math.round(p.memberStepsPerSecond), best: best(p.bestLoss) });
    } else if (now - this.lastLine >= this.setup.everySeconds * 1000 && p.step !== p.steps) {
      this.lastLine = now;
      this.setup.io.err(`step ${p.step}/${p.steps} (epoch ${p.epoch}/${p.epochs}): ${Math.round(p.memberStepsPerSecond)} member-steps/s, best loss ${best(p.bestLoss)}\n`);
    }
  }

  /** At each epoch's end (and at the end of a partial last epoch). */
  epoch(r: EpochReport): void {
    this.exploitsCounted();
    this.bestLoss = minFiniteLoss(r.metrics, this.bestLoss);
    if (this.bar) {
      this.bar.update(r.step, { best: best(this.bestLoss) });
      return;
    }
    if (!r.metrics.length) return;
    const now = performance.now();
    // many short epochs (a step or two each): a line a second, and the last
    if (this.setup.epochs > MANY_EPOCHS && now - this.lastLine < 1000 && r.epoch !== this.setup.epochs) return;
    this.lastLine = now;
    const top = bestIndex(r.members, r.metrics);
    this.setup.io.err(
      `epoch ${r.epoch}/${this.setup.epochs}: step ${r.step}/${this.setup.steps}, ${plural(r.members.length, 'member')}, best member ${r.members[top]}: ${describe(r.metrics[top])}\n`,
    );
  }

  /**
   * A line of its own (a queue's waiting, an exploit), ending in a newline: in place of the bar, which is
   * drawn again below it.
   */
  note(line: string): void {
    if (!this.bar?.isActive) return this.setup.io.err(line);
    (this.setup.stream ?? process.stderr).write(`\r${CLEAR_LINE}${line}`);
    this.bar.render();
  }

  /** A PBT exploit, as it happens: the first EXPLOIT_LINES of a step each a line, the rest counted in one. */
  exploit(e: PopulationEvent): void {
    if (e.step !== this.exploits.step) {
      this.exploitsCounted();
      this.exploits = { step: e.step, printed: 0, more: 0 };
    }
    if (this.exploits.printed === EXPLOIT_LINES) {
      this.exploits.more++;
      return;
    }
    this.exploits.printed++;
    const hyper = Object.entries(e.hyperparameters ?? {}).map(([k, v]) => `, ${k} ${formatHyper(v)}`);
    this.note(`step ${e.step}: member ${e.member} copied member ${e.source}${hyper.join('')}\n`);
  }

  stop(): void {
    this.exploitsCounted();
    this.bar?.stop();
  }

  /** The line that counts the exploits of a step not printed, once the step's exploits are over. */
  private exploitsCounted(): void {
    const { step, more } = this.exploits;
    if (!more) return;
    this.exploits.more = 0;
    this.note(`step ${step}: and ${plural(more, 'more exploit')} (events.jsonl has every one)\n`);
  }
}

/** At most this many exploits of one step are printed each on its line (a quarter of 100,000 members may exploit at once). */
const EXPLOIT_LINES = 10;

/** Erase the whole line (ECMA-48 EL 2): the bar's, before a line is printed where it was. */
const CLEAR_LINE = '\x1b[2K';

/** Above this many epochs, epoch lines come at most once a second (and the last). */
const MANY_EPOCHS = 100;

/** The least time between two draws of the bar, in milliseconds. */
const BAR_MS = 100;

const best = (loss: number) => (Number.isFinite(loss) ? loss.toFixed(4) : '-');

function describe(m: { loss: number; accuracy?: number; val_loss?: number; val_accuracy?: number }): string {
  return Object.entries(m)
    .map(([k, v]) => `${k} ${(v as number).toFixed(4)}`)
    .join(', ');
}
