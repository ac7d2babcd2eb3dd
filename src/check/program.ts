// The checker's output: a fully resolved, valid description of one .net file. Later passes trust it.
import type { Span } from '../diagnostics/diagnostic.js';
import type { LayerKind } from '../layers/layer-kind.js';
import type { DataShape } from '../data/sources.js';
import type { MemberSplit } from '../vocabulary/splits.js';
import type { BoundArgs, BoundValue, CallConfig, Shape } from '../core/arg-spec.js';

export type Values = BoundArgs['values'];

export interface CheckedLayer {
  index: number;
  kind: LayerKind;
  label?: string;
  /** `shared`: one set of parameters for every member, without a member axis */
  shared: boolean;
  args: Values;
  /** indices of the layers read; -1 is the model input */
  inputs: number[];
  shape: Shape;
  span: Span;
}

export interface CheckedModel {
  name: string;
  input: Shape;
  layers: CheckedLayer[];
}

export type Space =
  | { kind: 'list'; values: BoundValue[] }
  | { kind: 'choice'; values: BoundValue[] }
  | { kind: 'uniform'; low: number; high: number }
  | { kind: 'loguniform'; low: number; high: number };

export type VaryTarget = { kind: 'optimizer'; arg: string } | { kind: 'layer'; layer: number; arg: string } | { kind: 'lr_schedule'; arg: string };

export interface Vary {
  path: string;
  target: VaryTarget;
  space: Space;
  span: Span;
}

export interface EnsembleConfig {
  members: number;
  seed: number;
  vary: Vary[];
  /** `split: kfold(k)` or `split: bootstrap()`: each member trains and validates on examples of its own */
  split?: MemberSplit;
  /** where the split is written, for diagnostics about it */
  splitSpan?: Span;
  /** where `members` is written (absent: the default), for diagnostics about it */
  membersSpan?: Span;
}

export interface TrainConfig {
  data: CallConfig;
  /** undefined when the shape is only known once the data loads (gzip idx files) */
  dataShape?: DataShape;
  validation: number;
  /** the fraction held out at the very end, never trained or ranked on (netc eval's default data) */
  test: number;
  loss: CallConfig;
  optimizer: CallConfig;
  /** the learning-rate schedule (`lr_schedule: cosine(...)`); absent: a constant rate */
  lr_schedule?: CallConfig;
  batch: number;
  epochs?: number;
  steps?: number;
  metrics: string[];
  shuffle: boolean;
  /** `holdout: shuffled`: validation and test are drawn from the seed, not the data's last examples */
  holdout?: 'shuffled';
}

export interface ScheduleConfig {
  name: string;
  args: Values;
  span: Span;
}

export interface Program {
  path: string;
  model: CheckedModel;
  ensemble: EnsembleConfig;
  train?: TrainConfig;
  schedules: ScheduleConfig[];
}

export const defaultEnsemble: EnsembleConfig = { members: 1, seed: 0, vary: [] };

/** `netc train --seed`, `--epochs`, `--steps`: the ensemble's seed and the run's length. */
export interface Overrides {
  seed?: number;
  epochs?: number;
  steps?: number;
}
