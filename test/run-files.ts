// Reading a run directory in tests: the parameters of its checkpoint, without the optimizer slots.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Each parameter as [N, ...shape], member after member, in model order: the trained weights alone. */
export function paramBytes(dir: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8'));
  const bytes = readFileSync(join(dir, manifest.data));
  const params = manifest.tensors.filter((t: { name: string }) => !t.name.includes(':') && !t.name.includes('@'));
  return Buffer.concat(params.map((t: { offset: number; length: number }) => bytes.subarray(4 * t.offset, 4 * (t.offset + t.length))));
}
