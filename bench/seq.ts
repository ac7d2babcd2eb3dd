// The bench's `seq` section (issue 38): sequence models, netc against its peers side by side in one run. Three
// workloads of 32 members each, each member its own learning rate and seed, Adam, batch 32:
//   lstm:        embedding(10000, 32), lstm(32) over 100 token ids, dense(1, sigmoid)
//   transformer: embedding(10000, 32, positions: 200), one encoder block (attention(heads: 2), residual add,
//                layernorm, dense(32, relu), dense(32), residual add, layernorm), global_avg_pool(), dense(1, sigmoid)
//   gru:         gru(64) over Fashion-MNIST's 28 rows of 28 pixels, dense(10, softmax)
// netc: a generated .net file per workload (token workloads on an npy of random int32 ids and labels written
// here; the GRU on fashion_mnist()), `netc train` for a fixed number of steps, with `--threads 1` (one core) and
// with its defaults (the whole machine), member-steps/s from its summary.json and its process's peak RSS
// (VmHWM). Peers: bench/seq_torch.py (a PyTorch user's loop of N nn.Modules, the same hand-batched with stacked
// weights and bmm, torch.func.vmap where it runs) and bench/seq_jax.py (jit(vmap(value_and_grad)) with lax.scan,
// Adam written out), each at one thread and at its default threading. This module has no TF.js in it:
// bench/bench.ts hands it the runners.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainRunResult } from './lib.js';
import type { Peer, PeerTarget } from './peers.js';

export type SeqWorkload = 'lstm' | 'transformer' | 'gru';
export const seqWorkloads: SeqWorkload[] = ['lstm', 'transformer', 'gru'];

/** How many members, and steps for netc (slow on TF.js's op path) and for the peers, per workload. */
export interface SeqPlan {
  n: number;
  netcSteps: Record<SeqWorkload, number>;
  peerSteps: Record<SeqWorkload, number>;
  /** the workloads to run (--seq-workloads; default all three) */
  workloads?: SeqWorkload[];
}

/** Members on the device at once when netc train's whole population runs out of wasm memory (the transformer at x32). */
const retryResident = 8;

/** One peer configuration's result: bench/seq_torch.py's or bench/seq_jax.py's RESULT line. */
export interface SeqPeerResult {
  seconds?: number;
  memberStepsPerSecond?: number;
  steps?: number;
  peakRss: number;
  /** the method's own failure (torch.func.vmap of nn.LSTM): its message */
  error?: string;
}

export type SeqThreads = 'one thread' | 'default threads';

export interface SeqPeerRow extends Peer<SeqPeerResult> {
  name: string;
  threads: SeqThreads;
}

export interface SeqRow {
  workload: SeqWorkload;
  n: number;
  netcSteps: number;
  /** netc train's runs; `resident`: the retry with --resident after the whole population failed (out of memory) */
  netc: { threads: SeqThreads; run: Peer<TrainRunResult>; resident?: number }[];
  peers: SeqPeerRow[];
}

/** What the section needs from bench/bench.ts: netc train on a file, and a Python script's RESULT line. */
export interface SeqRunners {
  train(file: string, args: string[]): Promise<TrainRunResult>;
  torch?: (job: object, threads: SeqThreads) => Promise<SeqPeerResult>;
  jax?: (job: object, threads: SeqThreads) => Promise<SeqPeerResult>;
  /** whether netc train has --threads (else both netc rows are its default) */
  netcThreads: boolean;
  log(line: string): void;
}

const count = 1024;
const T: Record<SeqWorkload, number> = { lstm: 100, transformer: 200, gru: 28 };

/** The .net file of a workload: n members, `steps` steps, on `data`. */
export function seqNetFile(workload: SeqWorkload, n: number, steps: number, data: string): string {
  const body = {
    lstm: ['embedding(10000, 32)', 'lstm(32)', 'dense(1, activation: sigmoid)'],
    transformer: [
      'x = embedding(10000, 32, positions: 200)',
      'a = attention(heads: 2)',
      'r = add(x, a)',
      'h = layernorm()',
      'dense(32, activation: relu)',
      'f = dense(32)',
      'add(h, f)',
      'layernorm()',
      'global_avg_pool()',
      'dense(1, activation: sigmoid)',
    ],
    gru: ['gru(64)', 'dense(10, activation: softmax)'],
  }[workload];
  const input = workload === 'gru' ? '[28, 28]' : `[${T[workload]}]`;
  const lr = workload === 'transformer' ? 'loguniform(3e-4, 3e-3)' : 'loguniform(1e-3, 1e-2)';
  const loss = workload === 'gru' ? 'categorical_crossentropy' : 'binary_crossentropy';
  return `model ${workload}_seq(input: ${input}) {
${body.map((l) => `  ${l}`).join('\n')}
}
ensemble { members: ${n} seed: 0 vary lr: ${lr} }
train { data: ${data} validation: 0 loss: ${loss} optimizer: adam(lr: 0.003) batch: 32 steps: ${steps} }
`;
}

/** A C-order .npy (format 1.0) of int32, as np.save writes it. */
export function npyInt32(values: Int32Array, shape: number[]): Buffer {
  let header = `{'descr': '<i4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  // the header is padded with spaces to a multiple of 64 bytes, newline last
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93]).copy(head, 0);
  head.write('NUMPY', 1, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(values.buffer, values.byteOffset, values.byteLength)]);
}

/** Random token ids [count, t] in [0, 10000) and 0/1 labels, from a fixed linear congruential generator. */
function writeTokens(dir: string, t: number): string {
  let s = 12345;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8);
  const ids = Int32Array.from({ length: count * t }, () => next() % 10000);
  const y = Int32Array.from({ length: count }, () => next() % 2);
  const x = join(dir, `seq-ids-${t}.npy`);
  const labels = join(dir, `seq-labels-${t}.npy`);
  writeFileSync(x, npyInt32(ids, [count, t]));
  writeFileSync(labels, npyInt32(y, [count]));
  return `npy(x: ${JSON.stringify(x)}, y: ${JSON.stringify(labels)})`;
}

const rate = (r: { memberStepsPerSecond?: number } | undefined) => r?.memberStepsPerSecond;
const show = (x: number | undefined) => (x === undefined ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

async function netcRuns(workload: SeqWorkload, file: string, runners: SeqRunners): Promise<SeqRow['netc']> {
  const out: SeqRow['netc'] = [];
  const configs: [SeqThreads, string[]][] = [['one thread', runners.netcThreads ? ['--threads', '1'] : []]];
  if (runners.netcThreads) configs.push(['default threads', []]);
  for (const [threads, extra] of configs) {
    const run = await netcRun(workload, file, threads, ['--backend', 'wasm', ...extra], runners);
    out.push({ threads, run });
    // netc's own advice for a population that does not fit (the transformer at x32: "out of memory ... train
    // fewer members at once (--members, or --resident K)"): train it in waves; the worker's error keeps only the
    // last lines of its stack, so any failure is retried so, beside the failed row
    if (run.error) out.push({ threads, run: await netcRun(workload, file, threads, ['--backend', 'wasm', ...extra, '--resident', String(retryResident)], runners), resident: retryResident });
  }
  return out;
}

async function netcRun(workload: SeqWorkload, file: string, threads: SeqThreads, args: string[], runners: SeqRunners): Promise<Peer<TrainRunResult>> {
  const what = `${workload} netc train ${args.slice(2).join(' ') || '(its defaults)'}`;
  try {
    const result = await runners.train(file, args);
    runners.log(`  ${what}: ${show(result.memberStepsPerSecond)} member-steps/s (${result.steps} steps in ${result.seconds.toFixed(1)} s, engine ${result.engine ?? 'auto'}), peak RSS ${(result.peakRss / 1e6).toFixed(0)} MB`);
    return { result };
  } catch (e) {
    // the CLI's own message (netc: ...), not the stack under it
    const message = (e as Error).message.split(' | ').find((l) => l.includes('netc: ')) ?? (e as Error).message;
    runners.log(`  ${what}: FAILED ${message}`);
    return { error: message };
  }
}

async function peerRun(name: string, threads: SeqThreads, run: () => Promise<SeqPeerResult>, log: (l: string) => void): Promise<SeqPeerRow> {
  try {
    const result = await run();
    log(`    ${name}, ${threads}: ${result.error ? `does not run: ${result.error}` : `${show(result.memberStepsPerSecond)} member-steps/s (${result.steps} steps in ${result.seconds!.toFixed(2)} s), peak RSS ${(result.peakRss / 1e6).toFixed(0)} MB`}`);
    return { name, threads, result };
  } catch (e) {
    log(`    ${name}, ${threads}: FAILED ${(e as Error).message}`);
    return { name, threads, error: (e as Error).message };
  }
}

async function peerRuns(workload: SeqWorkload, plan: SeqPlan, runners: SeqRunners): Promise<SeqPeerRow[]> {
  const rows: SeqPeerRow[] = [];
  const job = { workload, n: plan.n, steps: plan.peerSteps[workload] };
  for (const threads of ['one thread', 'default threads'] as SeqThreads[]) {
    if (runners.torch) {
      for (const method of ['loop', 'bmm', 'vmap']) {
        // a method that cannot run (vmap of nn.LSTM) fails the same way on every core: its message once
        const failed = rows.find((r) => r.name === `torch ${method}` && r.result?.error);
        if (failed) continue;
        rows.push(await peerRun(`torch ${method}`, threads, () => runners.torch!({ ...job, method, threads: threads === 'one thread' ? 1 : 'default' }, threads), runners.log));
      }
    }
    if (runners.jax) rows.push(await peerRun('JAX (XLA)', threads, () => runners.jax!({ ...job, threads: threads === 'one thread' ? 1 : null }, threads), runners.log));
  }
  return rows;
}

/** Every workload of the section: netc train's two runs, then each peer's, one process after another. */
export async function measureSeq(plan: SeqPlan, dir: string, runners: SeqRunners): Promise<SeqRow[]> {
  const rows: SeqRow[] = [];
  for (const workload of plan.workloads ?? seqWorkloads) {
    const steps = plan.netcSteps[workload];
    runners.log(`seq ${workload} x${plan.n}: netc train ${steps} steps, the peers ${plan.peerSteps[workload]}`);
    const data = workload === 'gru' ? `fashion_mnist(limit: ${count})` : writeTokens(dir, T[workload]);
    const file = join(dir, `seq-${workload}.net`);
    writeFileSync(file, seqNetFile(workload, plan.n, steps, data));
    const netc = await netcRuns(workload, file, runners);
    const peers = await peerRuns(workload, plan, runners);
    rows.push({ workload, n: plan.n, netcSteps: steps, netc, peers });
  }
  return rows;
}

const measured = (p: SeqPeerRow) => rate(p.result) !== undefined;
const best = (peers: SeqPeerRow[]) => peers.filter(measured).sort((a, b) => rate(b.result)! - rate(a.result)!)[0];
/** netc's run at a threading: the whole population's, or where that failed the --resident retry's. */
const netcAt = (row: SeqRow, threads: SeqThreads) => {
  const runs = row.netc.filter((r) => r.threads === threads);
  return (runs.find((r) => r.run.result) ?? runs[0] ?? row.netc[0])?.run;
};
const title: Record<SeqWorkload, string> = {
  lstm: 'LSTM(32) text classifiers (vocab 10,000, length 100, embedding 32)',
  transformer: 'transformer encoders (embedding 32 with positions, length 200, one block, 2 heads)',
  gru: 'GRU(64) on Fashion-MNIST rows (28 steps of 28)',
};

/** netc's rate over a peer's against a least ratio (peers.ts's rateTarget, with the decimals these slow rates need). */
function seqRateTarget(name: string, least: number, netc: Peer<TrainRunResult>, peer: SeqPeerRow | undefined, why: string): PeerTarget {
  const [a, b] = [rate(netc.result), rate(peer?.result)];
  const r = a !== undefined && b !== undefined ? a / b : undefined;
  return {
    name,
    required: `>= ${least.toFixed(1)}x`,
    measured: r === undefined ? (netc.error ? `failed: ${netc.error}` : why) : `${r.toFixed(3)}x (netc ${show(a)}, ${peer!.name} at ${peer!.threads} ${show(b)} member-steps/s)`,
    pass: r === undefined ? null : r >= least,
    value: r,
  };
}

/** Issue 38's targets per workload: one core (>= 1x the best peer at one thread), the whole machine (>= 2x the best peer at either threading), peak RSS (<= the PyTorch loop's). */
export function seqTargets(rows: SeqRow[], why: string): PeerTarget[] {
  const out: PeerTarget[] = [];
  for (const row of rows) {
    const one = best(row.peers.filter((p) => p.threads === 'one thread'));
    const any = best(row.peers);
    const netcOne = netcAt(row, 'one thread');
    const netcAll = netcAt(row, 'default threads');
    out.push(seqRateTarget(`seq ${row.workload} x${row.n}, one core: netc train --threads 1 / the best peer at one thread, member-steps/s`, 1, netcOne, one, why));
    out.push(seqRateTarget(`seq ${row.workload} x${row.n}, whole machine: netc train (its defaults) / the best peer at one thread or its default, member-steps/s`, 2, netcAll, any, why));
    const loop = row.peers.find((p) => p.name === 'torch loop' && p.threads === 'one thread')?.result;
    const rss = netcOne.result?.peakRss;
    const ok = rss !== undefined && loop?.peakRss !== undefined;
    out.push({
      name: `seq ${row.workload} x${row.n}: netc train's peak RSS (one core) / the PyTorch loop's (one thread)`,
      required: '<= 1.0x',
      measured: ok ? `${(rss! / loop!.peakRss).toFixed(2)}x (netc ${(rss! / 1e6).toFixed(0)} MB, torch loop ${(loop!.peakRss / 1e6).toFixed(0)} MB)` : why,
      pass: ok ? rss! <= loop!.peakRss : null,
      value: ok ? rss! / loop!.peakRss : undefined,
    });
  }
  return out;
}

/** The section's table per workload: every configuration's member-steps/s, netc's ratio to it, peak RSS. */
export function seqTables(rows: SeqRow[], notes: string[]): string[] {
  if (!rows.length) return [];
  const out = ['## Sequence models (issue 38): netc train against PyTorch and JAX, 32 members each', ''];
  out.push(
    'member-steps/s = members x steps / training seconds. netc: `netc train` (dist/, the compiled CLI, in a process of its own) on wasm, its summary.json\'s rate (its first step to its last checkpoint: the first step\'s TF.js warm-up inside, compile and data loading outside); peak RSS its VmHWM. PyTorch: bench/seq_torch.py; JAX: bench/seq_jax.py (one warm-up step, XLA\'s compile, outside the clock); peak RSS their ru_maxrss. The peers train on random ids (pixels for the GRU) of the same shapes. netc ÷ it: above 1x netc is faster.',
    '',
  );
  for (const row of rows) {
    out.push(`### ${title[row.workload]} x${row.n}`, '');
    out.push('| implementation | threads | steps | member-steps/s | peak RSS MB | netc --threads 1 ÷ it | netc default ÷ it |', '|---|---|---:|---:|---:|---:|---:|');
    const one = rate(netcAt(row, 'one thread').result);
    const all = rate(netcAt(row, 'default threads').result);
    const ratio = (netc: number | undefined, peer: number | undefined) => (netc !== undefined && peer !== undefined ? `${(netc / peer).toFixed(3)}x` : '');
    for (const n of row.netc) {
      const r = n.run.result;
      out.push(`| netc train (engine ${r?.engine ?? '?'})${n.resident ? ` --resident ${n.resident}` : ''} | ${n.threads === 'one thread' ? '--threads 1' : 'its default'} | ${r?.steps ?? row.netcSteps} | ${r ? show(r.memberStepsPerSecond) : `failed: ${n.run.error}`} | ${r ? (r.peakRss / 1e6).toFixed(0) : ''} | | |`);
    }
    for (const p of row.peers) {
      const r = p.result;
      const cell = r?.error ? `does not run: ${r.error}` : r ? show(r.memberStepsPerSecond) : `failed: ${p.error}`;
      out.push(`| ${p.name} | ${p.threads} | ${r?.steps ?? ''} | ${cell} | ${r ? (r.peakRss / 1e6).toFixed(0) : ''} | ${ratio(one, rate(r))} | ${ratio(all, rate(r))} |`);
    }
    out.push('');
  }
  out.push(...notes.map((n) => `${n}.`), '');
  return out;
}
