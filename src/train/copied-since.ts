// A member's metrics are those of its last epoch end. A PBT exploit after it (a schedule due between epoch
// ends, or a run stopped mid-epoch after one) gives the member its source's weights and new
// hyperparameters, which those metrics were not measured under. What they were measured under is kept
// here until the member's next metrics, so that the leaderboard and summary.json pair them; a checkpoint
// carries it (TrainPosition's `copied`).
import type { TrainPosition } from './checkpoint.js';

export interface CopiedSince {
  /** the step and source of the member's last copy since its metrics */
  step: number;
  source: number;
  /** the member's hyperparameters (every key) and learning rate when its metrics were measured */
  measured: { hyperparameters: Record<string, number>; lr: number };
}

export class CopiesSinceMetrics {
  /** each member's learning rate at its last reported metrics */
  private readonly rates = new Map<number, number>();
  private readonly copies: Map<number, CopiedSince>;

  constructor(position?: TrainPosition['copied']) {
    this.copies = new Map(position?.map(([member, step, source, hyperparameters, lr]) => [member, { step, source, measured: { hyperparameters, lr } }]));
  }

  /** Metrics were reported for `ids`, each measured with its rate in `rates`: nothing was copied since. */
  reported(ids: readonly number[], rates: readonly number[]): void {
    ids.forEach((id, m) => {
      this.rates.set(id, rates[m]);
      this.copies.delete(id);
    });
  }

  /**
   * `member` takes `source`'s weights at `step`; `hyperparameters` and `lr` are its own until now (a rate
   * reported earlier wins: plateau may have moved it since). A second copy keeps what the first found.
   */
  copying(member: number, source: number, step: number, hyperparameters: Record<string, number>, lr: number): void {
    const measured = this.copies.get(member)?.measured ?? { hyperparameters, lr: this.rates.get(member) ?? lr };
    this.copies.set(member, { step, source, measured });
  }

  /** Every member copied into since its metrics, by id. */
  all(): ReadonlyMap<number, CopiedSince> {
    return this.copies;
  }

  /** As a checkpoint keeps it: undefined when no member was copied since its metrics. */
  position(): TrainPosition['copied'] {
    if (!this.copies.size) return undefined;
    return [...this.copies].map(([member, c]) => [member, c.step, c.source, c.measured.hyperparameters, c.measured.lr]);
  }
}
