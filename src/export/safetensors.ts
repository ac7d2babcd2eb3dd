// The safetensors format (https://github.com/huggingface/safetensors), written and read without a
// package: an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and byte
// range, then the tensors' raw little-endian bytes, one after another.

export interface SafeTensor {
  shape: number[];
  data: Float32Array | BigInt64Array;
}

const dtypeOf = (data: SafeTensor['data']) => (data instanceof Float32Array ? 'F32' : 'I64');

/** The file of `tensors` (in their order), with `metadata` as the header's `__metadata__` (strings only). */
export function encodeSafetensors(tensors: Map<string, SafeTensor>, metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = Object.keys(metadata).length ? { __metadata__: metadata } : {};
  let offset = 0;
  for (const [name, t] of tensors) {
    header[name] = { dtype: dtypeOf(t.data), shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  // the header is padded with spaces so that the data begins 8-byte aligned
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const t of tensors.values()) {
    // typed arrays hold the machine's byte order; every machine Node runs on is little-endian
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}

/** A safetensors file that is not one. */
export class SafetensorsError extends Error {
  override name = 'SafetensorsError';
}

/** Reads a safetensors file written by encodeSafetensors or PyTorch's safetensors (F32 and I64 tensors). */
export function decodeSafetensors(bytes: Uint8Array): { tensors: Map<string, SafeTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new SafetensorsError('too short for a safetensors header');
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (8 + length > bytes.length) throw new SafetensorsError(`its header length (${length} bytes) runs past the end of the file`);
  let header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  } catch {
    throw new SafetensorsError('its header is not JSON');
  }
  const { __metadata__: metadata = {}, ...entries } = header as Record<string, never>;
  const tensors = new Map<string, SafeTensor>();
  const data = bytes.subarray(8 + length);
  for (const [name, e] of Object.entries(entries) as [string, { dtype: string; shape: number[]; data_offsets: [number, number] }][]) {
    const [begin, end] = e.data_offsets;
    if (end > data.length || begin > end) throw new SafetensorsError(`'${name}' lies outside the file`);
    // a copy, aligned (a Node Buffer's slice would share its pool's memory)
    const slice = new Uint8Array(end - begin);
    slice.set(data.subarray(begin, end));
    if (e.dtype === 'F32') tensors.set(name, { shape: e.shape, data: new Float32Array(slice.buffer, 0, (end - begin) / 4) });
    else if (e.dtype === 'I64') tensors.set(name, { shape: e.shape, data: new BigInt64Array(slice.buffer, 0, (end - begin) / 8) });
    else throw new SafetensorsError(`'${name}' is ${e.dtype}; netc reads F32 and I64 tensors`);
  }
  return { tensors, metadata };
}
