// Preloaded into `node bin/netc.js train` by bench/worker.ts (a 'train' job with cli): prints the process's
// peak RSS (VmHWM) to stderr as it exits, for the memory row of the bench.
const { readFileSync, writeSync } = require('node:fs');
process.on('exit', () => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) writeSync(2, `netc-bench VmHWM ${m[1]} kB\n`);
  } catch {
    // no /proc: the worker falls back to the largest RSS it sampled
  }
});
