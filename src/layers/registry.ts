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
import { attention } from './attention.js';

export const layerKinds: readonly LayerKind[] = [dense, conv2d, maxpool2d, avgpool2d, globalAvgPool, globalMaxPool, flatten, dropout, batchnorm, layernorm, attention, add, concat, ...activationLayers];

const byName = new Map(layerKinds.map((k) => [k.name, k]));

export function layerKind(name: string): LayerKind | undefined {
  return byName.get(name);
}

export const layerNames = layerKinds.map((k) => k.name);
