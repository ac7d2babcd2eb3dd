// netc/kernels: what a compiled module's training core needs beyond TF.js, and nothing from Node, so the
// core runs in a browser too. Kernels TF.js lacks or that netc runs its own way (custom gradients, the
// grouped conv, the flat optimizer buffers, the wasm backend's missing and faulty kernels), the members'
// dropout draws, and the population's variables. Every function takes TF.js as an argument: the module
// and netc use the caller's one copy.
export { matMul, matMulOfData, concatFlat, splitFlat } from './kernels/matmul.js';
export { conv2d, conv2dOfData, conv2dOfRows, groupedConv2d } from './kernels/conv.js';
export { binaryCrossentropy } from './kernels/losses.js';
export { blockVector } from './kernels/block-vector.js';
export { gatherRows } from './kernels/gather.js';
export { advanceBetaPowers } from './kernels/optimizers.js';
export { registerWasmKernels } from './kernels/wasm-kernels.js';
export { fusedEngineOf, fusedStep, type ModuleStepSpec } from './runtime/module-fused-step.js';
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
} from './kernels/module-population.js';
export type { TF, Tensor, Variable } from './kernels/tf.js';
// the types a compiled module's Node part names (types only: nothing is loaded)
export type { BackendName } from './runtime/backend.js';
export type { EnsembleIR } from './ensemble/ensemble-ir.js';
export type { ModelIR } from './ir/model-ir.js';
export type { ModuleEnsemble } from './emit/module-api.js';
export type { ScheduleConfig, TrainConfig } from './check/program.js';
export type { TrainResult } from './train/trainer.js';
