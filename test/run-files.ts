// Reading a run directory in tests: the parameters of its checkpoint, without the optimizer slots; what two
// runs of one population must share.
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { join } from 'node:path';

/** Each parameter as [N, ...shape], member after member, in model order: the trained weights alone. */
export function paramBytes(dir: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8'));
  const bytes = readFileSync(join(dir, manifest.data));
  const params = manifest.tensors.filter((t: { name: string }) => !t.name.includes(':') && !t.name.includes('@'));
  return Buffer.concat(params.map((t: { offset: number; length: number }) => bytes.subarray(4 * t.offset, 4 * (t.offset + t.length))));
}

/** What summary.json says that the clock, the resume point or the transport decide, not the training. */
const CIRCUMSTANTIAL = ['train_seconds', 'member_steps_per_second', 'epoch_timings', 'resumed_from_step', 'transport', 'shards', 'threads'];

/**
 * The files a run leaves that another run of the same population (resumed, in waves, sharded) must share
 * byte for byte: the checkpoint, events.jsonl ('' when the run wrote none), metrics.jsonl, and summary.json
 * less what is circumstantial.
 */
export function runFiles(dir: string): Record<string, string | Buffer> {
  const read = (name: string) => readFileSync(join(dir, name));
  const manifest = JSON.parse(read('population.json').toString());
  const summary = JSON.parse(read('summary.json').toString());
  for (const key of CIRCUMSTANTIAL) delete summary[key];
  return {
    'population.json': read('population.json').toString(),
    [manifest.data]: read(manifest.data),
    'events.jsonl': existsSync(join(dir, 'events.jsonl')) ? read('events.jsonl').toString() : '',
    'metrics.jsonl': read('metrics.jsonl').toString(),
    'summary.json': JSON.stringify(summary, null, 1),
  };
}

/** Asserts that the run in `dir` left what the run in `reference` left (runFiles). */
export function expectSameRun(dir: string, reference: string): void {
  const [a, b] = [runFiles(reference), runFiles(dir)];
  expect(Object.keys(b)).toEqual(Object.keys(a));
  for (const name of Object.keys(a)) expect(b[name], name).toEqual(a[name]);
}
