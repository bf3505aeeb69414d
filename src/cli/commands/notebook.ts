import { createHash } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ConfigError, TraceError, WorkspaceError } from '../../errors/index.ts';
import type { Notebook } from '../../report/notebook-schema.ts';
import type { RunStartRecord } from '../../trace/schema.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { handleInterrupts } from '../interrupt.ts';
import { displayPath } from '../output-dir.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { colorEnabled, createTerminalStyle } from '../terminal-style.ts';

const notebookHelp = `
Re-executes a run's analysis.ipynb top to bottom in a fresh sandbox of the
runner image (no network, the sandbox's limits, a copy of the workspace),
with Jupyter's own nbclient, writes the result next to it as
analysis.executed.ipynb, and says which cells' outputs differ from the
recorded ones (stdout, echoed value, error, number of images, chart spec;
not stderr, which holds library warnings). The run folder's other files and
the workspace are not changed.

The workspace is the one the run recorded unless --workspace names another;
files whose SHA-256 differs from the recorded one are named first. A deep
analysis's notebook runs its sub-analyses' cells one after another in one
kernel (they ran in kernels of their own).

Examples:
  $ datalyst notebook runs/20250314-093015-sales --execute
  $ datalyst notebook runs/20250314-093015-sales --execute --workspace data/q1-copy

${exitCodeHelpFor([
  [ExitCode.answered, 'every executed cell gave the recorded outputs'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [
    ExitCode.usage,
    'no --execute, no notebook or trace in the folder, no workspace, or the notebook could not run',
  ],
  [ExitCode.notAnswered, 'some outputs differ, or a cell failed that had not failed in the run'],
  [ExitCode.sandboxUnavailable, 'sandbox unavailable (Docker engine, runner image)'],
  [ExitCode.cancelled, 'cancelled (Ctrl-C)'],
])}`;

const notebookOptionsSchema = z.object({
  execute: z.boolean().optional(),
  workspace: z.string().optional(),
});

// Time for the whole notebook, over the run's own cell limit per cell.
const NOTEBOOK_TIMEOUT_MS = 60 * 60 * 1000;
const MAX_EXECUTED_NOTEBOOK_BYTES = 64 * 1024 * 1024;
const EXECUTED_NAME = '.datalyst-executed.ipynb';

export function defineNotebookCommand(
  program: Command,
  context: CliContext,
  setExitCode: ExitCodeSink,
): void {
  program
    .command('notebook')
    .description("Re-execute a run's notebook in the sandbox and say which outputs differ.")
    .argument(
      '<run>',
      'run folder (with analysis.ipynb, and trace.jsonl, trace.json or a deep analysis’s deep.json)',
    )
    .option('--execute', 're-execute the notebook (required: the only action for now)')
    .option('--workspace <dir>', 'the data folder to run against (default: the one the run recorded)')
    .addHelpText('after', notebookHelp)
    .action(async (run: string, rawOptions: unknown) => {
      setExitCode(await runNotebook(context, run, notebookOptionsSchema.parse(rawOptions)));
    });
}

async function runNotebook(
  context: CliContext,
  target: string,
  options: z.infer<typeof notebookOptionsSchema>,
): Promise<number> {
  const style = createTerminalStyle(colorEnabled(context.stdout.isTTY, context.env));
  const out = (line: string): void => context.stdout.write(`${line}\n`);
  const interrupts = handleInterrupts({
    source: context.signals,
    onFirst: () => context.stderr.write('Stopping the notebook… press Ctrl-C again to quit at once.\n'),
    onSecond: () => context.exit(ExitCode.cancelled),
  });
  try {
    if (options.execute !== true)
      throw new ConfigError('Nothing to do.', 'Pass --execute to re-execute the notebook.');
    const runDir = path.resolve(context.cwd, target);
    const notebookPath = path.join(runDir, 'analysis.ipynb');
    const { notebookSchema, compareNotebooks, comparableCellCount } = await import('../../report/index.ts');
    const notebookText = await readFile(notebookPath, 'utf8').catch(async (error: unknown) => {
      throw await missingNotebookError(runDir, target, error);
    });
    const recorded = notebookSchema.parse(JSON.parse(notebookText));
    if (comparableCellCount(recorded) === 0) {
      out(
        `${displayPath(notebookPath, context.cwd)} has no cell the run executed (the run ran no code): nothing to re-execute or compare.`,
      );
      return ExitCode.answered;
    }
    const start = await recordedStart(runDir);
    const workspaceDir = path.resolve(context.cwd, options.workspace ?? start.workspace.path);
    for (const line of await workspaceChanges(workspaceDir, start))
      context.stderr.write(`${style.yellow('!')} ${line}\n`);

    const image = await context.prepareSandbox({
      backend: 'docker',
      image: context.env.image ?? null,
      onProgress: (line) => context.stderr.write(`  ${line}\n`),
      signal: interrupts.signal,
    });
    out(`Re-executing ${displayPath(notebookPath, context.cwd)} in the runner image…`);
    const started = performance.now();
    const session = await context.createSandbox({
      backend: 'docker',
      workspaceDir,
      ...(image === undefined ? {} : { image }),
      limits: { cellTimeoutMs: NOTEBOOK_TIMEOUT_MS },
      signal: interrupts.signal,
    });
    let executed: Notebook;
    try {
      const result = await session.execute(
        executeNotebookCode(withoutOutputs(recorded), start.limits.cellTimeoutMs),
        {
          timeoutMs: NOTEBOOK_TIMEOUT_MS,
          signal: interrupts.signal,
        },
      );
      if (result.status !== 'ok') {
        const detail = result.error ? `${result.error.name}: ${result.error.value}` : result.status;
        throw new WorkspaceError(
          `The notebook could not be executed in the sandbox (${detail}).`,
          'Run `datalyst doctor`; the stderr of the sandbox follows.\n' + result.stderr.text.slice(-2000),
        );
      }
      const [file] = await session.readFiles([EXECUTED_NAME], { maxTotalBytes: MAX_EXECUTED_NOTEBOOK_BYTES });
      if (!file)
        throw new WorkspaceError(
          'The executed notebook was not written in the sandbox.',
          'Run `datalyst doctor`.',
        );
      // Written by code in the sandbox: checked like any other boundary.
      executed = notebookSchema.parse(JSON.parse(Buffer.from(file.bytes).toString('utf8')));
    } finally {
      await session.close();
    }
    const executedPath = path.join(runDir, 'analysis.executed.ipynb');
    await writeFile(executedPath, `${JSON.stringify(executed, null, 1)}\n`);
    const comparison = compareNotebooks(recorded, executed);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    out(`Executed in ${seconds} s: ${displayPath(executedPath, context.cwd)}`);
    for (const difference of comparison.differences) {
      out(
        `${style.red('≠')} ${difference.cellId}: ${difference.parts.join(', ')} differ${difference.parts.length === 1 ? 's' : ''}`,
      );
      if (difference.example) {
        out(`    recorded: ${difference.example.recorded}`);
        out(`    re-run:   ${difference.example.rerun}`);
      }
    }
    for (const cellId of comparison.missing) out(`${style.red('≠')} ${cellId}: not in the executed notebook`);
    const same = comparison.compared - comparison.differences.length;
    out(
      `${same} of ${comparison.compared} executed cell${comparison.compared === 1 ? '' : 's'} gave the recorded outputs${comparison.differences.length + comparison.missing.length > 0 ? `; ${comparison.differences.length + comparison.missing.length} differ` : ''}.`,
    );
    return comparison.differences.length + comparison.missing.length === 0
      ? ExitCode.answered
      : ExitCode.notAnswered;
  } catch (error) {
    printError(context, error);
    return exitCodeForError(error);
  } finally {
    interrupts.dispose();
  }
}

/**
 * What the run recorded of its workspace and limits: a run's trace, or for a
 * deep analysis (deep.json) its first sub-analysis's (they all read the same
 * workspace with the same limits; its notebook runs their cells in one kernel).
 */
async function recordedStart(runDir: string): Promise<RunStartRecord> {
  const [{ readDeepRecord }, { readTrace }] = await Promise.all([
    import('../../deep/index.ts'),
    import('../../trace/reader.ts'),
  ]);
  const deep = await readDeepRecord(runDir);
  let traceDir = runDir;
  if (deep !== null) {
    const first = deep.subAnalyses.find((sub) => sub.runDir !== null)?.runDir;
    if (first === undefined || first === null)
      throw new TraceError(
        `The deep analysis in ${runDir} ran no sub-analysis: its notebook has no cells to run.`,
      );
    traceDir = path.join(runDir, first);
  }
  const trace = await readTrace(await traceFile(traceDir));
  const start = trace.records.find((record): record is RunStartRecord => record.type === 'run-start');
  if (!start) throw new TraceError(`The trace in ${traceDir} has no run-start record.`);
  return start;
}

async function traceFile(runDir: string): Promise<string> {
  for (const name of ['trace.jsonl', 'trace.json']) {
    const candidate = path.join(runDir, name);
    if (
      await stat(candidate).then(
        (info) => info.isFile(),
        () => false,
      )
    )
      return candidate;
  }
  throw new TraceError(`The folder ${runDir} holds no trace.jsonl or trace.json.`);
}

/** Why a folder has no analysis.ipynb, with the fix that works for it: no such folder, a file, not a run folder, or a run whose notebook was not written. */
async function missingNotebookError(runDir: string, target: string, cause: unknown): Promise<ConfigError> {
  const info = await stat(runDir).catch(() => null);
  const runFolderFix =
    'Give the run folder `datalyst analyze` wrote: the folder of the report.html it printed.';
  if (info === null) return new ConfigError(`There is no folder ${runDir}.`, runFolderFix, cause);
  if (!info.isDirectory())
    return new ConfigError(`${runDir} is a file, not a run folder.`, runFolderFix, cause);
  const recorded = await Promise.all(
    ['trace.jsonl', 'trace.json', 'deep.json'].map((name) =>
      stat(path.join(runDir, name)).then(
        (found) => found.isFile(),
        () => false,
      ),
    ),
  );
  if (!recorded.includes(true))
    return new ConfigError(
      `${runDir} is not a run folder: it has no analysis.ipynb, trace.jsonl, trace.json or deep.json.`,
      runFolderFix,
      cause,
    );
  return new ConfigError(
    `There is no analysis.ipynb in ${runDir}.`,
    `Render it with \`datalyst report ${target} --format ipynb\`.`,
    cause,
  );
}

/** Input files that are gone or changed since the run: their outputs will differ, and that is why. */
async function workspaceChanges(workspaceDir: string, start: RunStartRecord): Promise<string[]> {
  const info = await stat(workspaceDir).catch(() => null);
  if (!info?.isDirectory())
    throw new WorkspaceError(
      `The workspace ${workspaceDir} is not there.`,
      'Pass the folder that holds the run’s data files with --workspace.',
    );
  const lines: string[] = [];
  for (const file of start.workspace.files) {
    const bytes = await readFile(path.join(workspaceDir, file.path)).catch(() => null);
    if (bytes === null) lines.push(`${file.path} is missing from the workspace.`);
    else if (createHash('sha256').update(bytes).digest('hex') !== file.sha256)
      lines.push(`${file.path} changed since the run (its SHA-256 differs).`);
  }
  return lines;
}

/** nbclient re-executes every cell: the recorded outputs need not travel into the sandbox. */
function withoutOutputs(notebook: Notebook): Notebook {
  return {
    ...notebook,
    cells: notebook.cells.map((cell) =>
      cell.cell_type === 'code' ? { ...cell, outputs: [], execution_count: null } : cell,
    ),
  };
}

/**
 * The cell that runs the notebook inside the sandbox with nbclient (its
 * documented API; it has no CLI): every cell runs even after an error
 * (`allow_errors`), cells tagged skip-execution are skipped, each cell has
 * the run's cell time limit. Jupyter's runtime and config folders go to a
 * temporary folder: the sandbox's home is read-only.
 */
function executeNotebookCode(notebook: Notebook, cellTimeoutMs: number): string {
  const payload = Buffer.from(JSON.stringify(notebook)).toString('base64');
  return [
    'import base64, os, tempfile',
    '_datalyst_home = tempfile.mkdtemp()',
    "for _name in ('JUPYTER_RUNTIME_DIR', 'JUPYTER_DATA_DIR', 'JUPYTER_CONFIG_DIR', 'IPYTHONDIR', 'MPLCONFIGDIR'):",
    '    os.environ[_name] = os.path.join(_datalyst_home, _name.lower())',
    'import nbformat',
    'from nbclient import NotebookClient',
    `_notebook = nbformat.reads(base64.b64decode('${payload}').decode('utf-8'), as_version=4)`,
    `NotebookClient(_notebook, timeout=${Math.ceil(cellTimeoutMs / 1000)}, kernel_name='python3', allow_errors=True, resources={'metadata': {'path': '.'}}).execute()`,
    `nbformat.write(_notebook, '${EXECUTED_NAME}')`,
  ].join('\n');
}
