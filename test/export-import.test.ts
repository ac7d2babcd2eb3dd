// netc import of a PyTorch state_dict (.safetensors): the inverse of every export layout rule, so a member
// exported and imported into another member's slot gives that slot exactly the first member's weights; a
// state_dict of another model is refused with one line naming the file and what differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportCases } from './export-models.js';
import { extract, tmp, trainTiny } from './export-helpers.js';
import { netc } from './helpers.js';
import { readCheckpoint } from '../src/cli/run-dir.js';
import { memberParams } from '../src/train/checkpoint.js';
import { decodeSafetensors, encodeSafetensors } from '../src/export/safetensors.js';

const byName = (name: string) => exportCases.find((c) => c.source.startsWith(`model ${name}(`))!;

describe('netc import of a .safetensors state_dict', () => {
  it.each(['conv', 'varied', 'images'])('%s: member 1 exported and imported into member 0 gives member 0 its weights, bit for bit', async (name) => {
    const c = byName(name);
    const { run } = await trainTiny(c.source, c.features, c.classes);
    const dir = await extract(run, join(tmp(), 'm1'), '--member', '1', '--format', 'pytorch');
    const r = await netc('import', join(dir, 'model.safetensors'), '--into', run, '--member', '0');
    expect(r.code, r.err).toBe(0);
    const { manifest, tensors } = readCheckpoint(run);
    const [m0, m1] = [memberParams(manifest, tensors, 0), memberParams(manifest, tensors, 1)];
    for (const [param, v] of m1) expect(Array.from(m0.get(param)!), param).toEqual(Array.from(v));
  });

  it('refuses a state_dict of another shape, with a missing name, or that is no safetensors file, in one line', async () => {
    const c = byName('conv');
    const { run, dir } = await trainTiny(c.source, c.features, c.classes);
    const out = await extract(run, join(tmp(), 'm1'), '--member', '1', '--format', 'pytorch');
    const { tensors } = decodeSafetensors(readFileSync(join(out, 'model.safetensors')));
    const cases: [string, Uint8Array, string][] = [];
    const wrong = new Map(tensors);
    wrong.set('dense_1.weight', { shape: [5, 4], data: new Float32Array(20) });
    cases.push(['shape.safetensors', encodeSafetensors(wrong), "'dense_1.weight' has shape [5, 4]; the run's model needs [5, 12]"]);
    const missing = new Map(tensors);
    missing.delete('batchnorm_1.running_var');
    cases.push(['missing.safetensors', encodeSafetensors(missing), "it has no batchnorm_1.running_var, which the run's model 'conv' needs"]);
    cases.push(['bad.safetensors', new Uint8Array([200, 0, 0, 0, 0, 0, 0, 0, 1, 2]), 'its header length (200 bytes) runs past the end of the file']);
    for (const [file, bytes, message] of cases) {
      writeFileSync(join(dir, file), bytes);
      const r = await netc('import', join(dir, file), '--into', run, '--member', '0');
      expect(r.code).toBe(1);
      expect(r.err).toBe(`netc: ${join(dir, file)}: ${message}\n`);
    }
  });
});

// A state_dict is checked whole before anything is written: finite values, each tensor's bytes those of
// its shape, within the file and of its own, and each name once. The run's checkpoint stays as it was.
describe('netc import of a damaged state_dict', () => {
  /** A safetensors file of this header text (padded to 8 bytes) and data bytes. */
  const raw = (header: string, data: Uint8Array) => {
    const text = header + ' '.repeat((8 - (Buffer.byteLength(header) % 8)) % 8);
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
    return Buffer.concat([head, Buffer.from(text), data]);
  };

  it('refuses NaN, infinity, bytes short of the shape, overlapping or outside bytes and a name given twice, in one line', async () => {
    const c = byName('conv');
    const { run, dir } = await trainTiny(c.source, c.features, c.classes);
    const out = await extract(run, join(tmp(), 'm1'), '--member', '1', '--format', 'pytorch');
    const good = readFileSync(join(out, 'model.safetensors'));
    const { tensors } = decodeSafetensors(good);
    const header = JSON.parse(good.subarray(8, 8 + Number(good.readBigUInt64LE(0))).toString());
    const data = good.subarray(8 + Number(good.readBigUInt64LE(0)));
    const [first, second] = Object.keys(header).filter((k) => k !== '__metadata__');
    const [b0, e0] = header[first].data_offsets;
    const cases: [string, Uint8Array, string][] = [];
    for (const bad of [NaN, -Infinity]) {
      const poisoned = new Map(tensors);
      const values = Float32Array.from(tensors.get('dense_1.weight')!.data as Float32Array);
      values[7] = bad;
      poisoned.set('dense_1.weight', { shape: tensors.get('dense_1.weight')!.shape, data: values });
      cases.push([`${bad}.safetensors`, encodeSafetensors(poisoned), `'dense_1.weight' holds ${bad} (value 7, counting from 0); netc imports finite weights only, and a run refuses a checkpoint that holds another`]);
    }
    const short = { ...header, [first]: { ...header[first], data_offsets: [b0, e0 - 4] } };
    cases.push(['short.safetensors', raw(JSON.stringify(short), data), `'${first}' has shape ${JSON.stringify(header[first].shape)}`]);
    const outside = { ...header, [first]: { ...header[first], data_offsets: [data.length, data.length + (e0 - b0)] } };
    cases.push(['outside.safetensors', raw(JSON.stringify(outside), data), `'${first}' lies outside the file`]);
    const size = header[second].data_offsets[1] - header[second].data_offsets[0];
    const overlapping = { ...header, [second]: { ...header[second], data_offsets: [b0, b0 + size] } };
    cases.push(['overlap.safetensors', raw(JSON.stringify(overlapping), data), `overlap; each tensor needs bytes of its own`]);
    const text = JSON.stringify(header);
    const twice = text.slice(0, -1) + `,${JSON.stringify(first)}:${JSON.stringify(header[first])}}`;
    cases.push(['twice.safetensors', raw(twice, data), `its header gives '${first}' twice`]);
    const before = readFileSync(join(run, 'population.json'));
    for (const [file, bytes, message] of cases) {
      writeFileSync(join(dir, file), bytes);
      const r = await netc('import', join(dir, file), '--into', run, '--member', '0');
      expect(r.code, file).toBe(1);
      expect(r.err.split('\n').length, r.err).toBe(2);
      expect(r.err, file).toContain(`netc: ${join(dir, file)}: `);
      expect(r.err, file).toContain(message);
      expect(readFileSync(join(run, 'population.json'))).toEqual(before);
    }
    // the same bytes, well formed, import (the checks can pass)
    writeFileSync(join(dir, 'good.safetensors'), raw(text, data));
    expect((await netc('import', join(dir, 'good.safetensors'), '--into', run, '--member', '0')).code).toBe(0);
  });
});

describe('safetensors', () => {
  it('is an 8-byte little-endian header length, a JSON header padded to 8 bytes, then the raw bytes', () => {
    const bytes = encodeSafetensors(new Map([['a.weight', { shape: [2], data: Float32Array.of(1.5, -2) }]]), { format: 'pt' });
    const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(length % 8).toBe(0);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    expect(header).toEqual({ __metadata__: { format: 'pt' }, 'a.weight': { dtype: 'F32', shape: [2], data_offsets: [0, 8] } });
    expect(Array.from(new Float32Array(bytes.slice(8 + length).buffer))).toEqual([1.5, -2]);
    expect(bytes.length).toBe(8 + length + 8);
  });
});

describe('netc extract --format pytorch|onnx, mistakes', () => {
  it('a layer PyTorch has no form of is one line, exit 1', async () => {
    const source = `model deep(input: [2, 2, 2, 2, 3]) {
  batchnorm()
  flatten()
  dense(1, activation: sigmoid)
}
train { data: csv("d.csv", label: "y") loss: binary_crossentropy batch: 8 steps: 1 }
`;
    const { run } = await trainTiny(source, 48, 2);
    const r = await netc('extract', run, '--member', '0', '--format', 'pytorch', '--out', join(tmp(), 'x'));
    expect(r.code).toBe(1);
    expect(r.err).toBe('netc: batchnorm_1: PyTorch has no batchnorm for 5-axis examples\n');
  });
});
