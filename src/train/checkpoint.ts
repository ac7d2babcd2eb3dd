// The population's whole state as one manifest and one float32 buffer, independent of the lowering:
// parameters and optimizer slots as [N, ...shape] (a shared layer's as [...shape], once), each member's
// hyperparameters, Adam's running beta powers, the step, and the data position with the running sums of the current epoch. Together with
// the seed (which names every random stream) that is all a resumed run needs to continue bit for bit.
// The loop's own memory goes with it: each schedule's sums and state, and every member's last metrics.
import { createHash } from 'node:crypto';
import { Population } from '../runtime/population.js';
import { memberHyperparameters, type HyperTable } from '../runtime/hyper.js';
import { unfuse } from '../kernels/fused.js';
import { jsonChunks, LazyArray } from '../util/json-chunks.js';

export interface TrainPosition {
  /** optimizer steps taken */
  step: number;
  /** the run's total steps when the checkpoint was written: the horizon T of its learning-rate schedule */
  total?: number;
  /** the next batch: epoch (from 0) and batch index within it */
  epoch: number;
  batch: number;
  /** the current epoch's example-weighted metric sums so far, per member id, and how many examples they cover */
  sums?: SumsState;
  /** the schedules, in the file's order */
  schedules?: {
    /** schedules were due at `step` and have not acted yet (the run ended there): a resumed run acts first */
    pending: boolean;
    /** each schedule's training-metric sums since it last acted */
    sums: SumsState[];
    /** each schedule's own memory (early stopping's best values), as its state() gave it */
    state: unknown[];
  };
  /** each member's metrics at its last reported epoch, by id (stopped members' too); non-finite values as strings */
  metrics?: [number, Record<string, number | string>][];
  /** early stopping with restore_best: each member's best epoch so far (id, step, metrics); its parameters are the tensors `NAME@best-ID` */
  best?: [number, number, Record<string, number | string> | null][];
  /** members PBT copied into after their last metrics: (id, step, source, every hyperparameter and the rate those metrics were measured under) */
  copied?: [number, number, number, Record<string, number>, number][];
}

/** Example-weighted metric sums per member id, and how many examples each covers. */
export interface SumsState {
  count: number;
  values: Record<string, number[]>;
  ids?: number[];
  counts?: number[];
}

export interface CheckpointManifest {
  format: 'netc-checkpoint-1';
  model: string;
  /** identifies the model IR: a checkpoint only restores into the same architecture */
  fingerprint: string;
  members: number;
  member_ids: number[];
  lowering: string;
  seed: number;
  optimizer: string;
  position: TrainPosition;
  acc_beta1: number[];
  acc_beta2: number[];
  /** Adam's beta1^t and beta2^t of the shared layers' parameters (only a model with shared layers has it) */
  acc_beta_shared?: [number, number];
  /** per member (population order): every hyperparameter key -> value */
  hyperparameters: Record<string, number>[];
  /** members that stopped; their parameters are the tensors named `param@member` */
  retired?: { member: number; step: number; reason: string; hyperparameters: Record<string, number> }[];
  /** the buffer's file, next to the manifest */
  data: string;
  /** `shared`: a shared layer's parameter or slot, [...shape] without a member axis, one copy for every member */
  tensors: { name: string; shape: number[]; offset: number; length: number; shared?: true; sha256?: string }[];
}

/** A member that stopped (halving, early stopping, divergence): kept for extraction and the report. */
export interface RetiredMember {
  member: number;
  step: number;
  reason: string;
  /** its parameters when it stopped, by name */
  params: Map<string, Float32Array>;
  hyperparameters: Record<string, number>;
}

/**
 * The population's state in canonical form (what Population.exportState gives), from a resident
 * population or from the host store of a run trained in waves.
 */
export interface StateSource {
  model: string;
  lowering: string;
  optimizer: string;
  memberIds: number[];
  state: Map<string, Float32Array>;
  accBeta1: number[];
  accBeta2: number[];
  /** parameter shapes by name (slots share their parameter's shape) */
  shapes: Map<string, number[]>;
  /** the shared layers' parameters: their state (and their slots') has no member axis */
  shared?: Set<string>;
  /** Adam's beta powers of the shared slots */
  sharedAccBeta?: [number, number];
  hyper(key: string, member: number): number;
}

/**
 * A tensor's values, or a read of them that a writer makes when it comes to the tensor (one at a time),
 * which hands the values to `piece` in order, in one piece or several; each piece is valid only during the
 * call (it may be a view of the backend's memory, or a scratch array the next piece reuses).
 */
export type TensorValues = Float32Array | ((piece: (values: Float32Array) => void) => Promise<void>);

/** The values, read where they are a read (its pieces copied into one array where there are several). */
export async function valuesOf(v: TensorValues): Promise<Float32Array> {
  if (typeof v !== 'function') return v;
  const pieces: Float32Array[] = [];
  await v((values) => pieces.push(values.slice()));
  if (pieces.length === 1) return pieces[0];
  const all = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  pieces.reduce((at, p) => (all.set(p, at), at + p.length), 0);
  return all;
}

/**
 * Each tensor of a population as a read made when the writer comes to it, so that at most a piece of one is
 * on the host at a time (100,000 forum members' parameters and Adam slots are 97 MB): Population.exportPieces.
 */
function lazyState(population: Population): Map<string, TensorValues> {
  return new Map(population.stateNames().map((name) => [name, (piece: (values: Float32Array) => void) => population.exportPieces(name, piece)]));
}

/** A StateSource whose tensors may be reads not made yet (a population's, for a checkpoint writer). */
export type CheckpointSource = Omit<StateSource, 'state'> & { state: Map<string, TensorValues> };

/** A population's state for a checkpoint, each tensor read as the writer comes to it (lazyState). */
export function populationSource(population: Population): CheckpointSource {
  return {
    model: population.ir.model.name,
    lowering: population.ir.lowering,
    optimizer: population.spec.optimizer,
    memberIds: population.memberIds,
    state: lazyState(population),
    accBeta1: population.state.accBeta1,
    accBeta2: population.state.accBeta2,
    shapes: new Map(population.ir.params.map((p) => [p.name, p.shape])),
    shared: population.sharedParams,
    sharedAccBeta: [population.state.sharedAccBeta1, population.state.sharedAccBeta2],
    hyper: (k, id) => population.spec.hyper(k, id),
  };
}

export interface CheckpointMeta {
  fingerprint: string;
  seed: number;
  hyperKeys: string[];
  /** the buffer's file name, population-STEP.bin */
  data: string;
  retired?: RetiredMember[];
  extra?: Map<string, Float32Array>;
}

/**
 * A manifest as its writer has it: each member's hyperparameters may be a row made when the writer comes
 * to it (manifestChunks), so that 100,000 members' rows are not all on the host at once.
 */
export type ManifestDraft = Omit<CheckpointManifest, 'hyperparameters'> & { hyperparameters: CheckpointManifest['hyperparameters'] | LazyArray<Record<string, number>> };

/** A checkpoint as one buffer: the manifest and its tensors' values one after another. */
export async function encodeCheckpoint(population: Population | StateSource, position: TrainPosition, meta: CheckpointMeta): Promise<{ manifest: CheckpointManifest; bytes: Uint8Array }> {
  const { manifest: draft, tensors } = await describeCheckpoint(population, position, meta);
  const manifest = { ...draft, hyperparameters: hyperRows(draft) };
  return { manifest, bytes: await joinTensors(manifest, tensors) };
}

/** A draft's hyperparameters, each member's row made. */
function hyperRows({ hyperparameters: h }: ManifestDraft): CheckpointManifest['hyperparameters'] {
  return h instanceof LazyArray ? Array.from({ length: h.length }, (_, m) => h.at(m)) : h;
}

/** population.json's text, JSON.stringify(manifest) and a newline byte for byte, piece by piece (jsonChunks). */
export function* manifestChunks(manifest: ManifestDraft): Generator<string> {
  yield* jsonChunks(manifest);
  yield '\n';
}

/** The tensors of a manifest as its one buffer, each at its offset. */
export async function joinTensors(manifest: Pick<CheckpointManifest, 'tensors'>, tensors: Map<string, TensorValues>): Promise<Uint8Array> {
  const all = new Float32Array(manifest.tensors.reduce((n, t) => n + t.length, 0));
  for (const t of manifest.tensors) all.set(await valuesOf(tensors.get(t.name)!), t.offset);
  return new Uint8Array(all.buffer);
}

/**
 * A checkpoint's manifest and its tensors by name, not yet in one buffer: the writer puts each at its
 * offset in the file, so that no copy of the whole population is made to write it.
 */
export async function describeCheckpoint(
  population: Population | StateSource,
  position: TrainPosition,
  meta: CheckpointMeta,
): Promise<{ manifest: ManifestDraft; tensors: Map<string, TensorValues> }> {
  const source: CheckpointSource = population instanceof Population ? populationSource(population) : population;
  const n = source.memberIds.length;
  const tensors: CheckpointManifest['tensors'] = [];
  const data = new Map<string, TensorValues>(source.state);
  for (const r of meta.retired ?? []) for (const [name, values] of r.params) data.set(`${name}@${r.member}`, values);
  // tensors of one member, `NAME@...` (restore_best's copies), at the parameter's own shape
  for (const [name, values] of meta.extra ?? []) data.set(name, values);
  let offset = 0;
  for (const [name, values] of data) {
    const param = name.split(/[:@]/)[0];
    const own = source.shapes.get(param)!;
    const shared = !name.includes('@') && !!source.shared?.has(param);
    const shape = name.includes('@') || shared ? own : [n, ...own];
    // a read not made yet has its length from its shape
    const length = typeof values === 'function' ? shape.reduce((a, b) => a * b, 1) : values.length;
    tensors.push({ name, shape, offset, length, ...(shared ? { shared: true as const } : {}) });
    offset += length;
  }
  const ids = source.memberIds;
  const manifest: ManifestDraft = {
    format: 'netc-checkpoint-1',
    model: source.model,
    fingerprint: meta.fingerprint,
    members: n,
    member_ids: source.memberIds,
    lowering: source.lowering,
    seed: meta.seed,
    optimizer: source.optimizer,
    position,
    acc_beta1: source.accBeta1,
    acc_beta2: source.accBeta2,
    ...(source.shared?.size ? { acc_beta_shared: source.sharedAccBeta ?? [1, 1] } : {}),
    hyperparameters: new LazyArray(n, (m) => memberHyperparameters({ keys: meta.hyperKeys, value: source.hyper }, ids[m])),
    retired: (meta.retired ?? []).map((r) => ({ member: r.member, step: r.step, reason: r.reason, hyperparameters: r.hyperparameters })),
    data: meta.data,
    tensors,
  };
  return { manifest, tensors: data };
}

/** The retired members of a checkpoint, with their parameters. */
export function retiredMembers(manifest: CheckpointManifest, tensors: Map<string, Float32Array>): RetiredMember[] {
  return (manifest.retired ?? []).map((r) => ({
    ...r,
    params: new Map(manifest.tensors.filter((t) => t.name.endsWith(`@${r.member}`)).map((t) => [t.name.split('@')[0], tensors.get(t.name)!])),
  }));
}

/** The tensors of a checkpoint's buffer, by name. */
export function decodeTensors(manifest: CheckpointManifest, bytes: Uint8Array): Map<string, Float32Array> {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const all = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  return new Map(manifest.tensors.map((t) => [t.name, all.subarray(t.offset, t.offset + t.length)]));
}

/** Puts a checkpoint back into a freshly built population of the same model and members. */
export function restore(population: Population, manifest: CheckpointManifest, tensors: Map<string, Float32Array>): void {
  population.importState(tensors);
  population.stepsTaken = manifest.position.step;
  population.state.accBeta1 = [...manifest.acc_beta1];
  population.state.accBeta2 = [...manifest.acc_beta2];
  [population.state.sharedAccBeta1, population.state.sharedAccBeta2] = manifest.acc_beta_shared ?? [1, 1];
}

/** Puts back each member's hyperparameters as the checkpoint holds them (PBT may have changed them). */
export function restoreHyperparameters(table: Pick<HyperTable, 'set'>, manifest: CheckpointManifest): void {
  const put = (id: number, values: Record<string, number>) => {
    for (const [key, value] of Object.entries(values)) table.set(key, id, value);
  };
  manifest.member_ids.forEach((id, m) => put(id, manifest.hyperparameters[m]));
  for (const r of manifest.retired ?? []) put(r.member, r.hyperparameters);
}

/** Member m's (population position) parameters from a checkpoint, by name: its own and the shared layers'. */
export function memberParams(manifest: CheckpointManifest, tensors: Map<string, Float32Array>, m: number): Map<string, Float32Array> {
  const params = manifest.tensors.filter((t) => !t.name.includes(':') && !t.name.includes('@'));
  return canonicalMember(params.map((t) => ({ name: t.name, shape: t.shared ? t.shape : t.shape.slice(1), shared: t.shared })), tensors, manifest.members, m);
}

/**
 * Member m's copy of each parameter in the canonical state (a checkpoint's, Population.exportState's), by
 * name: the `stacked` layout of its n members, or a shared layer's one copy, cut out by the layout rule.
 */
export function canonicalMember(params: readonly { name: string; shape: number[]; shared?: true }[], state: Map<string, Float32Array>, n: number, m: number): Map<string, Float32Array> {
  return new Map(params.map((p) => [p.name, unfuse(p.shared ? 'shared' : 'stacked', p.shape, n, state.get(p.name)!, m)]));
}

/** The SHA-256 of a tensor's bytes in a checkpoint's buffer, as population.json keeps it. */
export function tensorChecksum(bytes: Uint8Array, t: { offset: number; length: number }): string {
  return sha256(bytes.subarray(4 * t.offset, 4 * (t.offset + t.length)));
}

/** The SHA-256 of these bytes (a tensor's values, as the buffer holds them: little-endian float32). */
export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A tensor's values as the bytes a checkpoint's buffer holds, without a copy. */
export const tensorBytes = (values: Float32Array): Uint8Array => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);


/** The first tensor whose bytes do not match its checksum (a checkpoint written before checksums has none to check). */
export function damagedTensor(manifest: CheckpointManifest, bytes: Uint8Array): string | undefined {
  return manifest.tensors.find((t) => t.sha256 !== undefined && t.sha256 !== tensorChecksum(bytes, t))?.name;
}


/**
 * The first active member's parameter that holds a NaN or an infinity, or undefined: a checkpoint netc
 * writes never has one (the divergence guard stops such a member before the checkpoint is written), so
 * one is damage. Stopped members' copies (`NAME@ID`) may (a member stopped as diverged) and optimizer
 * slots may overflow to infinity while their weights stay finite: neither is looked at.
 */
export function nonFiniteParameter(manifest: CheckpointManifest, tensors: Map<string, Float32Array>): { tensor: string; member: number; shared: boolean } | undefined {
  for (const t of manifest.tensors) {
    const found = nonFiniteIn(manifest, t, tensors.get(t.name)!);
    if (found) return { tensor: t.name, member: found.member, shared: found.shared };
  }
  return undefined;
}

/**
 * The first NaN or infinity in `values`, a piece of tensor `t` starting at its value `from`, with the
 * member whose row holds it; undefined where there is none, or where `t` is a stopped member's copy or an
 * optimizer slot (which nonFiniteParameter does not look at).
 */
export function nonFiniteIn(
  manifest: Pick<CheckpointManifest, 'members' | 'member_ids'>,
  t: CheckpointManifest['tensors'][number],
  values: Float32Array,
  from = 0,
): { member: number; shared: boolean; value: number } | undefined {
  if (t.name.includes('@') || t.name.includes(':')) return undefined;
  let i = 0;
  while (i < values.length && Number.isFinite(values[i])) i++;
  if (i === values.length) return undefined;
  const row = Math.floor((from + i) / (t.shared ? t.length : t.length / Math.max(1, manifest.members)));
  return { member: manifest.member_ids[row], shared: !!t.shared, value: values[i] };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isNumbers = (v: unknown, n: number) => Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));
// a NaN hyperparameter is written as null
const isHyper = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === 'number' || x === null);

/**
 * What is wrong with a manifest read from population.json, or undefined when every field is well formed:
 * the types, the member ids (unique), the position, and the tensors (their shapes, lengths and offsets
 * within a buffer of `floats` values, without overlapping).
 */
export function manifestProblem(m: unknown, floats: number): string | undefined {
  if (!isObject(m)) return 'it is not a JSON object';
  for (const key of ['model', 'fingerprint', 'lowering', 'optimizer', 'data'] as const) if (typeof m[key] !== 'string') return `its '${key}' is not a string`;
  if (!/^population-\d+\.bin$/.test(m.data as string)) return `its 'data' (${JSON.stringify(m.data)}) is not a buffer file of the run (population-STEP.bin)`;
  if (!Number.isSafeInteger(m.seed)) return `its 'seed' (${JSON.stringify(m.seed)}) is not an integer`;
  if (!isCount(m.members)) return `its 'members' (${JSON.stringify(m.members)}) is not a count`;
  return membersProblem(m as unknown as CheckpointManifest) ?? positionProblem(m.position) ?? tensorsProblem(m as unknown as CheckpointManifest, floats);
}

function membersProblem(m: CheckpointManifest): string | undefined {
  const n = m.members;
  if (!Array.isArray(m.member_ids) || m.member_ids.length !== n || !m.member_ids.every(isCount)) return `its 'member_ids' are not ${n} member numbers`;
  const retired = m.retired ?? [];
  if (!Array.isArray(retired) || !retired.every((r) => isObject(r) && isCount(r.member) && isCount(r.step) && typeof r.reason === 'string' && isHyper(r.hyperparameters))) return "its 'retired' members are not well formed";
  const ids = [...m.member_ids, ...retired.map((r) => r.member)];
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) return `member ${twice} appears twice in its 'member_ids' and 'retired'`;
  if (!isNumbers(m.acc_beta1, n) || !isNumbers(m.acc_beta2, n)) return `its 'acc_beta1' and 'acc_beta2' are not ${n} numbers each`;
  if (m.acc_beta_shared !== undefined && !isNumbers(m.acc_beta_shared, 2)) return "its 'acc_beta_shared' is not two numbers";
  if (!Array.isArray(m.hyperparameters) || m.hyperparameters.length !== n || !m.hyperparameters.every(isHyper)) return `its 'hyperparameters' are not ${n} sets of numbers`;
  return undefined;
}

function positionProblem(p: unknown): string | undefined {
  if (!isObject(p)) return "its 'position' is not an object";
  for (const key of ['step', 'epoch', 'batch'] as const) if (!isCount(p[key])) return `its position's '${key}' (${JSON.stringify(p[key])}) is not a non-negative integer`;
  if (p.total !== undefined && !isCount(p.total)) return `its position's 'total' (${JSON.stringify(p.total)}) is not a non-negative integer`;
  return undefined;
}

function tensorsProblem(m: CheckpointManifest, floats: number): string | undefined {
  if (!Array.isArray(m.tensors)) return "its 'tensors' is not a list";
  const names = new Set<string>();
  const spans: [number, number, string][] = [];
  for (const t of m.tensors) {
    if (!isObject(t) || typeof t.name !== 'string' || names.has(t.name)) return `a tensor has no name, or a name given twice (${JSON.stringify(isObject(t) ? t.name : t)})`;
    names.add(t.name);
    if (!Array.isArray(t.shape) || !t.shape.every(isCount)) return `tensor ${t.name}'s shape is not a list of sizes`;
    if (!isCount(t.length) || t.length !== t.shape.reduce((a, b) => a * b, 1)) return `tensor ${t.name}'s length (${t.length}) is not that of its shape [${t.shape.join(', ')}]`;
    if (!t.name.includes('@') && !t.shared && t.shape[0] !== m.members) return `tensor ${t.name} has shape [${t.shape.join(', ')}], not one row for each of its ${m.members} members`;
    if (!isCount(t.offset) || t.offset + t.length > floats) return `tensor ${t.name}'s offset (${t.offset}) puts it outside the buffer of ${floats} values`;
    if (t.sha256 !== undefined && typeof t.sha256 !== 'string') return `tensor ${t.name}'s checksum is not a string`;
    spans.push([t.offset, t.offset + t.length, t.name]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const overlap = spans.findIndex((s, i) => i > 0 && s[0] < spans[i - 1][1]);
  return overlap > 0 ? `tensors ${spans[overlap - 1][2]} and ${spans[overlap][2]} overlap in the buffer` : undefined;
}
