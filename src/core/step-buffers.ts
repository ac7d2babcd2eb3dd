// What of the population and its outputs a generated step reads and writes, as both targets' tables hold it:
// the wasm step's TableEntry (step/generate.ts) and the WGSL kernels' Binding (wgsl/kernel-text.ts).

/** A parameter, one of its optimizer slots, or a metric's row [N]. */
export type PopulationBuffer = { kind: 'param'; param: string } | { kind: 'slot'; param: string; slot: string } | { kind: 'metric'; metric: string };

/** Its name as `netc ir` prints it and each target keys it: `param:NAME`, `slot:NAME:SLOT`, `metric:NAME`. */
export function populationBufferName(b: PopulationBuffer): string {
  switch (b.kind) {
    case 'param':
      return `param:${b.param}`;
    case 'slot':
      return `slot:${b.param}:${b.slot}`;
    case 'metric':
      return `metric:${b.metric}`;
  }
}
