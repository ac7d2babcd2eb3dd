// The transport of `--resident K`: this process runs the shard jobs one after another, so at most one
// shard's members are on the device at a time (waves).
import type { TF } from '../kernels/tf.js';
import { runShardJob, type RunContext, type ShardJob, type ShardResult } from './shard-job.js';
import type { Transport } from './transport.js';

export class InProcess implements Transport {
  readonly name = 'in-process';
  readonly slots = 1;
  private ctx?: RunContext;

  constructor(private readonly tf: TF) {}

  async open(ctx: RunContext): Promise<void> {
    this.ctx = ctx;
  }

  async run(jobs: ShardJob[]): Promise<ShardResult[]> {
    const out: ShardResult[] = [];
    for (const job of jobs) out.push(await runShardJob(this.tf, this.ctx!, job));
    return out;
  }

  async close(): Promise<void> {}
}
