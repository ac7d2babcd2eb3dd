// netc/kernels: what a compiled module's training core needs beyond TF.js, and nothing from Node, so the
// core runs in a browser too. Kernels TF.js lacks or that netc runs its own way (custom gradients, the
// grouped conv, the flat optimizer buffers, the wasm backend's missing and faulty kernels), the members'
// dropout draws, and the population's variables. Every function takes TF.js as an argument: the module
// and netc use the caller's one copy.
export { matMul, matMulOfData, concatFlat, splitFlat } from '../runtime/matmul.js';
export { conv2d, conv2dOfData, groupedConv2d } from '../runtime/conv.js';
export { binaryCrossentropy } from '../runtime/losses.js';
export { blockVector } from '../layers/widened.js';
export { advanceBetaPowers } from '../runtime/optimizers.js';
export { registerWasmKernels } from '../runtime/wasm-kernels.js';
export {
  applyUpdates,
  createPopulation,
  disposePopulation,
  memberDraws,
  memberValues,
  pickBackend,
  type ModuleParam,
  type ModulePopulation,
  type ModulePopulationSpec,
  type StepInputs,
} from './population.js';
export type { TF, Tensor, Variable } from '../runtime/tf.js';
// the types a compiled module's Node part names (types only: nothing is loaded)
export type { BackendName } from '../runtime/backend.js';
export type { EnsembleIR } from '../ensemble/ensemble-ir.js';
export type { ModelIR } from '../ir/model-ir.js';
export type { ModuleEnsemble } from '../emit/module-api.js';
export type { ScheduleConfig, TrainConfig } from '../check/program.js';
export type { TrainResult } from '../runtime/trainer.js';
