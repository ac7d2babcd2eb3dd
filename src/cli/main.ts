// The command line. This folder is the only place that reads and writes files and chooses exit codes.
import { Command, CommanderError } from 'commander';
import { checkCommand } from './check-command.js';
import { fmtCommand } from './fmt-command.js';
import { compileCommand, type CompileCommandOptions } from './compile-command.js';
import { irCommand } from './ir-command.js';
import { ExitCode, processIo, UsageError, type Io } from './io.js';
import { trainCommand } from './train-command.js';
import { stderrIsTTY } from './dawn-notes.js';
import { DEFAULT_CHECKPOINT_MINUTES } from './train-options.js';
import { predictCommand, predictHelp, type PredictOptions } from './predict-command.js';
import { evalCommand, evalHelp, type EvalOptions } from './eval-command.js';
import { combineModes } from '../serve/inference.js';
import { extractCommand, rankMetrics, type ExtractOptions } from './extract-command.js';
import { exportFormats } from './extract-export.js';
import { importCommand } from './import-command.js';
import { reportCommand } from './report-command.js';
import { choiceOption, intOption, positiveNumberOption, workersOption } from './options.js';
import { workerCommand, type WorkerOptions } from './worker-command.js';
import { lowerings, type Lowering } from '../layers/forward.js';
import { NETC_VERSION } from '../version.js';
import { resourceMessage } from './resource-error.js';

const backends = ['auto', 'node-gpu', 'node', 'webgpu', 'wasm', 'cpu'] as const;


export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let code: number = ExitCode.ok;
  const program = new Command('netc')
    .description('Train many small neural networks of one architecture at once.')
    .version(NETC_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError('(run netc --help for usage)');

  program
    .command('check')
    .description('check .net files and print a one-line summary of each clean one')
    .argument('<files...>', '.net files')
    .action((files: string[]) => {
      code = checkCommand(files, io);
    });

  program
    .command('fmt')
    .description('rewrite .net files in their one canonical layout (- reads standard input and prints to standard output)')
    .argument('<files...>', ".net files, or - for standard input")
    .option('--check', 'change nothing: list the files that would change, and exit with 1 if there are any')
    .action((files: string[], opts: { check?: boolean }) => {
      code = fmtCommand(files, opts, io);
    });

  program
    .command('lsp')
    .description('serve the language server protocol over standard input and output, for editors')
    // what editors' clients add to the command line (vscode-languageclient: --stdio, --clientProcessId=PID)
    .option('--stdio', 'talk over standard input and output (the only transport, and the default)')
    .allowUnknownOption()
    .action(async () => {
      // loaded only here: no other command pays for the protocol library
      const { lspCommand } = await import('./lsp-command.js');
      code = await lspCommand();
    });

  program
    .command('ir')
    .description('print the IR of a .net file after a named pass')
    .argument('<file>', 'a .net file')
    .option('--after <pass>', 'the pass after which to print', 'verify')
    .option('--lowering <name>', `how members are fused: ${lowerings.join(', ')}`, choiceOption(lowerings), 'grouped')
    .option('--members <n>', 'number of members (overrides the ensemble block)', intOption(1))
    .action((file: string, opts: { after: string; lowering: Lowering; members?: number }) => {
      code = irCommand(file, opts.after, io, { lowering: opts.lowering, members: opts.members });
    });

  program
    .command('train')
    .description('train every member of a .net file as one fused network')
    .argument('[file]', 'a .net file (with --resume: default the source the run was started from)')
    .option('--members <n>', 'number of members (overrides the ensemble block)', intOption(1))
    .option('--epochs <n>', 'epochs to train (overrides the train block)', intOption(1))
    .option('--steps <n>', 'optimizer steps to train; 0 writes the untrained population', intOption(0))
    .option('--seed <n>', 'seed for initialisation, varied hyperparameters, data and dropout', intOption(0))
    // no defaults here: a resume takes the run's own unless they are given (auto and grouped otherwise)
    .option('--backend <name>', `TF.js backend: ${backends.join(', ')} (default: auto)`, choiceOption(backends))
    .option('--lowering <name>', `how members are fused: ${lowerings.join(', ')} (default: grouped)`, choiceOption(lowerings))
    .option('--engine <name>', 'how each step runs: fused (one generated WebAssembly call, on wasm), ops (TF.js ops) or auto (default: fused where it covers the model)', choiceOption(['auto', 'ops', 'fused'] as const))
    .option('--out <dir>', 'run directory, new or empty (default: runs/<file>-<time>)')
    .option('--force', "with --out: replace the run in that directory (only a run's own files are deleted)")
    .option('--resume <run>', 'continue the run in this directory from its last checkpoint, with the options it was started with')
    .option('--checkpoint-minutes <m>', `write a checkpoint once this many minutes have passed since the last (default: ${DEFAULT_CHECKPOINT_MINUTES}), and at the end`, positiveNumberOption)
    .option('--checkpoint-every <steps>', 'write a checkpoint every this many steps instead of on the clock, and at the end', intOption(1))
    .option('--resident <k>', 'keep at most K members on the device: train the population in waves of K', intOption(1))
    .option('--threads <n>', 'run the fused step on N threads of this process (default: one per core; 1: the main thread alone)', intOption(1))
    .option('--workers <k>', "train in K worker processes on this machine ('auto': one per core)", workersOption)
    .option('--queue <url>', 'train through a BullMQ queue on Redis (redis://HOST:PORT), served by netc worker processes anywhere')
    .option('--shards <k>', 'with --queue: cut the population into K shards (default: the workers connected at the start)', intOption(1))
    .option('--queue-timeout <s>', 'with --queue: stop the run (to be resumed) once Redis has been unreachable this many seconds (default: 300)', positiveNumberOption)
    .action(async (file: string | undefined, opts: Omit<Parameters<typeof trainCommand>[1], 'progress'>) => {
      if (opts.epochs !== undefined && opts.steps !== undefined) throw new UsageError('give --epochs or --steps, not both');
      if (opts.resume !== undefined && opts.out !== undefined) throw new UsageError('--resume continues in the run directory it names; leave out --out');
      if (opts.force && opts.out === undefined) throw new UsageError('--force replaces the run in the --out directory; give --out DIR');
      if (opts.workers !== undefined && opts.queue !== undefined) throw new UsageError('give --workers (this machine) or --queue (any machine), not both');
      if (opts.checkpointEvery !== undefined && opts.checkpointMinutes !== undefined) throw new UsageError('give --checkpoint-every (steps) or --checkpoint-minutes (wall time), not both');
      if (opts.shards !== undefined && opts.queue === undefined) throw new UsageError('--shards goes with --queue (with --workers, each worker trains one shard)');
      if (opts.queueTimeout !== undefined && opts.queue === undefined && opts.resume === undefined) throw new UsageError('--queue-timeout goes with --queue');
      code = await trainCommand(file, { ...opts, progress: stderrIsTTY() }, io);
    });

  program
    .command('worker')
    .description('serve the shard jobs of netc train --queue runs until SIGTERM or Ctrl-C (the current job finishes first)')
    .requiredOption('--queue <url>', 'the BullMQ queue on Redis: redis://HOST:PORT')
    .option('--backend <name>', `TF.js backend: ${backends.join(', ')}`, choiceOption(backends), 'auto')
    .option('--device <i>', 'pin this worker to one GPU: CUDA_VISIBLE_DEVICES=I for node-gpu', intOption(0))
    .action(async (opts: WorkerOptions) => {
      code = await workerCommand(opts, io);
    });

  program
    .command('compile')
    .description('compile a .net file to a TypeScript module that trains its ensemble (forward pass as straight-line code)')
    .argument('<file>', 'a .net file')
    .option('-o, --out <file>', 'the .ts file to write (default: standard output)')
    .option('--lowering <name>', `how members are fused: ${lowerings.join(', ')}`, choiceOption(lowerings), 'grouped')
    .option('--members <n>', 'number of members (overrides the ensemble block)', intOption(1))
    .action(async (file: string, opts: CompileCommandOptions) => {
      code = await compileCommand(file, opts, io);
    });

  program
    .command('extract')
    .description('write members of a trained run as TF.js LayersModels (model.json + weights.bin), PyTorch modules or ONNX graphs')
    .argument('<run>', 'a run directory')
    .option('--member <k>', 'the member with this number', intOption(0))
    .option('--best', 'the best member (by the leaderboard, or --metric)')
    .option('--metric <name>', `with --best: ${rankMetrics.join(', ')}`, choiceOption(rankMetrics))
    .option('--all', 'every member, each into DIR/member-K/')
    .option('--ensemble', 'with --format onnx: every member in one graph, DIR/ensemble.onnx')
    .option('--format <format>', `${exportFormats.join(', ')}: model.json + weights.bin, model.py + model.safetensors, or model.onnx`, choiceOption(exportFormats), 'tfjs')
    .requiredOption('--out <dir>', 'where to write')
    .option('--force', 'replace files of the same names in the --out directory')
    .option('--backend <name>', `TF.js backend: ${backends.join(', ')}`, choiceOption(backends), 'auto')
    .action(async (run: string, opts: ExtractOptions) => {
      code = await extractCommand(run, opts, io);
    });

  program
    .command('import')
    .description("put a TF.js LayersModel's or a PyTorch state_dict's weights into member K of a run (warm starts, seeding PBT)")
    .argument('<model>', 'a folder with model.json and its weights, or a .safetensors state_dict of the model.py `netc extract --format pytorch` writes')
    .requiredOption('--into <run>', 'the run directory')
    .requiredOption('--member <k>', 'the member to replace', intOption(0))
    .option('--shared', "also replace the shared layers' weights, for every member (otherwise they must match the run's)")
    .action(async (modelDir: string, opts: { into: string; member: number; shared?: boolean }) => {
      code = await importCommand(modelDir, opts.into, opts.member, io, { shared: opts.shared });
    });

  program
    .command('predict')
    .description("a trained run's predictions on data: each member's, and the ensemble's")
    .argument('<run>', 'a run directory')
    .option('--data <source>', "the data, as a data source: 'mnist(limit: 500)', 'csv(\"new.csv\", label: \"y\")' (default: the run's test split, else its validation split)")
    .option('--combine <mode>', `the ensemble's prediction: ${combineModes.join(', ')}`, choiceOption(combineModes), 'mean')
    .option('--format <format>', 'csv or json', choiceOption(['csv', 'json'] as const), 'csv')
    .option('--output <file>', 'write to this file (atomically) instead of standard output; never one of the run\'s own files')
    .option('--force', 'with --output: replace the file if it exists')
    .option('--backend <name>', `TF.js backend: ${backends.join(', ')}`, choiceOption(backends), 'auto')
    .option('--seed <n>', "seed of generated data (xor, moons, spirals); default: the run's", intOption(0))
    .option('--batch <n>', 'examples per forward pass', intOption(1), 256)
    .addHelpText('after', predictHelp)
    .action(async (run: string, opts: PredictOptions) => {
      if (opts.force && opts.output === undefined) throw new UsageError('--force replaces the --output file; give --output FILE');
      code = await predictCommand(run, opts, io);
    });

  program
    .command('eval')
    .description("each member's and the ensemble's (mean, vote) loss and accuracy on data")
    .argument('<run>', 'a run directory')
    .option('--data <source>', "the data, as a data source: 'mnist(offset: 8000, limit: 2000)' (default: the run's test split, else its validation split)")
    .option('--format <format>', 'table or json', choiceOption(['table', 'json'] as const), 'table')
    .option('--backend <name>', `TF.js backend: ${backends.join(', ')}`, choiceOption(backends), 'auto')
    .option('--seed <n>', "seed of generated data (xor, moons, spirals); default: the run's", intOption(0))
    .option('--batch <n>', 'examples per forward pass', intOption(1), 256)
    .addHelpText('after', evalHelp)
    .action(async (run: string, opts: EvalOptions) => {
      code = await evalCommand(run, opts, io);
    });

  program
    .command('report')
    .description("write (or rewrite) a run's report.html from its summary, metrics and events")
    .argument('<run>', 'a run directory')
    .action(async (run: string) => {
      code = await reportCommand(run, io);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here too, with exit code 0
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (e instanceof UsageError) {
      io.err(`netc: ${e.message}\n`);
      return ExitCode.usage;
    }
    // a full disk, a read-only path, no memory: the machine's limits, not a bug
    const resource = resourceMessage(e);
    if (resource !== undefined) {
      io.err(`netc: ${resource}\n`);
      return ExitCode.errors;
    }
    io.err(`netc: internal error: ${(e as Error)?.stack ?? String(e)}\nThis is a bug in netc, not in your file; please report it with the file that caused it.\n`);
    return ExitCode.internal;
  }
}
