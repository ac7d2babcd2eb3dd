// A small WebAssembly binary emitter: enough of the format (types, an imported memory, functions with
// locals, exports) and of the instruction set (i32, f32, control flow and SIMD128) to write netc's
// generated kernels byte by byte from TypeScript. No text format, no validation of its own: the engine's
// WebAssembly.validate / compile checks every module (the tests compile each one they generate).

export type ValType = 'i32' | 'f32' | 'v128';

const valType: Record<ValType, number> = { i32: 0x7f, f32: 0x7d, v128: 0x7b };

/** Unsigned LEB128. */
export function uleb(n: number, out: number[] = []): number[] {
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
export function sleb(n: number, out: number[] = []): number[] {
  n |= 0;
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const utf8 = (s: string): number[] => [...new TextEncoder().encode(s)];
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => [...uleb(utf8(s).length), ...utf8(s)];
/** A section as parts to concatenate: its id and size, then its body, which is not copied (the code section runs to megabytes). */
const section = (id: number, body: ArrayLike<number>): ArrayLike<number>[] => [[id, ...uleb(body.length)], body];

const f32Bytes = (v: number): number[] => [...new Uint8Array(new Float32Array([v]).buffer)];

/** Where a local op's index (uleb) lies: `length` bytes at `at` of `bytes`. */
interface LocalRef {
  bytes: number[];
  at: number;
  length: number;
  index: number;
}

/** `bytes` with the local indices that `refs` place in it written again as `renumber` says. */
function relocated(bytes: number[], refs: LocalRef[], renumber: (index: number) => number): number[] {
  const out: number[] = [];
  let from = 0;
  for (const r of refs) {
    if (r.bytes !== bytes) continue;
    for (let i = from; i < r.at; i++) out.push(bytes[i]);
    uleb(renumber(r.index), out);
    from = r.at + r.length;
  }
  for (let i = from; i < bytes.length; i++) out.push(bytes[i]);
  return out;
}

/** A local variable (or parameter) of a function, by index. */
export interface Local {
  readonly index: number;
  readonly type: ValType;
}

/** One function's body, written instruction by instruction (a stack machine, as the format is). */
export class Code {
  /** the instructions so far (the prologue's while one is being written) */
  private bytes: number[] = [];
  /** what runs first: the hoisted constants' locals set */
  private prologue: number[] = [];
  private readonly hoistedLocals = new Map<string, Local>();
  /** the keys hoisted while the current outlined() body is written: theirs are the child's locals, forgotten after it */
  private hoistedHere: string[] = [];
  /** the locals this body made (an outlined body's own, after the enclosing function's) */
  private locals: ValType[] = [];
  private readonly params: Local[];
  /** the index of `locals[0]`: the parameters' count, or in an outlined body every local of the function around it */
  private localBase: number;
  /** the type of a local below localBase (the enclosing function's, read by an outlined body) */
  private outer: (index: number) => ValType;
  /** where each local op's index lies, in which of the byte arrays */
  private refs: LocalRef[] = [];

  constructor(
    params: ValType[],
    private readonly module?: ModuleBuilder,
  ) {
    this.params = params.map((type, index) => ({ index, type }));
    this.localBase = params.length;
    this.outer = (index) => params[index];
  }

  /**
   * The code `body` writes, as a function of its own that this one calls. The body reads this function's
   * locals by their Local handles as it would inline; the function it becomes takes as parameters only
   * those it reads or writes (each local op records where its index lies, and the body's indices are
   * renumbered once it is written), so a call passes a few values, not every local of a large step. The
   * locals it makes are its own, and what it sets in this function's locals does not come back. V8
   * compiles a function of more than a few thousand values with a register allocator of lower quality (the
   * mid-tier one): a generated step split into a function per layer keeps each under that size, and its
   * hot loops' sums in registers. Its cost is the body's own size: the enclosing function's locals are
   * not copied (a step of 6,000 layers outlines 18,000 bodies in a function of 50,000 locals).
   */
  outlined(body: () => void): this {
    if (!this.module) {
      body();
      return this;
    }
    const shared = this.localBase + this.locals.length;
    const typeOf = this.typeOf.bind(this, this.outer, this.localBase, this.locals);
    const saved = { bytes: this.bytes, prologue: this.prologue, locals: this.locals, refs: this.refs, localBase: this.localBase, outer: this.outer, hoistedHere: this.hoistedHere };
    this.bytes = [];
    this.prologue = [];
    this.locals = [];
    this.refs = [];
    this.hoistedHere = [];
    this.localBase = shared;
    this.outer = typeOf;
    body();
    // the parameters: the enclosing function's locals the body used, in order; its own locals after them
    const used = [...new Set(this.refs.filter((r) => r.index < shared).map((r) => r.index))].sort((a, b) => a - b);
    const position = new Map(used.map((index, i) => [index, i]));
    const renumber = (index: number) => position.get(index) ?? used.length + index - shared;
    const types = used.map(typeOf);
    const child = new Code(types);
    child.bytes = relocated(this.bytes, this.refs, renumber);
    child.prologue = relocated(this.prologue, this.refs, renumber);
    child.locals = this.locals;
    for (const key of this.hoistedHere) this.hoistedLocals.delete(key);
    Object.assign(this, saved);
    const index = this.module.add(types, [], child);
    for (const i of used) this.get({ index: i, type: types[position.get(i)!] });
    return this.call(index);
  }

  /** The type of local `index` of a body whose own locals start at `base`. */
  private typeOf(outer: (index: number) => ValType, base: number, locals: ValType[], index: number): ValType {
    return index < base ? outer(index) : locals[index - base];
  }

  /** The function's i-th parameter. */
  param(i: number): Local {
    return this.params[i];
  }

  /** A new local of this type. */
  local(type: ValType): Local {
    this.locals.push(type);
    return { index: this.localBase + this.locals.length - 1, type };
  }

  /**
   * A local holding a value computed once, at the function's start, by `init` (which pushes it): the same
   * local for the same key. SIMD constants are hoisted so: loops then read a register, not an immediate
   * rebuilt at every use.
   */
  hoisted(key: string, type: ValType, init: () => void): Local {
    let l = this.hoistedLocals.get(key);
    if (!l) {
      l = this.local(type);
      const body = this.bytes;
      this.bytes = this.prologue;
      init();
      this.set(l);
      this.bytes = body;
      this.hoistedLocals.set(key, l);
      this.hoistedHere.push(key);
    }
    return l;
  }

  private op(...bytes: number[]): this {
    this.bytes.push(...bytes);
    return this;
  }

  private simd(code: number, ...rest: number[]): this {
    return this.op(0xfd, ...uleb(code), ...rest);
  }

  // ---- variables and constants
  get(l: Local): this {
    return this.localOp(0x20, l);
  }
  set(l: Local): this {
    return this.localOp(0x21, l);
  }
  tee(l: Local): this {
    return this.localOp(0x22, l);
  }
  /** local.get/set/tee, with where its index lies recorded (outlined() renumbers them) */
  private localOp(opcode: number, l: Local): this {
    this.bytes.push(opcode);
    const at = this.bytes.length;
    uleb(l.index, this.bytes);
    this.refs.push({ bytes: this.bytes, at, length: this.bytes.length - at, index: l.index });
    return this;
  }
  i32(v: number): this {
    return this.op(0x41, ...sleb(v));
  }
  f32(v: number): this {
    return this.op(0x43, ...f32Bytes(v));
  }
  drop(): this {
    return this.op(0x1a);
  }
  /** [a, b, cond] -> cond ? a : b (scalars) */
  select(): this {
    return this.op(0x1b);
  }

  // ---- control
  /** block ... end; `br(0)` inside leaves it */
  block(body: () => void): this {
    this.op(0x02, 0x40);
    body();
    return this.op(0x0b);
  }
  /** loop ... end; `br(0)` inside goes back to its start */
  loop(body: () => void): this {
    this.op(0x03, 0x40);
    body();
    return this.op(0x0b);
  }
  /** [cond] if ... (else ...) end */
  if(then: () => void, otherwise?: () => void): this {
    this.op(0x04, 0x40);
    then();
    if (otherwise) {
      this.op(0x05);
      otherwise();
    }
    return this.op(0x0b);
  }
  br(depth: number): this {
    return this.op(0x0c, ...uleb(depth));
  }
  brIf(depth: number): this {
    return this.op(0x0d, ...uleb(depth));
  }
  /** return from the function (with its results on the stack) */
  ret(): this {
    return this.op(0x0f);
  }
  call(index: number): this {
    return this.op(0x10, ...uleb(index));
  }

  /**
   * for (i = from; i < to; i += step) body(): `from` and `to` push an i32 each (evaluated once and on
   * every test respectively); the body may not branch out of the loop.
   */
  for(i: Local, from: () => void, to: () => void, body: () => void, step = 1): this {
    from();
    this.set(i);
    return this.block(() =>
      this.loop(() => {
        this.get(i);
        to();
        this.op(0x4e); // i32.ge_s
        this.brIf(1);
        body();
        this.get(i).i32(step).op(0x6a).set(i);
        this.br(0);
      }),
    );
  }

  // ---- memory: [address] load, [address, value] store; offsets in bytes
  loadI32(offset = 0): this {
    return this.op(0x28, 2, ...uleb(offset));
  }
  loadF32(offset = 0): this {
    return this.op(0x2a, 2, ...uleb(offset));
  }
  storeI32(offset = 0): this {
    return this.op(0x36, 2, ...uleb(offset));
  }
  storeF32(offset = 0): this {
    return this.op(0x38, 2, ...uleb(offset));
  }
  loadV128(offset = 0): this {
    return this.simd(0x00, 2, ...uleb(offset));
  }
  storeV128(offset = 0): this {
    return this.simd(0x0b, 2, ...uleb(offset));
  }
  /** [address] -> the f32 there in every lane (one instruction: a load and a splat) */
  load32Splat(offset = 0): this {
    return this.simd(0x09, 2, ...uleb(offset));
  }
  /** [address] -> lane 0 the f32 there, the others 0; and lanes 0-1 the two f32 there */
  load32Zero(offset = 0): this {
    return this.simd(0x5c, 2, ...uleb(offset));
  }
  load64Zero(offset = 0): this {
    return this.simd(0x5d, 2, ...uleb(offset));
  }
  /** [address, vector] -> the vector with lane `lane` (of 32 bits) loaded from the address */
  load32Lane(offset: number, lane: number): this {
    return this.simd(0x56, 2, ...uleb(offset), lane);
  }
  /** [address, vector] -> stores lane `lane` of 32 bits (of 64: two floats) */
  store32Lane(offset: number, lane: number): this {
    return this.simd(0x5a, 2, ...uleb(offset), lane);
  }
  store64Lane(offset: number, lane: number): this {
    return this.simd(0x5b, 2, ...uleb(offset), lane);
  }

  // ---- i32
  i32Add = () => this.op(0x6a);
  i32Sub = () => this.op(0x6b);
  i32Mul = () => this.op(0x6c);
  i32And = () => this.op(0x71);
  i32Or = () => this.op(0x72);
  i32Shl = () => this.op(0x74);
  i32ShrS = () => this.op(0x75);
  i32Eqz = () => this.op(0x45);
  i32Eq = () => this.op(0x46);
  i32Ne = () => this.op(0x47);
  i32LtS = () => this.op(0x48);
  i32GtS = () => this.op(0x4a);
  i32GeS = () => this.op(0x4e);
  /** saturating (NaN -> 0, out of range -> the nearest end): never traps */
  i32TruncSatF32S = () => this.op(0xfc, 0x00);
  i32ReinterpretF32 = () => this.op(0xbc);

  // ---- f32
  f32Eq = () => this.op(0x5b);
  f32Ne = () => this.op(0x5c);
  f32Lt = () => this.op(0x5d);
  f32Gt = () => this.op(0x5e);
  f32Le = () => this.op(0x5f);
  f32Ge = () => this.op(0x60);
  f32Abs = () => this.op(0x8b);
  f32Neg = () => this.op(0x8c);
  f32Floor = () => this.op(0x8e);
  f32Nearest = () => this.op(0x90);
  f32Sqrt = () => this.op(0x91);
  f32Add = () => this.op(0x92);
  f32Sub = () => this.op(0x93);
  f32Mul = () => this.op(0x94);
  f32Div = () => this.op(0x95);
  f32Min = () => this.op(0x96);
  f32Max = () => this.op(0x97);
  f32Copysign = () => this.op(0x98);
  f32ConvertI32S = () => this.op(0xb2);
  f32DemoteF64 = () => this.op(0xb6);

  // ---- f64, on the stack only: where a float32 result is to be rounded once from a wider one
  f64PromoteF32 = () => this.op(0xbb);
  f64Sqrt = () => this.op(0x9f);
  f64Mul = () => this.op(0xa2);
  f32ReinterpretI32 = () => this.op(0xbe);

  // ---- v128 (SIMD128)
  v128Const(lanes: [number, number, number, number]): this {
    return this.simd(0x0c, ...lanes.flatMap(f32Bytes));
  }
  f32x4Splat = () => this.simd(0x13);
  i32x4Splat = () => this.simd(0x11);
  f32x4ExtractLane = (lane: number) => this.simd(0x1f, lane);
  /** [a, b] -> the four floats of a ++ b at `lanes` (0-3: a's, 4-7: b's), as i8x16.shuffle of their bytes */
  f32x4Shuffle = (lanes: [number, number, number, number]) => this.simd(0x0d, ...lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]));
  f32x4Eq = () => this.simd(0x41);
  f32x4Ne = () => this.simd(0x42);
  f32x4Lt = () => this.simd(0x43);
  f32x4Gt = () => this.simd(0x44);
  f32x4Le = () => this.simd(0x45);
  f32x4Ge = () => this.simd(0x46);
  i32x4Eq = () => this.simd(0x37);
  i32x4GtS = () => this.simd(0x3b);
  v128Not = () => this.simd(0x4d);
  v128And = () => this.simd(0x4e);
  v128AndNot = () => this.simd(0x4f);
  v128Or = () => this.simd(0x50);
  v128Xor = () => this.simd(0x51);
  /** [a, b, mask] -> bits of a where mask is 1, of b where 0 */
  v128Bitselect = () => this.simd(0x52);
  v128AnyTrue = () => this.simd(0x53);
  f32x4Floor = () => this.simd(0x68);
  f32x4Nearest = () => this.simd(0x6a);
  i32x4Shl = () => this.simd(0xab);
  i32x4ShrS = () => this.simd(0xac);
  i32x4Add = () => this.simd(0xae);
  i32x4Sub = () => this.simd(0xb1);
  i32x4MinS = () => this.simd(0xb6);
  i32x4MaxS = () => this.simd(0xb8);
  f32x4Abs = () => this.simd(0xe0);
  f32x4Neg = () => this.simd(0xe1);
  f32x4Sqrt = () => this.simd(0xe3);
  f32x4Add = () => this.simd(0xe4);
  f32x4Sub = () => this.simd(0xe5);
  f32x4Mul = () => this.simd(0xe6);
  f32x4Div = () => this.simd(0xe7);
  f32x4Min = () => this.simd(0xe8);
  f32x4Max = () => this.simd(0xe9);
  /** [a, b] -> b < a ? b : a (one instruction, unlike min's NaN and -0 rules) */
  f32x4Pmin = () => this.simd(0xea);
  /** [a, b] -> a < b ? b : a */
  f32x4Pmax = () => this.simd(0xeb);
  i32x4TruncSatF32x4S = () => this.simd(0xf8);
  f32x4ConvertI32x4S = () => this.simd(0xfa);

  /** The function body as the code section holds it: its size, locals, instructions, end. */
  encode(): Uint8Array {
    const locals: number[] = uleb(this.locals.length);
    for (const t of this.locals) locals.push(1, valType[t]);
    return concat([uleb(locals.length + this.prologue.length + this.bytes.length + 1), locals, this.prologue, this.bytes, [0x0b]]);
  }
}

/** The parts one after the other, in one array (a part may be megabytes long: no spreading). */
function concat(parts: ArrayLike<number>[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((total, p) => total + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

interface FunctionDef {
  params: ValType[];
  results: ValType[];
  code: Code;
  exportAs?: string;
}

/** A module that imports one memory (`env.memory`) and defines functions, some exported. */
export class ModuleBuilder {
  private readonly functions: FunctionDef[] = [];

  /** `shared`: the imported memory is a shared one (threads), of at most 65,536 pages (4 GiB) */
  constructor(private readonly sharedMemory = false) {}

  /** Adds a function; returns its index (for `call`). `body` writes its code. */
  func(params: ValType[], results: ValType[], body: (code: Code) => void, exportAs?: string): number {
    const code = new Code(params, this);
    body(code);
    return this.add(params, results, code, exportAs);
  }

  /** How many functions the module has. */
  get count(): number {
    return this.functions.length;
  }

  /** Adds a function whose code is written; returns its index. */
  add(params: ValType[], results: ValType[], code: Code, exportAs?: string): number {
    this.functions.push({ params, results, code, exportAs });
    return this.functions.length - 1;
  }

  /** The module's bytes. */
  bytes(): Uint8Array<ArrayBuffer> {
    const signature = (f: FunctionDef) => [0x60, ...vec(f.params.map((t) => [valType[t]])), ...vec(f.results.map((t) => [valType[t]]))];
    // each signature once, in the order first used (a map: a step of thousands of layers has thousands of functions)
    const types: number[][] = [];
    const known = new Map<string, number>();
    const typeIndex = this.functions.map((f) => {
      const s = signature(f);
      const key = s.join();
      let found = known.get(key);
      if (found === undefined) {
        found = types.push(s) - 1;
        known.set(key, found);
      }
      return found;
    });
    // memory import: env.memory, limits min 0, no max (the importer's memory, whatever its size); a shared
    // memory must declare a maximum: the largest there is, so that any shared memory is accepted
    const limits = this.sharedMemory ? [0x03, 0x00, ...uleb(65536)] : [0x00, 0x00];
    const imports = vec([[...name('env'), ...name('memory'), 0x02, ...limits]]);
    const exported = this.functions.flatMap((f, i) => (f.exportAs ? [[...name(f.exportAs), 0x00, ...uleb(i)]] : []));
    const bodies = this.functions.map((f) => f.code.encode());
    const code = concat([uleb(bodies.length), ...bodies]);
    return concat([
      [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      ...section(1, vec(types)),
      ...section(2, imports),
      ...section(3, vec(typeIndex.map((t) => uleb(t)))),
      ...section(7, vec(exported)),
      ...section(10, code),
    ]);
  }
}
