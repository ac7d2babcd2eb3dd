// npm test's first part: the build (dist/, which the tests that run bin/netc.js use) and the type checks of
// the tests, the bench and the editor extension, in two lanes side by side. Each is one tsc, mostly on one core, and CI
// has two: side by side they take about the time of the longest pair rather than of all four in a row.
// Fails, after all have finished, if any failed; each one's errors are printed as tsc prints them.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// the build first in its lane: the tests' type check reads dist/ (a test imports netc/kernels by the
// package's own name, which resolves to dist/netc-kernels.d.ts)
// then the bundle that bin/netc.js runs (scripts/bundle-cli.mjs), from the dist/ just built: one left from an
// earlier build would run the sources as they were then
const lanes = [
  [['-p', 'tsconfig.build.json'], ['scripts/bundle-cli.mjs'], ['-p', 'tsconfig.json', '--noEmit']],
  [['-p', 'bench/tsconfig.json', '--noEmit'], ['-p', 'editors/vscode/tsconfig.json']],
];

/** A tsc with these arguments, or the one script named. */
function run(args) {
  const script = args.length === 1 && args[0].endsWith('.mjs');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, script ? args : [tsc, ...args], { stdio: 'inherit' });
    child.on('close', (code) => resolve(code === 0 ? [] : [script ? args[0] : `tsc ${args.join(' ')}`]));
  });
}

async function lane(jobs) {
  const failed = [];
  for (const args of jobs) failed.push(...(await run(args)));
  return failed;
}

const failed = (await Promise.all(lanes.map(lane))).flat();
if (failed.length) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exit(1);
}
