// The direction of netc's imports, checked by test/architecture.test.ts (and `npm run deps`).
//
// src/ is a house of floors. A part (a folder of src/, or one of its top-level files) may import parts on
// lower floors only: never one on its own floor or above, so the arrows run one way and no circle can close
// across parts. Inside a part, files import each other freely, but in no circle either. Type-only imports
// count as arrows too: a type lives with its owner, below its users. docs/architecture.md explains the parts.
const floors = [
  ['util', 'version.ts'], //      ground: seeded random streams, atomic writes, words
  ['diagnostics', 'math'], //     Diagnostic, the message catalogue with stable codes, the printer | elementwise rules described once
  ['core', 'wasm'], //            shapes and argument specs; where a member sits in a fused tensor | a WebAssembly emitter
  ['syntax', 'vocabulary', 'interop'], // tokens, parser, AST | the language's names and their arguments | PyTorch's and ONNX's conventions: layouts, export nodes, model.py's and ONNX's pieces
  ['data', 'kernels', 'wgsl'], // data sources and loaders | the browser-safe math on TF.js (netc/kernels) | WGSL kernel text, by family
  ['layers'], //                  one file per layer kind: arguments, shape, widening, forward rules, its rule per target
  ['check'], //                   the AST checked into a Program
  ['ir'], //                      the model IR: lowering, verifier, printer
  ['ensemble'], //                the ensemble IR: widening, verifier, slicing map
  ['step'], //                    the generated training step: what it covers, its WebAssembly
  ['runtime'], //                 the population on a backend
  ['scale', 'serve', 'export'], // shard jobs and their transports | trained members out | members in PyTorch's and ONNX's conventions
  ['train'], //                   the training loop and what it keeps
  ['emit'], //                    the compiled module
  ['pipeline.ts'], //             the named pass list
  ['report'], //                  report.html and the leaderboard's ranking
  ['lsp'], //                     the language server's features (netc lsp)
  ['cli'], //                     commands, files, exit codes
  ['index.ts', 'netc-kernels.ts'], // the package's entries: netc and netc/kernels
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathOf = (part) => (part.endsWith('.ts') ? `^src/${escape(part)}$` : `^src/${escape(part)}/`);

const upward = floors.flatMap((floor, k) =>
  floor.map((part) => {
    const notBelow = floors.slice(k).flat().filter((p) => p !== part);
    return {
      name: `${part}-imports-downward`,
      comment: `${part} is on floor ${k}: it may import ${floors.slice(0, k).flat().join(', ') || 'no other part'}`,
      severity: 'error',
      from: { path: pathOf(part) },
      to: { path: notBelow.map(pathOf).join('|') },
    };
  }),
);

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-circular',
      comment: 'files import each other in no circle, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'tfjs-loaded-by-the-backend-only',
      comment: 'TF.js is a value passed in (ctx.tf): only runtime/backend.ts loads it, with import(), so the front end never does',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/runtime/backend\\.ts$' },
      to: { path: '@tensorflow/', dependencyTypesNot: ['type-only', 'type-import'] },
    },
    {
      name: 'backend-loads-tfjs-on-demand',
      comment: 'runtime/backend.ts loads TF.js and its backends with import() only, when a backend is asked for',
      severity: 'error',
      from: { path: '^src/runtime/backend\\.ts$' },
      to: { path: '@tensorflow/', dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'] },
    },
    {
      name: 'src-stands-alone',
      comment: 'src/ imports nothing of the tests, benchmarks or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
