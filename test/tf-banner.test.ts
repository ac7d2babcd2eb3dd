// TF.js's "looks like you are running TensorFlow.js in Node.js" banner is silenced wherever netc loads
// TF.js (loadTF, which a compiled module uses too), not only where it selects a backend (issue 37, smaller
// things). Run in a fresh process: the banner is printed once per process.
import { describe, expect, it } from 'vitest';
import { spawnNode } from './helpers.js';

describe('TF.js as netc loads it', () => {
  it('prints no Node.js banner on its first cpu tensor', async () => {
    const script = `import { loadTF } from './dist/runtime/backend.js';
const tf = await loadTF();
await tf.setBackend('cpu');
tf.tensor([1, 2]).square().dataSync();
console.log('ok', tf.getBackend());`;
    const r = await spawnNode(['--input-type=module', '-e', script], process.cwd());
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('ok cpu\n');
    expect(r.err).not.toContain('looks like you are running TensorFlow.js in Node.js');
  });
});
