// Early stopping's `restore_best: true`: each member's parameters at the epoch end where its metric was
// best so far, kept on the host, so that a member that stops retires with them (as Keras'
// restore_best_weights does) instead of with its last ones. The copies travel in checkpoints as the tensors
// `NAME@best-ID`, their steps and metrics in the position, so a resumed run restores the same weights.
import type { CheckpointManifest, TrainPosition } from './checkpoint.js';

/** One member's best parameters so far: where they were taken, and the metrics of that epoch. */
export interface BestWeights {
  step: number;
  params: Map<string, Float32Array>;
  /** the epoch's metrics, as a checkpoint encodes them (non-finite values as strings) */
  metrics?: Record<string, number | string>;
}

export class BestKept {
  private readonly byMember = new Map<number, BestWeights>();

  /** The copies a checkpoint holds (none when it has none). */
  static fromCheckpoint(manifest: CheckpointManifest, tensors: Map<string, Float32Array>): BestKept {
    const kept = new BestKept();
    for (const [member, step, metrics] of manifest.position.best ?? []) {
      const suffix = `@best-${member}`;
      const params = new Map(manifest.tensors.filter((t) => t.name.endsWith(suffix)).map((t) => [t.name.slice(0, -suffix.length), tensors.get(t.name)!]));
      kept.byMember.set(member, { step, params, ...(metrics ? { metrics } : {}) });
    }
    return kept;
  }

  /** Keeps a copy of each member's parameters now (their metric is their best so far). */
  keep(members: { member: number; params: Map<string, Float32Array>; metrics?: Record<string, number | string> }[], step: number): void {
    for (const m of members) this.byMember.set(m.member, { step, params: m.params, ...(m.metrics ? { metrics: m.metrics } : {}) });
  }

  /** The member's best copy, which it no longer needs kept (it stops). */
  take(member: number): BestWeights | undefined {
    const best = this.byMember.get(member);
    this.byMember.delete(member);
    return best;
  }

  /** For the checkpoint's position: member, step and metrics of each copy. */
  position(): NonNullable<TrainPosition['best']> {
    return [...this.byMember].map(([member, b]) => [member, b.step, b.metrics ?? null]);
  }

  /** For the checkpoint's buffer: each copy's parameters as `NAME@best-ID`. */
  tensors(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const [member, b] of this.byMember) for (const [name, values] of b.params) out.set(`${name}@best-${member}`, values);
    return out;
  }
}
