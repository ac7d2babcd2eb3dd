// A safetensors header that is JSON but not a safetensors header (an entry that is null, an entry without
// data_offsets, a null shape, ...) is a SafetensorsError saying which entry and what is wrong, never a
// TypeError from reading a field of null.
import { describe, expect, it } from 'vitest';
import { decodeSafetensors, SafetensorsError } from '../src/export/safetensors.js';

/** A safetensors file of this header (as JSON) and `data` bytes after it. */
function file(header: unknown, data = 8): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + head.length + data);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  return out;
}

const ok = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };

describe('decodeSafetensors refuses a malformed header', () => {
  it.each<[string, unknown, string]>([
    ['an entry that is null', { w: null }, "'w' is not a tensor entry"],
    ['an entry with no data_offsets', { w: { dtype: 'F32', shape: [2] } }, "'w' has no data_offsets"],
    ['data_offsets that are not two byte offsets', { w: { ...ok, data_offsets: [0, 'x'] } }, "'w' has data_offsets [0,\"x\"]"],
    ['a null shape', { w: { ...ok, shape: null } }, "'w' has shape null"],
    ['a negative dimension', { w: { ...ok, shape: [-2] } }, "'w' has shape [-2]"],
    ['a shape whose size differs from its bytes', { w: { ...ok, shape: [3] } }, "'w' has shape [3] (3 values of 4 bytes), but data_offsets [0,8] hold 8 bytes"],
    ['no dtype', { w: { shape: [2], data_offsets: [0, 8] } }, "'w' has no dtype"],
    ['a header that is a list', [ok], 'its header is not a JSON object'],
    ['a header that is null', null, 'its header is not a JSON object'],
    ['metadata that is not an object of strings', { __metadata__: { a: 1 }, w: ok }, '__metadata__ must map names to strings'],
  ])('%s', (_, header, message) => {
    let error: unknown;
    try {
      decodeSafetensors(file(header));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as Error).message).toContain(message);
  });

  it('reads a well-formed header', () => {
    expect(decodeSafetensors(file({ __metadata__: { format: 'pt' }, w: ok })).tensors.get('w')?.shape).toEqual([2]);
  });
});
