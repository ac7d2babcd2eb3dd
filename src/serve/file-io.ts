// TF.js model files on disk without @tensorflow/tfjs-node: a save handler that writes model.json and
// weights.bin (atomically), a loader for them, and `registerFileScheme()`, which lets plain
// @tensorflow/tfjs resolve `tf.loadLayersModel('file://.../model.json')` in Node (tfjs-node registers
// the same scheme; plain TF.js has none, and Node's fetch cannot read file: URLs).
import { readFileSync } from 'node:fs';
import { makeDirs } from '../util/make-dirs.js';
import { writeAtomic } from '../util/write-atomic.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as tfjs from '@tensorflow/tfjs';
import type { TF } from '../kernels/tf.js';


/** Writes model.json (Keras-style topology, weights manifest) and weights.bin into `dir`. */
export function fileSaveHandler(tf: TF, dir: string, extra: Record<string, unknown> = {}): tfjs.io.IOHandler {
  return tf.io.withSaveHandler(async (artifacts) => {
    makeDirs(dir);
    const weights = artifacts.weightData instanceof ArrayBuffer ? new Uint8Array(artifacts.weightData) : new Uint8Array(tf.io.concatenateArrayBuffers(artifacts.weightData as ArrayBuffer[]));
    writeAtomic(join(dir, 'weights.bin'), weights);
    const model = {
      modelTopology: artifacts.modelTopology,
      format: artifacts.format ?? 'layers-model',
      generatedBy: artifacts.generatedBy,
      convertedBy: 'netc',
      weightsManifest: [{ paths: ['weights.bin'], weights: artifacts.weightSpecs }],
      ...extra,
    };
    writeAtomic(join(dir, 'model.json'), JSON.stringify(model));
    return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON', weightDataBytes: weights.byteLength } };
  });
}

/** Reads model.json and the weight files it names. */
export function fileLoadHandler(tf: TF, modelJson: string): tfjs.io.IOHandler {
  return {
    load: async () => {
      const model = JSON.parse(readFileSync(modelJson, 'utf8'));
      const buffers = (model.weightsManifest as { paths: string[] }[]).flatMap((g) => g.paths.map((p) => readFileSync(join(dirname(modelJson), p))));
      const weightData = tf.io.concatenateArrayBuffers(buffers.map((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)));
      return {
        modelTopology: model.modelTopology,
        format: model.format,
        generatedBy: model.generatedBy,
        convertedBy: model.convertedBy,
        weightSpecs: (model.weightsManifest as { weights: tfjs.io.WeightsManifestEntry[] }[]).flatMap((g) => g.weights),
        weightData,
      };
    },
  };
}

let registered = false;

/** Teaches plain TF.js in Node to load `file://` URLs (a no-op where tfjs-node already does). */
export function registerFileScheme(tf: TF): void {
  if (registered) return;
  registered = true;
  // a router answers null for URLs it does not handle
  const router = (url: string | string[]) => {
    const u = Array.isArray(url) ? url[0] : url;
    return typeof u === 'string' && u.startsWith('file://') ? fileLoadHandler(tf, fileURLToPath(u)) : null;
  };
  tf.io.registerLoadRouter(router as unknown as Parameters<TF['io']['registerLoadRouter']>[0]);
}
