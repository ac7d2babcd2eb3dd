// One WGSL compute kernel's text: the buffers it binds (each bound on first use, in the order first named),
// its entry point over `invocations` invocations in workgroups of WORKGROUP, and its body.
import { populationBufferName, type PopulationBuffer } from '../core/step-buffers.js';

/** The invocations of one workgroup, and the most workgroups along one dimension of a dispatch. */
export const WORKGROUP = 64;
const MAX_GROUPS = 65535;

/**
 * A buffer a kernel binds: the batch (x, y), the step's own (acts, hyper, draws), an output (losses, a
 * metric), or the population's (a parameter, an optimizer slot of one). The runtime binds each by its kind.
 */
export type Binding = { kind: StepBuffer } | PopulationBuffer;

/** The buffers that are one per step, named by their kind alone. */
export type StepBuffer = 'x' | 'y' | 'acts' | 'hyper' | 'draws' | 'losses';

export const paramBuffer = (param: string): Binding => ({ kind: 'param', param });
export const slotBuffer = (param: string, slot: string): Binding => ({ kind: 'slot', param, slot });
export const metricBuffer = (metric: string): Binding => ({ kind: 'metric', metric });

/** A binding as `netc ir --after wgsl` prints it and its WGSL name is made from: `x`, `param:NAME`, `slot:NAME:SLOT`, `metric:NAME`. */
export function bindingName(b: Binding): string {
  return b.kind === 'param' || b.kind === 'slot' || b.kind === 'metric' ? populationBufferName(b) : b.kind;
}

/** One compute kernel: its WGSL, the buffers it binds (binding i is bindings[i]) and how many invocations it runs. */
export interface WgslKernel {
  name: string;
  code: string;
  bindings: Binding[];
  invocations: number;
  /** workgroups along x and y */
  groups: [number, number];
}

/** One kernel's text as it is written: `buf` binds a buffer on first use and names it. */
export interface KernelWriter<K> {
  buf(binding: Binding | StepBuffer): string;
  finish(body: string, helpers?: string): K;
}

/** A float32 constant as WGSL writes it (9 significant digits name one f32). */
export const lit = (v: number): string => {
  const s = Math.fround(v).toPrecision(9);
  return /[.e]/.test(s) ? s : `${s}.0`;
};

/** Builds one kernel's text, binding each buffer it names once, in the order first named. */
export class KernelText implements KernelWriter<WgslKernel> {
  readonly bindings: Binding[] = [];
  private readonly names: string[] = [];
  private readonly decls: string[] = [];
  constructor(
    readonly name: string,
    private readonly invocations: number,
  ) {}

  /** The WGSL name of a buffer, bound on first use. */
  buf(buffer: Binding | StepBuffer): string {
    const binding = typeof buffer === 'string' ? { kind: buffer } : buffer;
    const name = bindingName(binding);
    const ident = name.replace(/[^A-Za-z0-9]/g, '_');
    if (!this.names.includes(name)) {
      const k = binding.kind;
      const access = k === 'x' || k === 'y' || k === 'hyper' || k === 'draws' ? 'read' : 'read_write';
      this.decls.push(`@group(0) @binding(${this.bindings.length}) var<storage, ${access}> ${ident}: array<f32>;`);
      this.bindings.push(binding);
      this.names.push(name);
    }
    return ident;
  }

  finish(body: string, helpers = ''): WgslKernel {
    const groups = Math.max(1, Math.ceil(this.invocations / WORKGROUP));
    const gx = Math.min(groups, MAX_GROUPS);
    const gy = Math.ceil(groups / gx);
    const code = [
      `// netc: ${this.name}`,
      ...this.decls,
      helpers,
      `@compute @workgroup_size(${WORKGROUP})`,
      'fn main(@builtin(global_invocation_id) gid: vec3<u32>) {',
      `  let idx = gid.x + gid.y * ${gx * WORKGROUP}u;`,
      `  if (idx >= ${this.invocations}u) { return; }`,
      body,
      '}',
      '',
    ]
      .filter((line) => line !== '')
      .join('\n');
    return { name: this.name, code: code + '\n', bindings: this.bindings, invocations: this.invocations, groups: [gx, gy] };
  }
}
