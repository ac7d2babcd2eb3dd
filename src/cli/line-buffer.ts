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
    if (lines.length) this.pushText(lines.join('\n') + '\n');
  }

  /** Lines already joined, each ending in its newline; nothing for ''. */
  pushText(chunk: string): void {
    if (!chunk) return;
    this.chunks.push(chunk);
    this.chars += chunk.length;
    if (this.chars >= this.limits.chars || performance.now() - this.lastWrite >= this.limits.ms) this.flush();
  }

  /**
   * Appends what is waiting, the pushes gathered to about WRITE_CHARS a write (not all joined first: 100,000
   * members' lines made a 13 MB string on top of their pieces; nor a write a push: an epoch of 15 members
   * pushes 2 KB); a failed write keeps what it had not written waiting.
   */
  flush(): void {
    if (!this.chunks.length) return;
    const fd = openSync(this.path, 'a');
    try {
      while (this.chunks.length) {
        let count = 0;
        let chars = 0;
        while (count < this.chunks.length && (count === 0 || chars + this.chunks[count].length <= WRITE_CHARS)) chars += this.chunks[count++].length;
        const bytes = Buffer.from(this.chunks.slice(0, count).join(''));
        for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
        this.chunks.splice(0, count);
        this.chars -= chars;
      }
    } finally {
      closeSync(fd);
    }
    this.lastWrite = performance.now();
  }
}

/** What flush() gathers into one write, in characters: a string small enough to die young. */
const WRITE_CHARS = 1 << 16;
