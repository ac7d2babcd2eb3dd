// The layer-kind registry. A layer kind must be listed here to exist.
import type { LayerKind } from './layer-kind.js';
import { dense } from './dense.js';
import { conv2d } from './conv2d.js';
import { maxpool2d, avgpool2d } from './pool2d.js';
import { flatten } from './flatten.js';
import { dropout } from './dropout.js';
import { batchnorm } from './batchnorm.js';
import { layernorm } from './layernorm.js';
import { add, concat } from './merge.js';
import { activationLayers } from './activation-layers.js';
import { globalAvgPool, globalMaxPool } from './global-pool.js';
import { embedding } from './embedding.js';
import { conv1d } from './conv1d.js';
import { maxpool1d, avgpool1d } from './pool1d.js';
import { lstm } from './lstm.js';
import { gru } from './gru.js';
import { attention } from './attention.js';

export const layerKinds: readonly LayerKind[] = [dense, conv2d, conv1d, maxpool2d, avgpool2d, maxpool1d, avgpool1d, globalAvgPool, globalMaxPool, embedding, flatten, dropout, batchnorm, layernorm, lstm, gru, attention, add, concat, ...activationLayers];

const byName = new Map(layerKinds.map((k) => [k.name, k]));

export function layerKind(name: string): LayerKind | undefined {
  return byName.get(name);
}

export const layerNames = layerKinds.map((k) => k.name);
