// Lines for a JSON-lines file (metrics.jsonl), kept in memory and appended in batches rather than one
// synchronous append per epoch: when they pass `chars` or `ms` has gone by since the last write, and
// whenever the owner flushes (netc train: before every checkpoint, at the end, and when training stops or
// fails). The file's bytes are those of one append per push.
import { appendFileSync } from 'node:fs';

export interface LineLimits {
  /** write once this many characters are waiting */
  chars: number;
  /** write at a push this long after the last write, in milliseconds */
  ms: number;
}

export class LineBuffer {
  private chunks: string[] = [];
  private chars = 0;
  private lastWrite = performance.now();

  constructor(
    private readonly path: string,
    private readonly limits: LineLimits = { chars: 1 << 20, ms: 2000 },
  ) {}

  /** Lines (without their newlines) to append; nothing for none. */
  push(lines: string[]): void {
    if (!lines.length) return;
    const chunk = lines.join('\n') + '\n';
    this.chunks.push(chunk);
    this.chars += chunk.length;
    if (this.chars >= this.limits.chars || performance.now() - this.lastWrite >= this.limits.ms) this.flush();
  }

  /** Appends what is waiting; a failed write keeps it waiting. */
  flush(): void {
    if (!this.chunks.length) return;
    appendFileSync(this.path, this.chunks.join(''));
    this.chunks = [];
    this.chars = 0;
    this.lastWrite = performance.now();
  }
}
