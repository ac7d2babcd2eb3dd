// The last step of `npm run build`: dist/bundle/, the CLI that bin/netc.js runs, bundled by esbuild from the
// dist/ that tsc wrote. Node's ES module loader resolves, reads and links each of the CLI's ~240 files on
// its own, which cost more CPU than loading TF.js: importing dist/cli/main.js took 0.55 s of CPU, the bundle
// 0.36 s (node itself: 0.12 s). Packages stay outside (node_modules, one copy in the module cache), and every dynamic
// import() stays a chunk of its own (--splitting), so a command still loads only what it uses: the report,
// the LSP, ONNX and the queue load only where they are used. The entries are written flat, so that
// `new URL('./worker-process.js', import.meta.url)` in a chunk finds the worker's entry beside it.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: ['dist/cli/main.js', 'dist/cli/dawn-notes.js', 'dist/scale/worker-process.js'],
  outdir: 'dist/bundle',
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  packages: 'external',
  logLevel: 'warning',
});
