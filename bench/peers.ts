// The bench's Python JAX peer (bench/jax_xla.py, bench/seed000_jax.py: JAX on XLA's CPU backend) and the
// whole-process timings of Seed 000: finding a Python that imports jax, timing a command from its spawn to its
// exit, and the targets of issue 39 that hold netc against them. bench/bench.ts runs the configurations and
// prints the tables; this module has no TF.js and no netc in it.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** XLA_FLAGS for one XLA thread, as bench/jax_xla.py sets it (for the notes). */
export const ONE_XLA_THREAD = "'--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'";

/** A Python whose `import jax` works, and its versions (bench/jax_xla.py --probe). */
export interface PythonJax {
  python: string;
  jax: string;
  jaxlib: string;
  python_version: string;
}

/** What a peer's run gave: its result, or why there is none. */
export interface Peer<T> {
  result?: T;
  error?: string;
}

/**
 * The first candidate Python that imports jax, or why there is none: the JAX rows are then skipped with that
 * reason, as the PyTorch rows are without torch (CI has no jax). A failed import takes a fraction of a second.
 */
export function findPythonJax(benchDir: string, candidates: string[]): { found?: PythonJax; why?: string } {
  const failures: string[] = [];
  for (const python of candidates) {
    const r = spawnSync(python, [join(benchDir, 'jax_xla.py'), '--probe'], { encoding: 'utf8', timeout: 120_000 });
    const line = r.stdout?.split('\n').find((l) => l.startsWith('PROBE '));
    if (r.status === 0 && line) {
      const info = JSON.parse(line.slice(6)) as { jax: string; jaxlib: string; python: string };
      return { found: { python, jax: info.jax, jaxlib: info.jaxlib, python_version: info.python } };
    }
    const lines = (r.stderr ?? '').split('\n').filter((l) => l.trim() !== '');
    failures.push(`${python}: ${r.error ? ((r.error as NodeJS.ErrnoException).code ?? r.error.message) : (lines.pop() ?? `exit ${r.status}`)}`);
  }
  return { why: `no Python with jax (${failures.join('; ')}); pip install jax jaxlib to get the JAX rows` };
}

/** Whether `netc train --help` lists a `--threads` option (another branch adds it): the one-core rows pass `--threads 1` only then. */
export function netcHasThreadsOption(netc: string): boolean {
  const r = spawnSync(process.execPath, [netc, 'train', '--help'], { encoding: 'utf8', timeout: 60_000 });
  return /^\s*--threads\b/m.test(r.stdout ?? '');
}

/** Seconds from spawning a command to its exit (its start-up, imports, compile and work), or an error with its last output. */
export function timeProcess(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code === 0) resolve(seconds);
      else reject(new Error(`${[command, ...args].join(' ')} exited with ${code}: ${output.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/** One whole-process row of Seed 000: the command as a user types it, each run's seconds, and the least. */
export interface WholeProcessRow {
  name: string;
  command: string;
  runs: number[];
  seconds?: number;
  error?: string;
}

/**
 * A command run `repeats` times one after another, each in a fresh process: the least of its wall times counts
 * (the others are load). `shown`: the command as a user types it, for the tables.
 */
export async function wholeProcessRow(name: string, shown: string, command: string, args: (run: number) => string[], repeats: number, cwd: string): Promise<WholeProcessRow> {
  const row: WholeProcessRow = { name, command: shown, runs: [] };
  try {
    for (let k = 0; k < repeats; k++) row.runs.push(await timeProcess(command, args(k), cwd));
    row.seconds = Math.min(...row.runs);
  } catch (e) {
    row.error = (e as Error).message;
  }
  return row;
}

/** A target as bench/bench.ts lists them. */
export interface PeerTarget {
  name: string;
  required: string;
  measured: string;
  pass: boolean | null;
  value?: number;
}

/** netc's rate over a peer's, against a least ratio: met, missed, or not measured with the reason. */
export function rateTarget(name: string, least: number, netc: number | undefined, peer: number | undefined, peerName: string, why: string): PeerTarget {
  const r = netc !== undefined && peer !== undefined ? netc / peer : undefined;
  return {
    name,
    required: `>= ${least.toFixed(1)}x`,
    measured: r === undefined ? why : `${r.toFixed(2)}x (netc ${netc!.toFixed(0)}, ${peerName} ${peer!.toFixed(0)} member-steps/s)`,
    pass: r === undefined ? null : r >= least,
    value: r,
  };
}

/** Seed 000's whole-process targets: netc's command at most 0.5 s, and at least 2x faster than each script. */
export function wholeProcessTargets(netc: WholeProcessRow | undefined, scripts: { label: string; row?: WholeProcessRow }[], why: string): PeerTarget[] {
  const s = netc?.seconds;
  const targets: PeerTarget[] = [
    {
      name: "Seed 000 whole process: `netc train bench/seed000.net`'s wall time (start-up, compile, training, files), least of its runs",
      required: '<= 0.5 s',
      measured: s === undefined ? (netc?.error ? `failed: ${netc.error}` : why) : `${s.toFixed(3)} s`,
      pass: s === undefined ? null : s <= 0.5,
      value: s,
    },
  ];
  for (const { label, row } of scripts) {
    const r = s !== undefined && row?.seconds !== undefined ? row.seconds / s : undefined;
    targets.push({
      name: `Seed 000 whole process: ${label} / netc train, wall seconds`,
      required: '>= 2.0x',
      measured: r === undefined ? (row?.error ? `failed: ${row.error}` : why) : `${r.toFixed(2)}x (netc ${s!.toFixed(3)} s, ${row!.name} ${row!.seconds!.toFixed(3)} s)`,
      pass: r === undefined ? null : r >= 2,
      value: r,
    });
  }
  return targets;
}
