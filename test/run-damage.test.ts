// Damaged and misused run files: each is one line and exit code 1, never a stack trace, and nothing is
// lost. A checkpoint's checksums and fields are checked on load; a resume without population.json does not
// start over a trained run; a torn last line of metrics.jsonl is dropped; run.json and population.json cut
// short are refused by extract, eval and predict; import checks the model's weight files against model.json.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { netc } from './helpers.js';
import { manifestProblem, tensorChecksum } from '../src/train/checkpoint.js';
import { readCheckpoint, writeCheckpointFiles } from '../src/cli/run-dir.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-damage-'));
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |bug in netc|internal error/);

let trained: string;
let model: string;
beforeAll(async () => {
  trained = join(tmp(), 'run');
  const r = await netc('train', 'examples/xor.net', '--steps', '5', '--checkpoint-every', '5', '--backend', 'cpu', '--out', trained);
  expect(r.code, r.err).toBe(0);
  model = join(tmp(), 'm0');
  const x = await netc('extract', trained, '--member', '0', '--out', model, '--backend', 'cpu');
  expect(x.code, x.err).toBe(0);
});

function copy(dir: string): string {
  const to = join(tmp(), 'copy');
  cpSync(dir, to, { recursive: true });
  return to;
}

/** Every file of a folder and its bytes. */
const snapshot = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString('base64')]));

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8'));

/**
 * Expects a refusal: exit code 1, the message, no stack trace, and nothing after the one line that says
 * what is wrong (a diagnostic: its `lines` with the excerpt). Lines before it (the backend chosen) are talk.
 */
function refused(r: { code: number; err: string }, message: string | RegExp, lines = 1): void {
  expect(r.code, r.err).toBe(1);
  const shown = r.err.trim().split('\n');
  const at = shown.findIndex((l) => (typeof message === 'string' ? l.includes(message) : message.test(l)));
  expect(at, r.err).toBeGreaterThanOrEqual(0);
  expect(shown.length - at, r.err).toBeLessThanOrEqual(lines);
  noStack(r.err);
}

describe('the checkpoint', () => {
  it('keeps a SHA-256 of each tensor, and a flipped byte is refused with the tensor it is in', async () => {
    const dir = copy(trained);
    const m = manifestOf(dir);
    expect(m.tensors.every((t: { sha256?: string }) => /^[0-9a-f]{64}$/.test(t.sha256 ?? ''))).toBe(true);
    const bin = join(dir, m.data);
    const bytes = readFileSync(bin);
    const second = m.tensors[1];
    bytes[4 * second.offset + 2] ^= 0x40;
    writeFileSync(bin, bytes);
    refused(await netc('train', '--resume', dir, '--steps', '10'), `is damaged: the values of tensor ${second.name} do not match their checksum`);
    refused(await netc('extract', dir, '--member', '0', '--out', join(tmp(), 'x')), 'do not match their checksum');
  });

  it.each([
    ['a negative step', (m: any) => (m.position.step = -1), "position's 'step' (-1) is not a non-negative integer"],
    ['duplicate member ids', (m: any) => (m.member_ids[1] = m.member_ids[0]), 'member 0 appears twice'],
    ['a negative offset', (m: any) => (m.tensors[0].offset = -4), "offset (-4) puts it outside the buffer"],
    ['a wrong shape', (m: any) => (m.tensors[0].shape = [3, 2, 8]), 'is not that of its shape'],
    ['a data path out of the run', (m: any) => (m.data = '../population-5.bin'), "is not a buffer file of the run"],
  ])('refuses %s, saying what is wrong', async (_, change, message) => {
    const dir = copy(trained);
    const m = manifestOf(dir);
    change(m);
    writeFileSync(join(dir, 'population.json'), JSON.stringify(m));
    refused(await netc('train', '--resume', dir, '--steps', '10'), message);
  });

  it('refuses a NaN planted in a training member\'s weights, even with its checksum made to match', async () => {
    const dir = copy(trained);
    const m = manifestOf(dir);
    const bin = join(dir, m.data);
    const bytes = readFileSync(bin);
    const kernel = m.tensors.find((t: { name: string }) => t.name === 'dense_1/kernel');
    const size = kernel.length / m.members;
    // member_ids[1]'s third float
    bytes.writeFloatLE(NaN, 4 * (kernel.offset + size + 2));
    writeFileSync(bin, bytes);
    const view = new Uint8Array(bytes);
    writeFileSync(join(dir, 'population.json'), JSON.stringify({ ...m, tensors: m.tensors.map((t: { offset: number; length: number }) => ({ ...t, sha256: tensorChecksum(view, t) })) }));
    const message = `member ${m.member_ids[1]}'s parameter dense_1/kernel holds a NaN or an infinity`;
    refused(await netc('train', '--resume', dir, '--steps', '10'), message);
    refused(await netc('extract', dir, '--member', '0', '--out', join(tmp(), 'x')), message);
  });

  it('accepts what netc writes (the checks can pass)', () => {
    const m = manifestOf(trained);
    expect(manifestProblem(m, readFileSync(join(trained, m.data)).length / 4)).toBeUndefined();
  });
});

describe('a resume', () => {
  it('refuses a run whose population.json is gone and deletes nothing', async () => {
    const dir = copy(trained);
    rmSync(join(dir, 'population.json'));
    refused(await netc('train', '--resume', dir, '--steps', '10'), /has no population\.json, but it holds its checkpoint buffer population-5\.bin/);
    expect(existsSync(join(dir, 'population-5.bin'))).toBe(true);
    expect(existsSync(join(dir, 'metrics.jsonl'))).toBe(true);
  });

  it('drops a torn last line of metrics.jsonl and writes the rows again', async () => {
    const dir = copy(trained);
    const r0 = await netc('train', '--resume', dir, '--steps', '25', '--checkpoint-every', '5');
    expect(r0.code, r0.err).toBe(0);
    const whole = readFileSync(join(dir, 'metrics.jsonl'), 'utf8');
    // back to step 5's checkpoint, with the last row half written
    const back = copy(trained);
    writeFileSync(join(back, 'metrics.jsonl'), whole.slice(0, whole.length - 40));
    const r = await netc('train', '--resume', back, '--steps', '25', '--checkpoint-every', '5');
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(back, 'metrics.jsonl'), 'utf8')).toBe(whole);
  });

  it('refuses a row in the middle of metrics.jsonl that is not JSON, with its line number', async () => {
    const dir = copy(trained);
    writeFileSync(join(dir, 'metrics.jsonl'), '{"step":1}\n{"step\n{"step":2}\n');
    refused(await netc('train', '--resume', dir, '--steps', '10'), /metrics\.jsonl:2 is damaged/);
  });

  it('refuses run.json whose kept options are not typed', async () => {
    const dir = copy(trained);
    const info = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    info.options.steps = 'abc';
    writeFileSync(join(dir, 'run.json'), JSON.stringify(info));
    refused(await netc('train', '--resume', dir), `run.json is damaged: its option 'steps' ("abc") is not a non-negative integer`);
  });
});

describe('files cut short', () => {
  it.each(['run.json', 'population.json'])('%s cut in half: extract, eval and predict refuse it in one line', async (name) => {
    const dir = copy(trained);
    const path = join(dir, name);
    truncateSync(path, Math.floor(readFileSync(path).length / 2));
    for (const argv of [
      ['extract', dir, '--member', '0', '--out', join(tmp(), 'x'), '--backend', 'cpu'],
      ['eval', dir, '--backend', 'cpu'],
      ['predict', dir, '--backend', 'cpu'],
    ]) {
      refused(await netc(...argv), `${name} is damaged: it is not valid JSON`);
    }
  });
});

describe('netc import checks the model files', () => {
  const importInto = async (from: string) => {
    const run = copy(trained);
    const before = readFileSync(join(run, 'population.json'), 'utf8');
    const r = await netc('import', from, '--into', run, '--member', '1');
    expect(readFileSync(join(run, 'population.json'), 'utf8')).toBe(before);
    return r;
  };

  it('refuses a truncated weights.bin', async () => {
    const m = copy(model);
    truncateSync(join(m, "weights.bin"), 100);
    refused(await importInto(m), /error NET4023: weights\.bin holds 100 bytes; model\.json.s weights need 132/, 3);
  });

  it('refuses a weight file outside the model folder', async () => {
    const m = copy(model);
    const json = JSON.parse(readFileSync(join(m, 'model.json'), 'utf8'));
    json.weightsManifest[0].paths = ['../../etc/passwd'];
    writeFileSync(join(m, 'model.json'), JSON.stringify(json));
    refused(await importInto(m), /NET4023: the weight file '\.\.\/\.\.\/etc\/passwd' is outside the model's folder/, 3);
  });

  it('refuses a missing weights.bin and a model.json that is not JSON, in one line', async () => {
    const m = copy(model);
    rmSync(join(m, 'weights.bin'));
    refused(await importInto(m), /NET4023: the weight file 'weights\.bin' is missing/, 3);
    writeFileSync(join(m, 'model.json'), '{"weightsManifest": [');
    refused(await importInto(m), /model\.json is not valid JSON/);
    writeFileSync(join(m, 'model.json'), '{"weightsManifest": 3}');
    refused(await importInto(m), /has no valid weightsManifest/);
  });

  it('refuses a weights.bin holding a NaN or an infinity; the run still extracts', async () => {
    for (const bad of [NaN, Infinity]) {
      const m = copy(model);
      const bytes = readFileSync(join(m, 'weights.bin'));
      new DataView(bytes.buffer, bytes.byteOffset).setFloat32(4 * 3, bad, true);
      writeFileSync(join(m, 'weights.bin'), bytes);
      const run = copy(trained);
      const files = snapshot(run);
      const r = await netc('import', m, '--into', run, '--member', '1');
      refused(r, new RegExp(`NET4023: weight 'dense_1/kernel' holds ${bad} \\(value 3, counting from 0\\) in weights\\.bin; netc imports finite weights only`), 3);
      expect(r.err).toMatch(/model\.json\(1,\d+\): error NET4023/);
      expect(snapshot(run)).toEqual(files);
      expect((await netc('extract', run, '--member', '1', '--out', join(tmp(), 'x'), '--backend', 'cpu')).code).toBe(0);
    }
  });

  it('refuses a model.json that names a weight twice', async () => {
    const m = copy(model);
    const json = JSON.parse(readFileSync(join(m, 'model.json'), 'utf8'));
    const weights = json.weightsManifest[0].weights;
    weights[1].name = weights[0].name;
    writeFileSync(join(m, 'model.json'), JSON.stringify(json));
    refused(await importInto(m), `model.json names the weight '${weights[0].name}' twice`, 3);
  });

  it('writeCheckpointFiles refuses a checkpoint the run could not read back (a NaN parameter), and keeps the previous one', async () => {
    const run = copy(trained);
    const files = snapshot(run);
    const { manifest, tensors } = readCheckpoint(run);
    const param = manifest.tensors.find((t) => !t.name.includes(':') && !t.name.includes('@') && !t.shared)!;
    tensors.get(param.name)![param.length / manifest.members + 1] = NaN;
    await expect(writeCheckpointFiles(run, manifest, tensors)).rejects.toThrow(`member ${manifest.member_ids[1]}'s parameter ${param.name} holds NaN, which a run cannot resume from; the checkpoint is not written, and the previous one is kept`);
    expect(snapshot(run)).toEqual(files);
    expect(readCheckpoint(run).manifest.position.step).toBe(5);
  });

  it('still imports a whole model (the checks can pass)', async () => {
    const run = copy(trained);
    const r = await netc('import', model, '--into', run, '--member', '1');
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(run).filter((f) => f.startsWith('population-'))).toEqual(['population-5.bin']);
  });
});
