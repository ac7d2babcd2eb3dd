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

interface Entry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<string, number> = { F32: 4, I64: 8 };
const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 80);
const isOffset = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** The header's JSON, checked to be an object; its `__metadata__` checked to map names to strings. */
function parseHeader(text: string): { metadata: Record<string, string>; entries: Record<string, unknown> } {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw new SafetensorsError('its header is not JSON');
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new SafetensorsError('its header is not a JSON object of tensor entries');
  const { __metadata__: metadata = {}, ...entries } = header as Record<string, unknown>;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || Object.values(metadata).some((v) => typeof v !== 'string')) {
    throw new SafetensorsError(`its __metadata__ must map names to strings, got ${show(metadata)}`);
  }
  return { metadata: metadata as Record<string, string>, entries };
}

/** One header entry checked: a known dtype, a shape of sizes, and data_offsets holding exactly its bytes. */
function checkEntry(name: string, e: unknown): Entry {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) throw new SafetensorsError(`'${name}' is not a tensor entry ({ dtype, shape, data_offsets }), got ${show(e)}`);
  const { dtype, shape, data_offsets: offsets } = e as Partial<Entry>;
  if (dtype === undefined) throw new SafetensorsError(`'${name}' has no dtype`);
  if (typeof dtype !== 'string' || !(dtype in BYTES)) throw new SafetensorsError(`'${name}' is ${show(dtype)}; netc reads F32 and I64 tensors`);
  if (!Array.isArray(shape) || !shape.every(isOffset)) throw new SafetensorsError(`'${name}' has shape ${show(shape)}; a shape is a list of sizes, each an integer >= 0`);
  if (offsets === undefined) throw new SafetensorsError(`'${name}' has no data_offsets`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isOffset) || offsets[0] > offsets[1]) {
    throw new SafetensorsError(`'${name}' has data_offsets ${show(offsets)}; they must be [begin, end], two byte offsets with begin <= end`);
  }
  const size = shape.reduce((a, b) => a * b, 1);
  if (size * BYTES[dtype] !== offsets[1] - offsets[0]) {
    throw new SafetensorsError(`'${name}' has shape ${show(shape)} (${size} values of ${BYTES[dtype]} bytes), but data_offsets ${show(offsets)} hold ${offsets[1] - offsets[0]} bytes`);
  }
  return { dtype, shape, data_offsets: offsets };
}

/** Reads a safetensors file written by encodeSafetensors or PyTorch's safetensors (F32 and I64 tensors). */
export function decodeSafetensors(bytes: Uint8Array): { tensors: Map<string, SafeTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new SafetensorsError('too short for a safetensors header');
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (8 + length > bytes.length) throw new SafetensorsError(`its header length (${length} bytes) runs past the end of the file`);
  const header = new TextDecoder().decode(bytes.subarray(8, 8 + length));
  const { metadata, entries } = parseHeader(header);
  const tensors = new Map<string, SafeTensor>();
  const data = bytes.subarray(8 + length);
  for (const [name, entry] of Object.entries(entries)) {
    const e = checkEntry(name, entry);
    const [begin, end] = e.data_offsets;
    if (end > data.length) throw new SafetensorsError(`'${name}' lies outside the file`);
    // a copy, aligned (a Node Buffer's slice would share its pool's memory)
    const slice = new Uint8Array(end - begin);
    slice.set(data.subarray(begin, end));
    const values = e.dtype === 'F32' ? new Float32Array(slice.buffer, 0, (end - begin) / 4) : new BigInt64Array(slice.buffer, 0, (end - begin) / 8);
    tensors.set(name, { shape: e.shape, data: values });
  }
  // every entry is well formed by now (checkEntry)
  checkLayout(header, Object.entries(entries) as [string, Entry][]);
  return { tensors, metadata };
}

/**
 * The header names each tensor once (JSON.parse would keep the last of two entries of one name, silently)
 * and no two tensors share bytes: what PyTorch's safetensors refuses too.
 */
function checkLayout(text: string, entries: readonly (readonly [string, Entry])[]): void {
  const twice = keyGivenTwice(text);
  if (twice !== undefined) throw new SafetensorsError(`its header gives '${twice}' twice`);
  const spans = entries.filter(([, e]) => e.data_offsets[1] > e.data_offsets[0]).sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  const at = spans.findIndex(([, e], i) => i > 0 && e.data_offsets[0] < spans[i - 1][1].data_offsets[1]);
  if (at > 0) {
    const [[a, ea], [b, eb]] = [spans[at - 1], spans[at]];
    throw new SafetensorsError(`'${a}' (bytes ${show(ea.data_offsets)}) and '${b}' (bytes ${show(eb.data_offsets)}) overlap; each tensor needs bytes of its own`);
  }
}

/** The first key that the top-level object of `text` (valid JSON) gives twice, or undefined. */
function keyGivenTwice(text: string): string | undefined {
  const seen = new Set<string>();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (depth === 1 && text[next] === ':') {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
      }
      i = end;
    }
  }
  return undefined;
}
