// A full garbage collection, asked for where a large run has just let go of large values and is about to
// make more (its last checkpoint, summary.json, the report). V8 collects its old generation once that has
// grown by a factor of what was live after the last collection, so the values a phase let go of stay
// resident under the next phase's: 100,000 forum members ended at 400 MB of RSS with less than 300 MB live.
// Node hands the collector to code only behind --expose-gc; the flag is set for this once, as jest's leak
// detector does.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;
/** the heap in use after the last full collection (collectIfGrown's baseline) */
let usedAfter = 0;

export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  usedAfter = getHeapStatistics().used_heap_size;
}

/**
 * A full collection once the heap in use has grown by `bytes` since the last full one (any caller's), for a
 * large run while it trains: V8 lets garbage reach about what is live again before it collects, and
 * 100,000 members' steps each leave 1.6 MB of arrays (the beta powers' new values) behind: 40 steps had
 * 57 MB of them resident.
 * A look costs a microsecond; a collection of that heap about 30 ms, once in tens of steps.
 */
export function collectIfGrown(bytes = 24 << 20): void {
  if (getHeapStatistics().used_heap_size >= usedAfter + bytes) collectGarbage();
}
