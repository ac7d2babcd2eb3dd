// What the queue transport's callers need without loading it: its error and its default patience. The
// transport itself (src/scale/queue.ts) loads bullmq and ioredis, about 30 MB and a fifth of a second at
// start, so train and worker import it only when --queue is given.

/** Redis could not be reached, or a job could not be done: printed as `netc: <message>`, exit 1. */
export class QueueError extends Error {
  override name = 'QueueError';
}

/** How many seconds Redis may stay unreachable while a run waits for its jobs, by default (--queue-timeout). */
export const DEFAULT_UNREACHABLE_SECONDS = 300;
