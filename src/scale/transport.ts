// How shard jobs reach whoever runs them. One coordinator (the trainer), three transports that differ
// only in that: this process, one job after another (`--resident`: waves); worker processes on this
// machine (`--workers K`); a BullMQ queue on Redis, served by `netc worker` anywhere (`--queue URL`).
import type { RunContext, ShardJob, ShardResult } from './shard-job.js';

export interface Transport {
  /** what summary.json and the progress line call it: `in-process`, `2 local workers`, `queue redis://...` */
  readonly name: string;
  /** how many jobs run at once: the population is cut into this many shards (at least) */
  readonly slots: number;
  /** makes the run's context known to whoever runs its jobs */
  open(ctx: RunContext): Promise<void>;
  /** runs the jobs, concurrently where it can; results in the jobs' order */
  run(jobs: ShardJob[]): Promise<ShardResult[]>;
  close(): Promise<void>;
}

/** Cuts ids into `count` contiguous shards of near-equal size (the first ones one larger), none empty. */
export function shards(ids: number[], count: number, most = Infinity): number[][] {
  const k = Math.max(1, Math.min(ids.length, Math.max(count, Math.ceil(ids.length / most))));
  const out: number[][] = [];
  let start = 0;
  for (let i = 0; i < k; i++) {
    const size = Math.floor(ids.length / k) + (i < ids.length % k ? 1 : 0);
    out.push(ids.slice(start, start + size));
    start += size;
  }
  return out;
}
