import { isSameOrInside } from '../../util/path-inside.ts';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { modelProfileNames, sandboxBackendNames } from '../../config/config-file.ts';
import type { AnalyzeSettings } from '../../config/index.ts';
import { CancelledError, ConfigError, DatalystError } from '../../errors/index.ts';
import type { AnalysisResult, RerunResult } from '../../index.ts';
import type { CliContext } from '../cli-context.ts';
import { loadCommandSettings } from '../command-settings.ts';
import { cliFailure, jsonLineWriter } from '../cli-failure.ts';
import { ExitCode, exitCodeHelpFor } from '../exit-codes.ts';
import { handleCommandInterrupts } from '../command-interrupts.ts';
import { claimOutDir, displayPath, releaseUnusedOutDir, type ClaimedOutDir } from '../output-dir.ts';
import type { ExitCodeSink } from '../program.ts';
import type { ProgressRenderer } from '../progress-renderer.ts';
import type { WorkspaceCheck } from '../workspace-check.ts';
import {
  checkRunWorkspace,
  collect,
  describeWorkspace,
  makeRenderer,
  preflightRun,
  runOptionsFor,
  writeReport,
} from './analyze.ts';
import { earlyRunChecks } from '../early-run-checks.ts';

const rerunHelp = `
Runs the recorded cells of an earlier run again, in order, on the files of
<new-workspace> (the same file names as the earlier workspace; a missing file
that the earlier run read as data is an error that names it, a text file it
did not read may be left out), in a fresh sandbox, with no model. Writes a NEW
run folder (default runs/<time>-<workspace>) with its own trace, report,
charts and provenance; the earlier run and the workspace are only read.

The answer is the earlier one with every number it took from an output taken
again from the same place in the new outputs (the same cell, the sentence the
answer quotes with the same words, the same number in it), written as the new
output prints it (rounded only where the earlier answer had rounded); a count
up to 10 is taken only from the line whose words around it are the answer's.
A number whose place is gone, or whose sentence now has other words ("highest
on Thu" is now "highest on Wed"), is kept and marked [stale]; one that no
output ever printed is marked [not grounded]; one whose printed sign flipped
where the answer wrote none is the new value with its sign, marked [sign
changed] (the words around it may say the opposite). With --rewrite-answer a
model (--model, the config file or DATALYST_MODEL) gets the question, the
earlier answer and the new outputs in one turn and writes the answer instead.

A cell that ran in the earlier run and fails on the new data (a renamed
column, say) is shown in the report with its error; the cells after it are
not run, and the run ends "rerun-cell-failed". Code that finds its columns by
itself raises no error on a rename: when the answer names a column (in
backticks) that the new data lacks and no new output prints, the cell that
printed it before counts as the failed one, and the run ends
"rerun-cell-failed" too.

Examples:
  $ datalyst rerun runs/20260101-120000-sales data/sales-q2
  $ datalyst rerun runs/20260101-120000-sales data/sales-q2 -o runs/sales-q2
  $ datalyst rerun runs/20260101-120000-sales data/sales-q2 --rewrite-answer --model gpt-4o-mini
  $ datalyst rerun runs/20260101-120000-sales data/sales-q2 --json > rerun.jsonl

--json writes one JSON object per line on stdout, as \`analyze --json\` does
(schemas/json-lines.schema.json): the run's events, then a "rerun-summary"
line (each recorded cell's status, the failed cell, each number of the
earlier answer and what became of it: updated, unchanged, stale, not-grounded
or sign-changed), then "report-end"; warnings and
errors go to stderr, and a failure before the run is a "cli-error" line.

${exitCodeHelpFor([
  [ExitCode.answered, 'every cell ran; the answer was carried over (or rewritten)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [
    ExitCode.usage,
    'usage or input error (run folder, missing file, output folder, no model for --rewrite-answer)',
  ],
  [
    ExitCode.notAnswered,
    'a recorded cell failed on the new data (rerun-cell-failed), or the earlier run had no answer to carry over (no-progress)',
  ],
  [ExitCode.sandboxUnavailable, 'sandbox unavailable (Docker engine, runner image, local Python)'],
  [ExitCode.modelUnavailable, 'model unavailable (--rewrite-answer)'],
  [ExitCode.cancelled, 'cancelled (Ctrl-C)'],
])}`;

// What commander hands over; checked because it is typed `Record<string, unknown>`.
const rerunOptionsSchema = z.object({
  out: z.string().optional(),
  format: z.array(z.string()).optional(),
  rewriteAnswer: z.boolean().optional(),
  model: z.string().optional(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  profile: z.string().optional(),
  cellTimeout: z.string().optional(),
  memory: z.string().optional(),
  cpus: z.string().optional(),
  sandbox: z.string().optional(),
  runtime: z.string().optional(),
  maxWorkspaceMb: z.string().optional(),
  quiet: z.boolean().optional(),
  json: z.boolean().optional(),
  config: z.string().optional(),
});
type RerunCommandOptions = z.infer<typeof rerunOptionsSchema>;

export function defineRerunCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('rerun')
    .description('Run a recorded analysis again on new data and write a new run with its report.')
    .argument('<run-folder>', 'the earlier run folder (holds trace.jsonl)')
    .argument('<new-workspace>', 'folder with the new data files, under the earlier names')
    .option('-o, --out <dir>', 'new run folder; must be new or empty (default: runs/<time>-<workspace>)')
    .option(
      '--format <formats>',
      'report formats: html, md, ipynb, json, pdf; repeat or comma-separate (default: all but pdf)',
      collect,
    )
    .option('--rewrite-answer', 'let the model rewrite the answer from the new outputs (one turn)')
    .option('--model <name>', 'model for --rewrite-answer (env DATALYST_MODEL)')
    .option('--base-url <url>', 'OpenAI-compatible endpoint (env DATALYST_BASE_URL, OPENAI_BASE_URL)')
    .option('--api-key <key>', 'API key for the endpoint (env DATALYST_API_KEY, OPENAI_API_KEY)')
    .addOption(new Option('--profile <profile>', 'protocol profile of the model').choices(modelProfileNames))
    .option('--cell-timeout <duration>', 'limit per code cell, e.g. 90s, 5m (default: 120s)')
    .option('--memory <size>', 'sandbox memory, e.g. 2g, 512m (default: 2g)')
    .option('--cpus <n>', 'sandbox CPU cores (default: 1.5)')
    .addOption(
      new Option('--sandbox <backend>', 'sandbox backend; local: NO isolation (default: docker)').choices(
        sandboxBackendNames,
      ),
    )
    .option('--runtime <name>', 'container runtime: runc, or runsc for gVisor (default: runc)')
    .option('--max-workspace-mb <mb>', 'refuse larger workspaces (default: 2048)')
    .option('--quiet', 'print only warnings, errors and where the report is')
    .option('--json', 'JSON lines on stdout instead of progress')
    .option(
      '--config <file>',
      'config file (default: the nearest datalyst.config.json, here or in a folder above)',
    )
    .addHelpText('after', rerunHelp)
    .action(async (runFolder: string, workspace: string, rawOptions: unknown) => {
      const options = rerunOptionsSchema.parse(rawOptions);
      setExitCode(await runRerun(context, runFolder, workspace, options));
    });
}

async function runRerun(
  context: CliContext,
  runFolder: string,
  workspace: string,
  options: RerunCommandOptions,
): Promise<number> {
  const renderer = makeRenderer(context, options);
  const json = options.json === true;
  const writeJson = jsonLineWriter(context);
  const fail = cliFailure(context, () => renderer, json);
  let settings: AnalyzeSettings;
  let check: WorkspaceCheck;
  try {
    settings = await loadCommandSettings(context, workspace, undefined, options);
    if (options.rewriteAnswer === true && settings.model.kind !== 'endpoint') {
      throw new ConfigError(
        '--rewrite-answer needs a language model, and none is configured.',
        'Name one with --model <name> [--base-url <url>], "model" in the config file, or DATALYST_MODEL; or leave --rewrite-answer out to carry the numbers over without a model.',
      );
    }
    // Refused here too, before the folder is made: not even an empty folder may appear in the earlier run.
    if (isSameOrInside(settings.outDir, path.resolve(context.cwd, runFolder))) {
      throw new ConfigError(
        `The new run folder ${settings.outDir} is the earlier run's folder or inside it; a re-run never changes the earlier run.`,
        'Pass another folder with -o.',
      );
    }
    check = await checkRunWorkspace(settings);
    describeWorkspace(renderer, check, context, json ? writeJson : null);
    renderer.info(
      `Re-running ${displayPath(path.resolve(context.cwd, runFolder), context.cwd)} on it, with no model.`,
    );
    await earlyRunChecks(context, renderer, settings, 'recorded');
  } catch (error) {
    return fail(error);
  }

  const [{ countNumbers, rerunAnalysis }, { ChartPool, renderRunFolder }, { createModel }] =
    await Promise.all([
      import('../../agent/index.ts'),
      import('../../report/index.ts'),
      import('../model-factory.ts'),
    ]);
  const interrupts = handleCommandInterrupts(
    context,
    renderer,
    'stopping the running cell, then writing a partial report',
  );
  const charts = new ChartPool({ cache: true });
  const chartPng = settings.formats.some((format) => format === 'md' || format === 'ipynb');
  let claimed: ClaimedOutDir | null = null;
  let started = false;
  try {
    let result: RerunResult;
    try {
      // The cheap checks first: the new run folder is free (here), the run folder and its trace, the
      // new workspace's files (the engine's, before prepareSandbox); then Docker and the runner image.
      claimed = await claimOutDir(settings.outDir, settings.outDirIsDefault);
      const outDir = claimed.dir;
      charts.persistTo(path.join(outDir, '.chart-cache'));
      const { createSandbox, sandbox } = runOptionsFor(settings, context, undefined, check);
      result = await rerunAnalysis({
        runDir: path.resolve(context.cwd, runFolder),
        workspaceDir: settings.workspaceDir,
        outDir,
        createSandbox,
        sandbox,
        prepareSandbox: (signal) =>
          preflightRun(
            context,
            settings,
            renderer,
            json ? writeJson : null,
            signal,
            options.rewriteAnswer === true,
          ),
        ...(options.rewriteAnswer === true ? { rewriteAnswer: { model: createModel(settings.model) } } : {}),
        signal: interrupts.signal,
        onEvent: (event) => {
          if (event.type === 'run-start') {
            started = true;
            charts.warm();
            renderer.info('Starting the sandbox and profiling the new workspace…');
          }
          if (json) {
            // The re-run's own fields of the result are the rerun-summary line's (after run-end).
            writeJson(
              event.type === 'run-end' ? { type: 'run-end', result: analysisResultOf(event.result) } : event,
            );
          } else if (event.type !== 'notice' || event.kind !== 'rerun') {
            // The re-run's own notices are for the report; the summary below says the same for a terminal.
            renderer.handle(event);
          }
          if (event.type === 'execution-end') {
            for (const chart of event.result.charts)
              void charts.render(chart.spec, { png: chartPng }).catch(() => undefined);
          }
        },
      });
    } catch (error) {
      // Refused before the run began (a missing run folder or file, Docker down): the folders made for it go again.
      if (claimed !== null && !started) await releaseUnusedOutDir(claimed);
      if (interrupts.interrupted && !DatalystError.isInstance(error)) return fail(new CancelledError(error));
      return fail(error);
    }
    describeRerun(renderer, result, countNumbers(result.numbers));
    if (json) {
      const { rerunOf, cells, failedCell, answerSource, numbers } = result;
      writeJson({ type: 'rerun-summary', rerunOf, cells, failedCell, answerSource, numbers });
    }
    const render = (dir: string) =>
      renderRunFolder(dir, {
        formats: settings.formats,
        chartPool: charts,
        ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
      });
    return await writeReport(context, result, renderer, render, json ? writeJson : null);
  } finally {
    interrupts.dispose();
    renderer.close();
    await charts.close();
  }
}

/** What the re-run did, before the report lines: failed cell, numbers carried over (`counts`: the library's sentence), stale ones named. */
function describeRerun(renderer: ProgressRenderer, result: RerunResult, counts: string): void {
  const ran = result.cells.filter((cell) => cell.status !== 'not-run').length;
  renderer.info(`Re-ran ${ran} of ${result.cells.length} recorded cells of run ${result.rerunOf.runId}.`);
  if (result.failedCell !== null) {
    renderer.warn(
      `${result.failedCell.outputId} failed on the new data: ${result.failedCell.detail ?? result.failedCell.status} (rerun-cell-failed).`,
    );
  }
  if (result.answerSource === 'rewritten') {
    renderer.info('The answer was rewritten by the model from the new outputs.');
    return;
  }
  if (result.answerSource === 'none') return;
  renderer.info(counts);
  for (const number of result.numbers.filter((entry) => entry.status === 'sign-changed'))
    renderer.warn(
      `sign changed: ${number.oldText} — ${number.reason ?? ''} (marked [sign changed] in the report)`,
    );
  const stale = result.numbers.filter((number) => number.status === 'stale');
  for (const number of stale.slice(0, 10))
    renderer.warn(`stale: ${number.oldText} — ${number.reason ?? 'not placed in the new outputs'}`);
  if (stale.length > 10)
    renderer.warn(`stale: … and ${stale.length - 10} more (marked [stale] in the report)`);
}

/** The fields every run's result has (the run-end line of `--json`, as `analyze` writes it, with its error). */
function analysisResultOf(result: AnalysisResult): AnalysisResult {
  const { runId, outDir, tracePath, answer, termination, error, rounds, usage, durationMs } = result;
  return {
    runId,
    outDir,
    tracePath,
    answer,
    termination,
    ...(error === undefined ? {} : { error }),
    rounds,
    usage,
    durationMs,
  };
}
