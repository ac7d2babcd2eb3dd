// netc's public API: what a compiled module (netc compile) and programs that embed netc import.
export { compile, passes, passNames, type CompileOptions, type CompileState } from './pipeline.js';
export { Population, type PopulationSpec, type ForwardPass, type Value } from './runtime/population.js';
export { initMember } from './runtime/init.js';
export { hyperTable, type HyperTable } from './runtime/hyper.js';
export { train, batchesPerEpoch, type TrainSetup, type TrainResult, type MemberMetrics, type EpochReport } from './runtime/trainer.js';
export { selectBackend, type BackendName } from './runtime/backend.js';
export { loadDataset } from './data/load.js';
export { splitValidation } from './data/split.js';
export type { EnsembleIR, WideOp, WideParam, ParamLayout } from './ensemble/ensemble-ir.js';
export type { ModelIR } from './ir/model-ir.js';
export type { Program } from './check/program.js';
export type { TrainConfig } from './check/program.js';
export type { TF } from './runtime/tf.js';
export type { Lowering } from './layers/forward.js';
export type { ModuleEnsemble, ModuleVary } from './emit/module-api.js';
export { emitModule, emitInfo, type EmitInfo } from './emit/emit.js';
export { formatModule } from './emit/format.js';
