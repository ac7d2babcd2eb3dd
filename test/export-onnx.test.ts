// `netc extract --format onnx` and `--ensemble`: every exported graph runs in onnxruntime-web (WebAssembly,
// in Node) and equals the TF.js LayersModel that `netc extract` writes, within 1e-5, on random inputs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import * as ort from 'onnxruntime-web';
import { exportCases } from './export-models.js';
import { extract, maxDiff, randomInput, referenceModel, tmp, toExported, trainTiny } from './export-helpers.js';
import { onnxType, schemaDescriptor } from '../src/export/onnx-schema.js';
import { onnxSchema } from '../src/export/onnx-schema.generated.js';
import { ONNX_OPSET } from '../src/export/onnx.js';
import { voteClasses } from '../src/serve/inference.js';
import type { TF } from '../src/kernels/tf.js';

const TOLERANCE = 1e-5;
const BATCH = 5;

beforeAll(async () => {
  await tf.setBackend('cpu');
  ort.env.wasm.numThreads = 1;
});

async function runOnnx(path: string, x: tf.Tensor): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(readFileSync(path));
  const input = new ort.Tensor('float32', x.dataSync() as Float32Array, x.shape);
  const out = await session.run({ input });
  await session.release();
  return out;
}

describe.each(exportCases)('ONNX export: $name', (c) => {
  it('each model.onnx and the ensemble.onnx compute what the extracted TF.js models compute', async () => {
    const { run } = await trainTiny(c.source, c.features, c.classes);
    const x = randomInput(BATCH, c.input);
    const refs: tf.Tensor[] = [];
    for (let k = 0; k < c.members; k++) {
      const model = await referenceModel(run, k);
      const want = toExported(model.predict(x) as tf.Tensor);
      refs.push(want);
      model.dispose();
      const dir = await extract(run, join(tmp(), `onnx-${k}`), '--member', String(k), '--format', 'onnx');
      const got = await runOnnx(join(dir, 'model.onnx'), toExported(x));
      expect(got.output.dims).toEqual(want.shape);
      expect(maxDiff(got.output.data as Float32Array, want.dataSync()), `member ${k}`).toBeLessThanOrEqual(TOLERANCE);
    }
    // the members differ, so a mix-up of their weights or arguments would show
    expect(maxDiff(refs[0].dataSync(), refs[1].dataSync())).toBeGreaterThan(1e-4);
    const dir = await extract(run, join(tmp(), 'ensemble'), '--ensemble', '--format', 'onnx');
    const got = await runOnnx(join(dir, 'ensemble.onnx'), toExported(x));
    const members = tf.stack(refs);
    expect(got.members.dims).toEqual(members.shape);
    expect(maxDiff(got.members.data as Float32Array, members.dataSync())).toBeLessThanOrEqual(TOLERANCE);
    expect(maxDiff(got.mean.data as Float32Array, tf.mean(members, 0).dataSync())).toBeLessThanOrEqual(TOLERANCE);
    const vote = voteClasses(tf as unknown as TF, members as never) as unknown as tf.Tensor;
    expect(Array.from(got.vote.data as BigInt64Array, Number)).toEqual(Array.from(vote.dataSync()));
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
    const { netc } = await import('./helpers.js');
    const r = await netc('extract', 'nowhere', '--ensemble', '--out', join(tmp(), 'x'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('--format onnx');
  });
});
