// A kernel is a function netc supplies to the fused step that TF.js does not have (a custom gradient, a
// grouped conv, a host-side helper). While `netc compile` traces the step (src/emit/trace.ts), a kernel
// is one opaque call: the trace writes `k.name(...)` and runs the kernel untraced; otherwise calling it
// is calling the function. Kernels live in src/kernels/ and import nothing from Node: the emitted
// module imports them as `netc/kernels`, in a browser as well.

/** What a trace does with a kernel call: records it and returns what the kernel computed. */
export interface KernelRecorder {
  kernel(name: string, fn: (...args: never[]) => unknown, args: unknown[], info: KernelInfo): unknown;
}

/** How a trace writes a kernel's arguments. */
export interface KernelInfo {
  /** the arguments that are a tensor's values (per-member hyperparameters), by position */
  values?: number[];
  /** an argument written once under this name and read by it (a list several calls share), by position */
  named?: { arg: number; name: string };
}

let recorder: KernelRecorder | undefined;

/** Runs `f` with kernel calls reported to `r` (a trace is synchronous, so one recorder at a time). */
export function recordingKernels<T>(r: KernelRecorder, f: () => T): T {
  const before = recorder;
  recorder = r;
  try {
    return f();
  } finally {
    recorder = before;
  }
}

/** `fn` as a kernel named `name` (the name the emitted module calls it by: `k.name`). */
export function kernel<A extends unknown[], R>(name: string, fn: (...args: A) => R, info: KernelInfo = {}): (...args: A) => R {
  const wrapped = (...args: A): R => {
    if (!recorder) return fn(...args);
    const r = recorder;
    // the kernel's own ops are not traced: it runs with no recorder
    recorder = undefined;
    try {
      return r.kernel(name, fn as (...args: never[]) => unknown, args, info) as R;
    } finally {
      recorder = r;
    }
  };
  return wrapped;
}
