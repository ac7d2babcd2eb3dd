// The generated module's second function, nonfinite(table, n, out): for each member, whether any of its own
// parameters holds a NaN or an infinity (out[m] = NaN, else 0), read where they lie by the step's table.
// The divergence guard asks at every interval's end; in a run whose epochs are one step, that is every step,
// and this scan in SIMD costs less than reading the parameters out to look at them.
import type { Code, Local } from '../wasm/module.js';

/** One member's copy of a parameter, as the step's table places it. */
export interface ScanPlace {
  /** the table entry of the parameter's fused tensor */
  entry: number;
  rows: number;
  width: number;
  /** bytes from member m's copy to member m+1's */
  memberBytes: number;
  /** columns: row r of member m at r * N * width floats; stacked: the member's rows one run */
  columns: boolean;
}

/** The body of nonfinite(table, n, out): sum(0 * value) per member, lane by lane, then across the lanes. */
export function emitScan(c: Code, places: ScanPlace[], ranged = false): void {
  const [table, n, out] = [c.param(0), c.param(1), c.param(2)];
  // the ranged variant (threads) scans the members [first, end) only
  const [first, end] = ranged ? [() => c.get(c.param(3)), () => c.get(c.param(4))] : [() => c.i32(0), () => c.get(n)];
  const m = c.local('i32');
  const w = c.local('i32');
  const r = c.local('i32');
  const lanes = c.local('v128');
  const tail = c.local('f32');
  const zero = c.local('v128');
  const off = c.local('i32');
  c.v128Const([0, 0, 0, 0]).set(zero);
  c.for(m, first, end, () => {
    c.get(zero).set(lanes);
    c.f32(0).set(tail);
    for (const p of places) {
      c.get(table).loadI32(p.entry * 4).get(m).i32(p.memberBytes).i32Mul().i32Add().set(w);
      const run = p.columns ? p.width : p.rows * p.width;
      c.for(r, () => c.i32(0), () => c.i32(p.columns ? p.rows : 1), () => {
        scanRun(c, w, run, lanes, tail, zero, off);
        if (p.columns) c.get(w).get(n).i32(p.width * 4).i32Mul().i32Add().set(w);
      });
    }
    // out[m] = the lanes' sum plus the tail's: 0, or NaN where a value was not finite
    c.get(out).get(m).i32(4).i32Mul().i32Add();
    c.get(tail);
    for (let lane = 0; lane < 4; lane++) c.get(lanes).f32x4ExtractLane(lane).f32Add();
    c.storeF32();
  });
}

/** lanes += 0 * the run's vectors, tail += 0 * its last floats (`run` is a constant). */
function scanRun(c: Code, w: Local, run: number, lanes: Local, tail: Local, zero: Local, off: Local): void {
  const vectors = Math.floor(run / 4);
  const add = (offset: number) => c.get(lanes).get(w).get(off).i32Add().loadV128(offset).get(zero).f32x4Mul().f32x4Add().set(lanes);
  if (vectors) c.for(off, () => c.i32(0), () => c.i32(vectors * 16), () => add(0), 16);
  for (let i = vectors * 4; i < run; i++) c.get(tail).get(w).loadF32(i * 4).f32(0).f32Mul().f32Add().set(tail);
}
