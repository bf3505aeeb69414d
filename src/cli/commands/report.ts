import { existsSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { parseFormats } from '../../config/analyze-settings.ts';
import {
  defaultReportFormatNames,
  reportFormatNames,
  type ReportFormatName,
} from '../../config/config-file.ts';
import { TraceError } from '../../errors/index.ts';
import { readTrace } from '../../trace/reader.ts';
import type { CliContext } from '../cli-context.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { prepareOutDir } from '../output-dir.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { ProgressRenderer } from '../progress-renderer.ts';
import { describeRenderedReport, mapWriteFailure } from '../report-summary.ts';
import { colorEnabled } from '../terminal-style.ts';
import type { ChartPool } from '../../report/chart-pool.ts';

const reportHelp = `
<trace> is a run folder (with trace.jsonl or trace.json) or a trace file.
A deep analysis's folder (with deep.json) gets its deep report (html, md, ipynb,
pdf; json is its deep.json).
The report is written next to the trace unless --out names another folder
(which must be new or empty). A trace cut short by a crash or Ctrl-C still
renders: the report says the run did not finish.

Examples:
  $ datalyst report runs/20250314-093015-sales
  $ datalyst report runs/20250314-093015-sales/trace.jsonl --format html
  $ datalyst report runs/20250314-093015-sales --out /tmp/sales-report

${exitCodeHelpFor([
  [ExitCode.answered, 'the report was written (whatever the run it shows ended with)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [
    ExitCode.usage,
    'not a trace or run folder, a bad option, an --out folder that is not new or empty, a write failure',
  ],
  [ExitCode.sandboxUnavailable, 'Chromium, which prints --format pdf, is missing or did not start'],
])}`;

const reportOptionsSchema = z.object({
  out: z.string().optional(),
  format: z.array(z.string()).optional(),
  quiet: z.boolean().optional(),
});
type ReportCommandOptions = z.infer<typeof reportOptionsSchema>;

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function defineReportCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('report')
    .description('Render the report of a run again from its trace.')
    .argument('<trace>', 'run folder or trace file (trace.jsonl, trace.json)')
    .option('--out <dir>', 'write the report here instead of next to the trace')
    .option(
      '--format <formats>',
      `formats: ${reportFormatNames.join(', ')}; repeat or comma-separate (default: all but pdf, which needs Chromium)`,
      collect,
    )
    .option('--quiet', 'print only errors and where the report is')
    .addHelpText('after', reportHelp)
    .action(async (trace: string, rawOptions: unknown) => {
      setExitCode(await runReport(context, trace, reportOptionsSchema.parse(rawOptions)));
    });
}

/** The run folder a target names (itself, or the folder of a trace file), before any check. */
function runFolderOf(target: string): string {
  try {
    return statSync(target).isFile() ? path.dirname(target) : target;
  } catch {
    return target;
  }
}

/** A run folder or a trace file, resolved to the trace file and the folder that holds its artifacts. */
async function locateTrace(target: string): Promise<{ tracePath: string; runDir: string }> {
  const info = await stat(target).catch((error: unknown) => {
    throw new TraceError(`There is no run folder or trace file at ${target}.`, error);
  });
  if (info.isFile()) {
    if (!/\.jsonl?$/i.test(target))
      throw new TraceError(`${target} is neither a run folder nor a trace (trace.jsonl or trace.json).`);
    return { tracePath: target, runDir: path.dirname(target) };
  }
  for (const name of ['trace.jsonl', 'trace.json']) {
    const candidate = path.join(target, name);
    if (
      await stat(candidate).then(
        (found) => found.isFile(),
        () => false,
      )
    )
      return { tracePath: candidate, runDir: target };
  }
  throw new TraceError(`The folder ${target} holds no trace.jsonl or trace.json.`);
}

async function runReport(
  context: CliContext,
  target: string,
  options: ReportCommandOptions,
): Promise<number> {
  const color = colorEnabled(context.stdout.isTTY, context.env);
  const renderer = new ProgressRenderer({
    write: (text) => context.stdout.write(text),
    live: false,
    color,
    quiet: options.quiet === true,
  });
  // Loaded here, not with the CLI: only this command draws charts. The chart
  // workers start first, while the report module loads and the trace is read:
  // they take about half a second.
  const { ChartPool } = await import('../../report/chart-pool.ts');
  // Cached in the run folder: charts drawn while the run went on, or by an earlier report, are not
  // drawn again; workers start early only when nothing was drawn before (they would take CPU from the report).
  const charts = new ChartPool({ cache: true });
  const cacheDir = path.join(runFolderOf(path.resolve(context.cwd, target)), '.chart-cache');
  charts.persistTo(cacheDir);
  if (!existsSync(cacheDir)) charts.warm();
  try {
    const { renderReport } = await import('../../report/index.ts');
    const formats =
      options.format === undefined ? [...defaultReportFormatNames] : parseFormats(options.format);
    const resolvedTarget = path.resolve(context.cwd, target);
    if (existsSync(path.join(resolvedTarget, 'deep.json')))
      return await renderDeepReport(context, renderer, resolvedTarget, formats, options, charts);
    const { tracePath, runDir } = await locateTrace(resolvedTarget);
    charts.persistTo(path.join(runDir, '.chart-cache'));
    const trace = await readTrace(tracePath);
    if (trace.partial)
      renderer.warn(
        'The trace has no end (the run crashed, was killed, or is still going); the report shows what it holds.',
      );
    if (trace.truncatedLastLine)
      renderer.warn('The last line of the trace was cut off mid-record and was left out.');
    let outDir = runDir;
    if (options.out !== undefined && path.resolve(context.cwd, options.out) !== runDir) {
      outDir = await prepareOutDir(path.resolve(context.cwd, options.out), false);
    }
    const rendered = await renderReport(trace, {
      outDir,
      formats,
      artifactsDir: path.join(runDir, 'artifacts'),
      chartPool: charts,
      ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
    });
    describeRenderedReport(renderer, rendered.files, rendered, context.cwd);
    return ExitCode.answered;
  } catch (error) {
    const mapped = mapWriteFailure(error);
    printError(context, mapped);
    return exitCodeForError(mapped);
  } finally {
    await charts.close();
  }
}

/** A deep analysis's folder: its report from deep.json and the sub-analyses' traces, in the formats asked for. */
async function renderDeepReport(
  context: CliContext,
  renderer: ProgressRenderer,
  runDir: string,
  formats: readonly ReportFormatName[],
  options: ReportCommandOptions,
  charts: ChartPool,
): Promise<number> {
  const { renderDeepRunFolder } = await import('../../report/index.ts');
  let outDir = runDir;
  if (options.out !== undefined && path.resolve(context.cwd, options.out) !== runDir) {
    outDir = await prepareOutDir(path.resolve(context.cwd, options.out), false);
  }
  const rendered = await renderDeepRunFolder(runDir, {
    outDir,
    formats,
    chartPool: charts,
    ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
  });
  if (rendered.runState === 'stopped')
    renderer.warn(
      'deep.json has no end: the run was stopped before it ended (its process is gone); the report shows what it had recorded.',
    );
  else if (rendered.runState === 'running')
    renderer.warn(
      'deep.json has no end: the run is still going; the report shows what it has recorded so far.',
    );
  else if (rendered.runState === 'unknown')
    renderer.warn(
      'deep.json has no end (the run is still going, or its process died); the report shows what it holds.',
    );
  describeRenderedReport(renderer, rendered.files, rendered, context.cwd);
  return ExitCode.answered;
}
