// The members' state on the host, in canonical form (Population.exportState's: [n, ...shape] member
// after member, in the order of `ids`), for a population trained in shards: waves in this process, or
// jobs for workers. The coordinator slices shards out of it for jobs and puts their results back;
// schedules compact it (halving) and copy members within it (PBT).
import type { HyperTable } from '../runtime/hyper.js';
import { Population, type PopulationSpec } from '../runtime/population.js';
import { nonFiniteRows } from '../kernels/fused.js';
import type { CheckpointManifest, StateSource } from './checkpoint.js';
import type { ShardState } from '../scale/shard-job.js';

export class HostStore {
  ids: number[];
  state = new Map<string, Float32Array>();
  accBeta1 = new Map<number, number>();
  accBeta2 = new Map<number, number>();
  step = 0;
  private sizes = new Map<string, number>();

  private constructor(
    private spec: (ids: number[]) => PopulationSpec,
    ids: number[],
  ) {
    this.ids = ids;
  }

  static async create(spec: (ids: number[]) => PopulationSpec, ids: number[], resumed?: { manifest: CheckpointManifest; tensors: Map<string, Float32Array> }): Promise<HostStore> {
    const store = new HostStore(spec, ids);
    // the shapes of the canonical state, from a population of one
    const probe = new Population(spec(ids.slice(0, 1)));
    for (const [name, values] of await probe.exportState()) store.sizes.set(name, values.length);
    probe.dispose();
    if (resumed) {
      for (const [name] of store.sizes) store.state.set(name, resumed.tensors.get(name)!.slice());
      ids.forEach((id, m) => {
        store.accBeta1.set(id, resumed.manifest.acc_beta1[m]);
        store.accBeta2.set(id, resumed.manifest.acc_beta2[m]);
      });
      store.step = resumed.manifest.position.step;
      return store;
    }
    for (const [name, size] of store.sizes) store.state.set(name, new Float32Array(size * ids.length));
    // the initial state, made sixteen members at a time so that the device never holds them all
    for (let i = 0; i < ids.length; i += 16) {
      const pop = new Population(spec(ids.slice(i, i + 16)));
      store.put({ memberIds: pop.memberIds, state: await pop.exportState(), accBeta1: pop.state.accBeta1, accBeta2: pop.state.accBeta2 });
      pop.dispose();
    }
    return store;
  }

  /** These members' state (a copy), in the order of `ids`. */
  slice(ids: number[]): ShardState {
    const at = this.positions(ids);
    const state = new Map<string, Float32Array>();
    for (const [name, all] of this.state) {
      const size = this.sizes.get(name)!;
      const out = new Float32Array(size * ids.length);
      at.forEach((p, m) => out.set(all.subarray(p * size, (p + 1) * size), m * size));
      state.set(name, out);
    }
    return { memberIds: ids, state, accBeta1: ids.map((id) => this.accBeta1.get(id) ?? 1), accBeta2: ids.map((id) => this.accBeta2.get(id) ?? 1) };
  }

  /** Writes members' state back. */
  put(s: ShardState): void {
    const at = this.positions(s.memberIds);
    for (const [name, values] of s.state) {
      const size = this.sizes.get(name)!;
      at.forEach((p, m) => this.state.get(name)!.set(values.subarray(m * size, (m + 1) * size), p * size));
    }
    s.memberIds.forEach((id, m) => {
      this.accBeta1.set(id, s.accBeta1[m]);
      this.accBeta2.set(id, s.accBeta2[m]);
    });
  }

  /** The positions of the members with a NaN or infinite parameter (optimizer slots are not looked at). */
  nonFiniteMembers(): number[] {
    const out = new Set<number>();
    for (const [name, all] of this.state) if (!name.includes(':')) for (const m of nonFiniteRows(all, this.sizes.get(name)!)) out.add(m);
    return [...out].sort((a, b) => a - b);
  }

  private positions(ids: number[]): number[] {
    const at = new Map(this.ids.map((id, p) => [id, p]));
    return ids.map((id) => at.get(id)!);
  }

  /** A population of these members, with their state. */
  load(ids: number[]): Population {
    const pop = new Population(this.spec(ids));
    const s = this.slice(ids);
    pop.importState(s.state);
    pop.state.accBeta1 = s.accBeta1;
    pop.state.accBeta2 = s.accBeta2;
    pop.stepsTaken = this.step;
    return pop;
  }

  /** Keeps the members at these positions. */
  keep(positions: number[]): void {
    this.copy(positions, positions.map((p) => this.ids[p]));
  }

  /** Member i becomes a copy of the member at positions[i] (named ids[i]). */
  copy(positions: number[], ids: number[] = this.ids): void {
    for (const [name, all] of this.state) {
      const size = this.sizes.get(name)!;
      const out = new Float32Array(size * positions.length);
      positions.forEach((p, m) => out.set(all.subarray(p * size, (p + 1) * size), m * size));
      this.state.set(name, out);
    }
    const b1 = positions.map((p) => this.accBeta1.get(this.ids[p])!);
    const b2 = positions.map((p) => this.accBeta2.get(this.ids[p])!);
    this.ids = ids;
    ids.forEach((id, m) => {
      this.accBeta1.set(id, b1[m]);
      this.accBeta2.set(id, b2[m]);
    });
  }

  source(hyper: HyperTable): StateSource {
    const spec = this.spec(this.ids);
    return {
      model: spec.ensemble.model.name,
      lowering: spec.ensemble.lowering,
      optimizer: spec.optimizer,
      memberIds: this.ids,
      state: this.state,
      accBeta1: this.ids.map((id) => this.accBeta1.get(id)!),
      accBeta2: this.ids.map((id) => this.accBeta2.get(id)!),
      shapes: new Map(spec.ensemble.params.map((p) => [p.name, p.shape])),
      hyper: (k, id) => hyper.value(k, id),
    };
  }

  /** All members in one population (for callers that want the trained result resident). */
  materialize(): Population {
    return this.load(this.ids);
  }
}

