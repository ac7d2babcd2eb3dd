// `netc extract --format onnx|pytorch` and `--ensemble`: every exported graph runs in onnxruntime-web
// (WebAssembly, in Node), and every model.py with its safetensors in PyTorch where python3 has torch, and
// each equals the TF.js LayersModel that `netc extract` writes (a model TF.js cannot load: the members as netc
// computes them, on TF.js ops), within 1e-5, on random inputs.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import * as ort from 'onnxruntime-web';
import { exportCases } from './export-models.js';
import { extract, maxDiff, randomInput, tmp, toExported, trainTiny } from './export-helpers.js';
import { registerFileScheme } from '../src/serve/file-io.js';
import { netc } from './helpers.js';
import { openRun } from '../src/cli/run-dir.js';
import { onnxType, schemaDescriptor } from '../src/export/onnx-schema.js';
import { onnxSchema } from '../src/export/onnx-schema.generated.js';
import { ONNX_OPSET } from '../src/export/onnx.js';
import { voteClasses } from '../src/serve/inference.js';
import type { TF } from '../src/kernels/tf.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

const TOLERANCE = 1e-5;
const BATCH = 5;

beforeAll(async () => {
  await tf.setBackend('cpu');
  ort.env.wasm.numThreads = 1;
});

async function loadModel(dir: string): Promise<tf.LayersModel> {
  registerFileScheme(tf as unknown as TF);
  return tf.loadLayersModel(pathToFileURL(join(dir, 'model.json')).href);
}

/** Each member of the run on x as netc computes it (its population on TF.js ops), for a model TF.js cannot load. */
function opPathOutputs(run: string, x: tf.Tensor): tf.Tensor[] {
  const { population } = openRun(run, tf as unknown as TF);
  const out = population.forward(x as never, false) as unknown as tf.Tensor;
  const members = tf.unstack(out);
  population.dispose();
  return members;
}

/** Each member's output on x, by the case's reference: the extracted TF.js models, or the op path. */
async function referenceOutputs(c: { members: number; reference?: 'op path' }, run: string, x: tf.Tensor): Promise<tf.Tensor[]> {
  if (c.reference === 'op path') return opPathOutputs(run, x);
  const dir = await extract(run, join(tmp(), 'tfjs'), '--all');
  const refs: tf.Tensor[] = [];
  for (let k = 0; k < c.members; k++) {
    const model = await loadModel(join(dir, `member-${k}`));
    refs.push(toExported(model.predict(x) as tf.Tensor));
    model.dispose();
  }
  return refs;
}

async function runOnnx(path: string, x: tf.Tensor): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(readFileSync(path));
  const input = new ort.Tensor('float32', x.dataSync() as Float32Array, x.shape);
  const out = await session.run({ input });
  await session.release();
  return out;
}

// PyTorch's side runs where python3 imports torch and safetensors (NETC_PYTHON names another python);
// NETC_REQUIRE_TORCH=1 makes it required
const python = process.env.NETC_PYTHON ?? 'python3';
const hasTorch = spawnSync(python, ['-c', 'import torch, safetensors'], { stdio: 'ignore' }).status === 0;
const torchSkipped = 'SKIPPED: python3 cannot import torch and safetensors';
const torchChecks: { name: string; dir: string; reference: string; run: string; opPath: boolean }[] = [];

describe.each(exportCases)('export: $name', (c) => {
  let run = '';
  let x: tf.Tensor;
  const refs: tf.Tensor[] = [];
  beforeAll(async () => {
    ({ run } = await trainTiny(c.source, c.features, c.classes, c.tokens));
    x = randomInput(BATCH, c.input, 11, c.tokens);
    refs.push(...(await referenceOutputs(c, run, x)));
    // the members differ, so a mix-up of their weights or arguments would show
    expect(maxDiff(refs[0].dataSync(), refs[1].dataSync())).toBeGreaterThan(1e-4);
  }, 60_000);

  it('each model.onnx and the ensemble.onnx compute what the extracted TF.js models compute', async () => {
    const dir = await extract(run, join(tmp(), 'onnx'), '--all', '--format', 'onnx');
    for (let k = 0; k < c.members; k++) {
      const got = await runOnnx(join(dir, `member-${k}`, 'model.onnx'), toExported(x));
      expect(got.output.dims).toEqual(refs[k].shape);
      expect(maxDiff(got.output.data as Float32Array, refs[k].dataSync()), `member ${k}`).toBeLessThanOrEqual(TOLERANCE);
    }
    const ensemble = await extract(run, join(tmp(), 'ensemble'), '--ensemble', '--format', 'onnx');
    const got = await runOnnx(join(ensemble, 'ensemble.onnx'), toExported(x));
    const members = tf.stack(refs);
    expect(got.members.dims).toEqual(members.shape);
    expect(maxDiff(got.members.data as Float32Array, members.dataSync())).toBeLessThanOrEqual(TOLERANCE);
    expect(maxDiff(got.mean.data as Float32Array, tf.mean(members, 0).dataSync())).toBeLessThanOrEqual(TOLERANCE);
    // a shared layer's weights are in the graph once, computed once for every member
    const initializers = (onnxType('ModelProto').decode(readFileSync(join(ensemble, 'ensemble.onnx'))) as unknown as { graph: { initializer: { name: string }[] } }).graph.initializer.map((i) => i.name);
    const trunk = initializers.filter((i) => i.endsWith('dense_1.weight'));
    expect(trunk).toEqual(c.source.includes('shared dense') ? ['shared/dense_1.weight'] : Array.from({ length: c.members }, (_, k) => `member_${k}/dense_1.weight`));
    const vote = voteClasses(tf as unknown as TF, members as never) as unknown as tf.Tensor;
    expect(Array.from(got.vote.data as BigInt64Array, Number)).toEqual(Array.from(vote.dataSync()));
  });

  it('writes model.py, model.safetensors, ensemble.safetensors and members.json for PyTorch (checked in PyTorch below)', async () => {
    const dir = await extract(run, join(tmp(), 'pytorch'), '--all', '--format', 'pytorch');
    const listed = JSON.parse(readFileSync(join(dir, 'members.json'), 'utf8')).members;
    expect(listed.map((m: { member: number }) => m.member)).toEqual(refs.map((_, k) => k));
    const entry = (t: tf.Tensor) => ({ shape: t.shape, data: Array.from(t.dataSync()) });
    const reference = join(dir, '..', 'reference.json');
    writeFileSync(reference, JSON.stringify({ input: entry(toExported(x)), ...(c.tokens ? { tokens: c.tokens } : {}), members: refs.map((r, member) => ({ member, output: entry(r) })) }));
    torchChecks.push({ name: c.name, dir, reference, run, opPath: c.reference === 'op path' });
  });
});

// one python for every case: importing torch takes seconds
describe('PyTorch', () => {
  it.skipIf(!hasTorch && process.env.NETC_REQUIRE_TORCH !== '1')(`runs every case's model.py, model.safetensors and ensemble.safetensors (${hasTorch ? python : torchSkipped})`, () => {
    expect(hasTorch, `NETC_REQUIRE_TORCH=1, but ${python} cannot import torch and safetensors`).toBe(true);
    expect(torchChecks.length).toBe(exportCases.length);
    const args = torchChecks.flatMap((t) => [t.dir, t.reference]);
    const r = spawnSync(python, [fileURLToPath(new URL('python/check_export.py', import.meta.url)), ...args], { encoding: 'utf8' });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    console.log(r.stdout.trim());
    expect(r.stdout.trim().split('\n')).toHaveLength(exportCases.length);
  });

  it.skipIf(!hasTorch && process.env.NETC_REQUIRE_TORCH !== '1')(`netc import of each state_dict trained in PyTorch predicts what PyTorch predicts (${hasTorch ? python : torchSkipped})`, async () => {
    expect(hasTorch, `NETC_REQUIRE_TORCH=1, but ${python} cannot import torch and safetensors`).toBe(true);
    expect(torchChecks.length).toBe(exportCases.length);
    for (const t of torchChecks) {
      const trained = JSON.parse(readFileSync(join(t.dir, 'trained.json'), 'utf8')) as { member: number; output: { shape: number[]; data: number[] } };
      const r = await netc('import', join(t.dir, 'trained.safetensors'), '--into', t.run, '--member', String(trained.member), '--shared');
      expect(r.code, r.err).toBe(0);
      const reference = JSON.parse(readFileSync(t.reference, 'utf8')) as { input: { shape: number[]; data: number[] } };
      const x = tf.tensor(reference.input.data, reference.input.shape);
      const nhwc = x.rank === 4 ? tf.transpose(x, [0, 2, 3, 1]) : x;
      let got: tf.Tensor;
      if (t.opPath) got = opPathOutputs(t.run, nhwc)[trained.member];
      else {
        const model = await loadModel(await extract(t.run, join(tmp(), 'imported'), '--member', String(trained.member)));
        got = toExported(model.predict(nhwc) as tf.Tensor);
        model.dispose();
      }
      expect(got.shape).toEqual(trained.output.shape);
      expect(maxDiff(got.dataSync(), trained.output.data), t.name).toBeLessThanOrEqual(TOLERANCE);
    }
  });
});

describe('ONNX files', () => {
  it('are opset 17 models with one NCHW input and one output, encoded from the vendored schema', async () => {
    const { run } = await trainTiny(exportCases[0].source, 60, 3);
    const dir = await extract(run, join(tmp(), 'one'), '--member', '1', '--format', 'onnx');
    const model = onnxType('ModelProto').toObject(onnxType('ModelProto').decode(readFileSync(join(dir, 'model.onnx'))), { longs: Number }) as {
      opset_import: { version: number }[];
      graph: { input: { name: string; type: { tensor_type: { shape: { dim: { dim_value?: number; dim_param?: string }[] } } } }[]; output: { name: string }[]; node: { op_type: string }[] };
    };
    expect(model.opset_import[0].version).toBe(ONNX_OPSET);
    expect(ONNX_OPSET).toBeGreaterThanOrEqual(13);
    expect(model.graph.input.map((i) => i.name)).toEqual(['input']);
    expect(model.graph.input[0].type.tensor_type.shape.dim).toEqual([{ dim_param: 'batch' }, { dim_value: 2 }, { dim_value: 6 }, { dim_value: 5 }]);
    expect(model.graph.output.map((o) => o.name)).toEqual(['output']);
    // inference semantics: batchnorm on its running statistics (one output), no Dropout op
    expect(model.graph.node.map((n) => n.op_type)).toContain('BatchNormalization');
  });

  it('the generated schema module is the vendored onnx.proto3 (npm run onnx-schema regenerates it)', () => {
    const proto = readFileSync(new URL('../vendor/onnx/onnx.proto3', import.meta.url), 'utf8');
    expect(JSON.parse(JSON.stringify(schemaDescriptor(proto)))).toEqual(onnxSchema);
  });

  it('--ensemble without --format onnx is a usage error', async () => {
    const r = await netc('extract', 'nowhere', '--ensemble', '--out', join(tmp(), 'x'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('--format onnx');
  });
});
