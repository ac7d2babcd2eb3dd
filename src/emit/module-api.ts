// The types of the configuration a compiled module (netc compile) embeds as plain data. The runtime's
// hyperTable() and train() read it as it is: { ensemble, train } is all they need of a program.
import type { Space, VaryTarget } from '../check/program.js';
import type { Lowering } from '../layers/forward.js';
import type { MemberSplit } from '../vocabulary/splits.js';

/** One `vary` line of the ensemble block. */
export interface ModuleVary {
  /** the path as the .net file writes it (`lr`, `drop.rate`) */
  path: string;
  /** the runtime's hyperparameter key (`lr`, `dropout_1.rate`): Population.hyper(key) gives the members' values */
  key: string;
  target: VaryTarget;
  space: Space;
}

/** The ensemble as compiled: the member count (after --members), the lowering, the seed and what varies. */
export interface ModuleEnsemble {
  members: number;
  lowering: Lowering;
  seed: number;
  vary: ModuleVary[];
  /** members on data of their own (`split: kfold(k)`, `split: bootstrap()`) */
  split?: MemberSplit;
}
