// Lines for a JSON-lines file (metrics.jsonl), kept in memory and appended in batches rather than one
// synchronous append per epoch: when they pass `chars` or `ms` has gone by since the last write, and
// whenever the owner flushes (netc train: before every checkpoint, at the end, and when training stops or
// fails). The file's bytes are those of one append per push.
import { closeSync, openSync, writeSync } from 'node:fs';

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

  /**
   * Appends what is waiting, piece after piece (not joined first: 100,000 members' lines made a 13 MB string
   * on top of their pieces); a failed write keeps what it had not written waiting.
   */
  flush(): void {
    if (!this.chunks.length) return;
    const fd = openSync(this.path, 'a');
    try {
      while (this.chunks.length) {
        const chunk = Buffer.from(this.chunks[0]);
        for (let done = 0; done < chunk.length; ) done += writeSync(fd, chunk, done, chunk.length - done);
        this.chars -= this.chunks.shift()!.length;
      }
    } finally {
      closeSync(fd);
    }
    this.lastWrite = performance.now();
  }
}
