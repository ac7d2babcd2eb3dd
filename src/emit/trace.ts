// A trace: runs netc's own rules (the layer kinds' forward rules, the losses, the optimizers) once on
// small real tensors with a recording TF.js, and writes down every op they call as a line of TypeScript.
// The emitted module's math is this record, so it cannot drift from what `netc train` runs: there is one
// implementation, and the compiled module replays it. Kernels (src/kernels/kernel.ts) stay one call each.
//
// Numbers are written as markers, ⟦n⟧, so that traces at several batch sizes can be told apart
// (src/emit/batch-size.ts turns the ones that follow the batch size into expressions of B); values that
// come from the population (a member's hyperparameters, Adam's bias corrections) are written as the
// expressions that read them, through `symbolic`.
import { recordingKernels, type KernelInfo, type KernelRecorder } from '../kernels/kernel.js';
import type { TF, Tensor, Variable } from '../kernels/tf.js';

/** Where a number or array appears: a tensor's values (tf.tensor's first argument) or anywhere else. */
export type Position = 'values' | 'argument';

/** Turns a value into the expression that reads it from the population, where it comes from there. */
export type Symbolic = (value: number | readonly number[], position: Position) => string | undefined;

// ops whose first argument is a tensor's values
const VALUE_OPS = new Set(['tensor', 'tensor1d', 'tensor2d', 'tensor3d', 'tensor4d', 'scalar']);
// functions of TF.js that read or manage state rather than compute: passed through, never written down
const PASS_THROUGH = new Set(['getBackend', 'backend', 'engine', 'memory', 'env', 'ENV', 'findBackend']);

export class Trace implements KernelRecorder {
  readonly lines: string[] = [];
  /** the recording TF.js: hand it to the code being traced */
  readonly tf: TF;
  /** the prefix of the names of new values (the op being traced) */
  prefix = 't';
  symbolic: Symbolic = () => undefined;
  /** writes an array of rendered items in a shorter form, where it has one (`trainable.map(g)`) */
  shortArray: (items: string[]) => string | undefined = () => undefined;
  private readonly names = new Map<object, string>();
  private counter = 0;
  private recording = false;
  private declared = new Set<string>();

  constructor(readonly real: TF) {
    this.tf = new Proxy(real, {
      get: (target, prop) => {
        if (prop === 'tidy') return (a: unknown, b: unknown) => (typeof a === 'function' ? a : (b as () => unknown))();
        if (prop === 'keep') return (t: unknown) => t;
        if (prop === 'dispose') return () => {};
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== 'function' || typeof prop !== 'string' || PASS_THROUGH.has(prop) || /^[A-Z]/.test(prop)) return value;
        return (...args: unknown[]) => this.op(prop, value as (...a: unknown[]) => unknown, args);
      },
    });
    this.names.set(this.tf, 'tf');
  }

  /** Runs `f` recording its ops and kernel calls. */
  run<T>(f: () => T): T {
    this.recording = true;
    try {
      return recordingKernels(this, f);
    } finally {
      this.recording = false;
    }
  }

  /** Names a value the traced code reads (a parameter, the input, the population): written as `expr`. */
  name(value: object, expr: string): void {
    this.names.set(value, expr);
  }

  nameOf(value: object): string | undefined {
    return this.names.get(value);
  }

  /** Names a variable and writes down its assign() calls (the variable itself is left as it was). */
  watchAssign(v: Variable, expr: string): void {
    this.name(v, expr);
    (v as { assign: (t: Tensor) => void }).assign = (t: Tensor) => void this.lines.push(`${expr}.assign(${this.render(t)});`);
  }

  /** Names an array the traced code pushes [name, tensor] pairs to, and writes the pushes down. */
  watchPush(list: unknown[], expr: string): void {
    this.name(list, expr);
    (list as { push: (...items: unknown[]) => number }).push = (...items: unknown[]) => {
      for (const item of items) this.lines.push(`${expr}.push(${this.render(item)});`);
      return Array.prototype.push.apply(list, items);
    };
  }

  kernel(name: string, fn: (...args: never[]) => unknown, args: unknown[], info: KernelInfo): unknown {
    const result = (fn as (...a: unknown[]) => unknown)(...args.map((a) => (a === this.tf ? this.real : a)));
    const positions = args.map((_, i): Position => (info.values?.includes(i) ? 'values' : 'argument'));
    this.write(`k.${name}`, positions, args, result, info.named);
    return result;
  }

  private op(name: string, fn: (...args: unknown[]) => unknown, args: unknown[]): unknown {
    const result = fn.apply(this.real, args);
    if (!this.recording || (!this.holdsTensor(result) && !args.some((a) => this.holdsTensor(a)))) return result;
    this.write(`tf.${name}`, VALUE_OPS.has(name) ? ['values'] : [], args, result);
    return result;
  }

  private write(callee: string, positions: Position[], args: unknown[], result: unknown, named?: KernelInfo['named']): void {
    while (args.length && args[args.length - 1] === undefined) args = args.slice(0, -1);
    const rendered = args.map((a, i) => this.render(a, positions[i] ?? 'argument'));
    if (named) rendered[named.arg] = this.declare(this.listName(named.name, rendered[named.arg]), rendered[named.arg]);
    const call = `${callee}(${rendered.join(', ')})`;
    if (this.isTensor(result)) this.lines.push(`const ${this.fresh(result)} = ${call};`);
    else if (Array.isArray(result) && result.length && result.every((t) => this.isTensor(t))) {
      this.lines.push(`const [${result.map((t) => this.fresh(t as Tensor)).join(', ')}] = ${call};`);
    } else if (result && typeof result === 'object' && Object.values(result).some((t) => this.isTensor(t))) {
      const entries = Object.entries(result).filter(([, t]) => this.isTensor(t));
      this.lines.push(`const { ${entries.map(([key, t]) => `${key}: ${this.fresh(t as Tensor)}`).join(', ')} } = ${call};`);
    } else this.lines.push(`${call};`);
  }

  private lists = new Map<string, string>();

  /** `name` for the first list so named, `name_2`... for other contents: one name per distinct list */
  private listName(name: string, list: string): string {
    const key = `${name}\u0000${list}`;
    if (!this.lists.has(key)) {
      const taken = [...this.lists.keys()].filter((k) => k.startsWith(`${name}\u0000`)).length;
      this.lists.set(key, taken ? `${name}_${taken + 1}` : name);
    }
    return this.lists.get(key)!;
  }

  private fresh(t: Tensor): string {
    const name = `${this.prefix}_${++this.counter}`;
    this.names.set(t, name);
    return name;
  }

  /** Starts a new value count (for each traced section, so that names do not depend on what came before). */
  resetNames(): void {
    this.counter = 0;
    this.declared.clear();
  }

  /** `name`, declared as `const name = expr;` where it is first read in the section. */
  declare(name: string, expr: string): string {
    if (!this.declared.has(name)) {
      this.declared.add(name);
      this.lines.push(`const ${name} = ${expr};`);
    }
    return name;
  }

  private isTensor(v: unknown): v is Tensor {
    return v instanceof this.real.Tensor;
  }

  private holdsTensor(v: unknown): boolean {
    if (this.isTensor(v)) return true;
    if (Array.isArray(v)) return v.some((x) => this.holdsTensor(x));
    return !!v && typeof v === 'object' && !ArrayBuffer.isView(v) && Object.values(v).some((x) => this.isTensor(x));
  }

  render(v: unknown, position: Position = 'argument'): string {
    if (v !== null && (typeof v === 'object' || typeof v === 'function')) {
      const named = this.names.get(v);
      if (named !== undefined) return named;
    }
    if (this.isTensor(v)) throw new Error(`internal error: the trace met a tensor [${v.shape.join(', ')}] it did not see made`);
    if (typeof v === 'number') return this.symbolic(v, position) ?? `⟦${v}⟧`;
    if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    if (typeof v === 'boolean' || v === undefined || v === null) return String(v);
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const items = Array.from(v as ArrayLike<unknown>);
      if (items.length && items.every((x) => typeof x === 'number')) {
        const sym = this.symbolic(items as number[], position);
        if (sym !== undefined) return sym;
        if (position === 'values' && items.length > 16) throw new Error(`internal error: the trace would write ${items.length} numbers as a literal`);
      }
      const parts = items.map((x) => this.render(x));
      const list = this.shortArray(parts) ?? `[${parts.join(', ')}]`;
      return Array.isArray(v) ? list : `new ${v.constructor.name}(${list})`;
    }
    if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return `{ ${Object.entries(v as object).map(([key, x]) => `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`}: ${this.render(x)}`).join(', ')} }`;
    }
    throw new Error(`internal error: the trace cannot write ${typeof v} ${String(v).slice(0, 40)}`);
  }
}
