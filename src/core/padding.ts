// TF's `same` padding: pure arithmetic on a spatial axis, for the op path, the generated step and the export.

/** TF's padding rule: [before, after] rows for one spatial axis. */
export function samePadding(size: number, kernel: number, stride: number): [number, number] {
  const out = Math.ceil(size / stride);
  const total = Math.max((out - 1) * stride + kernel - size, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}
