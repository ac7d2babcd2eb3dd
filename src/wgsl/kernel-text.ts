// One WGSL compute kernel's text: the buffers it binds (each bound on first use, in the order first named),
// its entry point over `invocations` invocations in workgroups of WORKGROUP, and its body.

/** The invocations of one workgroup, and the most workgroups along one dimension of a dispatch. */
export const WORKGROUP = 64;
const MAX_GROUPS = 65535;

/** One compute kernel: its WGSL, the buffers it binds (binding i is bindings[i]) and how many invocations it runs. */
export interface WgslKernel {
  name: string;
  code: string;
  /** `x`, `y`, `acts`, `hyper`, `losses`, `metric:NAME`, `param:NAME`, `slot:NAME:SLOT` */
  bindings: string[];
  invocations: number;
  /** workgroups along x and y */
  groups: [number, number];
}

/** One kernel's text as it is written: `buf` binds a buffer on first use and names it. */
export interface KernelWriter<K> {
  buf(binding: string): string;
  finish(body: string, helpers?: string): K;
}

/** A float32 constant as WGSL writes it (9 significant digits name one f32). */
export const lit = (v: number): string => {
  const s = Math.fround(v).toPrecision(9);
  return /[.e]/.test(s) ? s : `${s}.0`;
};

/** Builds one kernel's text, binding each buffer it names once, in the order first named. */
export class KernelText implements KernelWriter<WgslKernel> {
  readonly bindings: string[] = [];
  private readonly decls: string[] = [];
  constructor(
    readonly name: string,
    private readonly invocations: number,
  ) {}

  /** The WGSL name of a buffer, bound on first use. */
  buf(binding: string): string {
    const ident = binding.replace(/[^A-Za-z0-9]/g, '_');
    if (!this.bindings.includes(binding)) {
      const access = binding === 'x' || binding === 'y' || binding === 'hyper' || binding === 'draws' ? 'read' : 'read_write';
      this.decls.push(`@group(0) @binding(${this.bindings.length}) var<storage, ${access}> ${ident}: array<f32>;`);
      this.bindings.push(binding);
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
