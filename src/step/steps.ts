// The generated module's third function, steps(records, count, n, recordBytes, flags) -> done: up to
// `count` training steps in one call, each with its own table (the host writes one record a step: the
// table, the batch size, and whether the step ends an interval, where the divergence guard looks at the
// weights). It stops after the first step at which a member's loss is not finite, or at an interval's
// end where a member's parameters are not (nonfinite, step/scan.ts), and returns how many steps ran: the
// host goes on from there as if it had called step() one step at a time.
import type { Code } from '../wasm/module.js';

export interface StepsPlan {
  /** the function indices of step(table, n, batch) and nonfinite(table, n, out) */
  step: number;
  scan: number;
  /** the table's entries; the record holds the batch size after them, then the interval's-end flag */
  tableLength: number;
  /** the table entry of the losses [N] */
  losses: number;
  /** the threaded variant: steps(records, count, n, recordBytes, flags, first, end) trains and checks the members [first, end) only */
  ranged?: boolean;
}

/** The body of steps(records, count, n, recordBytes, flags). */
export function emitSteps(c: Code, plan: StepsPlan): void {
  const [records, count, n, recordBytes, flags] = [0, 1, 2, 3, 4].map((i) => c.param(i));
  const [first, end] = plan.ranged ? [() => c.get(c.param(5)), () => c.get(c.param(6))] : [() => c.i32(0), () => c.get(n)];
  const range = () => {
    if (plan.ranged) first(), end();
  };
  const j = c.local('i32');
  const rec = c.local('i32');
  const m = c.local('i32');
  const poison = c.local('f32');
  const stopUnlessFinite = (at: () => void) => {
    // poison = sum over m of 0 * value[m]: NaN where one is NaN or infinite
    c.f32(0).set(poison);
    c.for(m, first, end, () => {
      c.get(poison);
      at();
      c.get(m).i32(4).i32Mul().i32Add().loadF32().f32(0).f32Mul().f32Add().set(poison);
    });
    c.get(poison).get(poison).f32Ne().if(() => {
      c.get(j).i32(1).i32Add().ret();
    });
  };
  c.for(j, () => c.i32(0), () => c.get(count), () => {
    c.get(records).get(j).get(recordBytes).i32Mul().i32Add().set(rec);
    c.get(rec).get(n).get(rec).loadI32(plan.tableLength * 4);
    range();
    c.call(plan.step);
    stopUnlessFinite(() => c.get(rec).loadI32(plan.losses * 4));
    c.get(rec).loadI32((plan.tableLength + 1) * 4).if(() => {
      c.get(rec).get(n).get(flags);
      range();
      c.call(plan.scan);
      stopUnlessFinite(() => c.get(flags));
    });
  });
  c.get(count);
}


