import path from 'node:path';
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_INSTRUCTION } from '../../config/analyze-settings.ts';
import { modelProfileNames, sandboxBackendNames } from '../../config/config-file.ts';
import { CancelledError, ConfigError, DatalystError } from '../../errors/index.ts';
import type { AnalyzeSettings } from '../../config/index.ts';
import type { AnalysisResult, AnalyzeOptions, RenderedReport, SandboxLimits } from '../../index.ts';
import type { CliContext } from '../cli-context.ts';
import { loadCommandSettings } from '../command-settings.ts';
import { cliFailure, jsonLineWriter, type JsonLineWriter } from '../cli-failure.ts';
import { ExitCode, exitCodeForError, exitCodeForTermination, exitCodeHelpFor } from '../exit-codes.ts';
import { formatBytes } from '../format.ts';
import { handleCommandInterrupts } from '../command-interrupts.ts';
import { checkModelBeforeRun } from '../model-preflight.ts';
import { findOwnOutput } from '../own-output.ts';
import type { toJsonLine } from '../json-lines.ts';
import { checkOutDir, displayPath, prepareOutDir } from '../output-dir.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import { ProgressRenderer } from '../progress-renderer.ts';
import { describeRenderedReport, mapWriteFailure } from '../report-summary.ts';
import { colorEnabled, liveProgressEnabled } from '../terminal-style.ts';
import { checkWorkspace, type WorkspaceCheck } from '../workspace-check.ts';
import { drawRunCharts, reportNeedsChartPng, type RunCharts } from '../run-charts.ts';
import { earlyRunChecks } from '../early-run-checks.ts';

const analyzeHelp = `
Without an instruction: "${DEFAULT_INSTRUCTION}"
Without a model (no --model, no "model" in the config file, no DATALYST_MODEL)
the built-in offline analyst runs: a rule-based exploratory analysis, no
language model, labelled as such in the report.

Each run writes a new folder (default runs/<time>-<workspace>): trace.jsonl
as it goes, then report.html, report.md (+ assets/), analysis.ipynb,
trace.json and artifacts/. An existing non-empty --out is refused.

Settings come from the options, then the config file (--config, DATALYST_CONFIG
or the nearest datalyst.config.json here or above; unknown keys are errors,
"did you mean" says which was meant), then the environment:
  DATALYST_MODEL, DATALYST_PROFILE      model name, protocol profile
  DATALYST_BASE_URL / OPENAI_BASE_URL   OpenAI-compatible endpoint
  DATALYST_API_KEY / OPENAI_API_KEY     its API key (never read from the config file)
  DATALYST_SANDBOX, DATALYST_IMAGE      sandbox backend, runner image
  DATALYST_RUNTIME                      runc or runsc (gVisor; datalyst setup --gvisor)
  DATALYST_CELL_TIMEOUT_MS, DATALYST_MEMORY_MB, DATALYST_CPUS
  NO_COLOR                              no colours

Examples:
  $ datalyst analyze workspace-examples/sales
  $ datalyst analyze workspace-examples/sales "Which regions drive revenue?" --offline
  $ OPENAI_API_KEY=sk-... datalyst analyze data/ --model gpt-4o-mini
  $ datalyst analyze data/ --base-url http://localhost:8000/v1 --model DeepAnalyze-8B   (vLLM)
  $ datalyst analyze data/ --base-url http://localhost:11434/v1 --model qwen2.5:7b      (Ollama)
  $ datalyst analyze data/ --format html,md --out reports/q1 --max-rounds 12
  $ datalyst analyze data/ --json > events.jsonl

--deep writes a brief, splits it into sub-questions answered by sub-analyses
in sandboxes of their own (--concurrency at once), banks their findings as
evidence and writes an outline's sections from it: deep.json in the run
folder, one run folder per sub-analysis in sub/. --deadline then ends the
research and forces the report from what was found.

--json writes one JSON object per line on stdout: the agent's events (figure
bytes left out), plus "workspace-check", "report-end" and "cli-error" lines.

${exitCodeHelpFor([
  [ExitCode.answered, 'answered (the run ended with an answer)'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [ExitCode.usage, 'usage or input error (arguments, config, workspace, output folder)'],
  [
    ExitCode.notAnswered,
    'ran but did not answer (max rounds, deadline, context budget, no progress, no readable data; with --continue, the model asked)',
  ],
  [ExitCode.sandboxUnavailable, 'sandbox unavailable (Docker engine, runner image, local Python)'],
  [ExitCode.modelUnavailable, 'model unavailable (endpoint unreachable, model not served)'],
  [ExitCode.cancelled, 'cancelled (Ctrl-C)'],
])}`;

// What commander hands over; checked because it is typed `Record<string, unknown>`.
export const analyzeOptionsSchema = z.object({
  model: z.string().optional(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  profile: z.string().optional(),
  offline: z.boolean().optional(),
  out: z.string().optional(),
  format: z.array(z.string()).optional(),
  maxRounds: z.string().optional(),
  cellTimeout: z.string().optional(),
  deadline: z.string().optional(),
  memory: z.string().optional(),
  cpus: z.string().optional(),
  sandbox: z.string().optional(),
  runtime: z.string().optional(),
  maxWorkspaceMb: z.string().optional(),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
  config: z.string().optional(),
  continue: z.string().optional(),
  deep: z.boolean().optional(),
  subAnalyses: z.string().optional(),
  concurrency: z.string().optional(),
});
export type AnalyzeCommandOptions = z.infer<typeof analyzeOptionsSchema>;

export const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

export function defineAnalyzeCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('analyze')
    .description('Analyse a workspace folder and write a report.')
    // Optional for commander so that `--continue <run>` alone reaches the action and is told what is
    // missing (the question, not a workspace); without --continue the action refuses it as commander would.
    .usage('[options] <workspace> [instruction]')
    .argument('[workspace]', 'folder of data files (CSV, Excel, JSON, SQLite, Parquet)')
    .argument('[instruction]', 'what to find out', undefined)
    .option('--model <name>', 'model name at the endpoint (env DATALYST_MODEL)')
    .option(
      '--base-url <url>',
      'OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (env DATALYST_BASE_URL, OPENAI_BASE_URL)',
    )
    .option('--api-key <key>', 'API key for the endpoint (env DATALYST_API_KEY, OPENAI_API_KEY)')
    // commander's choices() for closed sets: the usage error names the allowed values. Numbers, sizes
    // and durations stay with resolveAnalyzeSettings, whose errors also cover the config file and the
    // environment; the environment is read in one place (config/env.ts), not by commander's env(),
    // which would rank it above the config file.
    .addOption(
      new Option(
        '--profile <profile>',
        'protocol profile (default: deepanalyze for DeepAnalyze models, else chat)',
      ).choices(modelProfileNames),
    )
    .option('--offline', 'use the built-in offline analyst, no language model')
    .option('--out <dir>', 'run folder; must be new or empty (default: runs/<time>-<workspace>)')
    .option(
      '--format <formats>',
      'report formats: html, md, ipynb, json, pdf; repeat or comma-separate (default: all but pdf)',
      collect,
    )
    .option('--max-rounds <n>', 'model turns at most (default: 30)')
    .option('--cell-timeout <duration>', 'limit per code cell, e.g. 90s, 5m (default: 120s)')
    .option(
      '--deadline <duration>',
      'limit for the whole run, e.g. 30m, 1h; a bare number is minutes (default: none)',
    )
    .option('--memory <size>', 'sandbox memory, e.g. 2g, 512m (default: 2g)')
    .option('--cpus <n>', 'sandbox CPU cores (default: 1.5)')
    .addOption(
      new Option('--sandbox <backend>', 'sandbox backend; local: NO isolation (default: docker)').choices(
        sandboxBackendNames,
      ),
    )
    .option('--runtime <name>', 'container runtime: runc, or runsc for gVisor (default: runc)')
    .option('--max-workspace-mb <mb>', 'refuse larger workspaces (default: 2048)')
    .option('--json', 'JSON lines on stdout instead of progress')
    .option('--quiet', 'print only warnings, errors and where the report is')
    .option(
      '--config <file>',
      'config file (default: the nearest datalyst.config.json, here or in a folder above)',
    )
    .option(
      '--continue <run-folder>',
      'add a question to an earlier run or chat: `analyze --continue <run-folder> "<question>"` (its cells are replayed first)',
    )
    .option('--deep', 'deep analysis: parallel sub-analyses, an outline')
    .option('--sub-analyses <n>', 'with --deep: sub-analyses at most (default: 4)')
    .option('--concurrency <n>', 'with --deep: sub-analyses at once (default: cores)')
    .addHelpText('after', analyzeHelp)
    .action(
      async (
        workspace: string | undefined,
        instruction: string | undefined,
        rawOptions: unknown,
        command: Command,
      ) => {
        const options = analyzeOptionsSchema.parse(rawOptions);
        if (options.continue !== undefined && options.deep === true) {
          // A deep run is not a thread: refused before anything runs, rather than one flag quietly winning.
          const error = new ConfigError(
            '--deep and --continue do not go together: a deep analysis is not a thread that takes another question.',
            'Start a new deep run with `analyze <workspace> "<question>" --deep`, or continue an ordinary run (or one sub-analysis of a deep run, sub/S1) without --deep.',
          );
          printError(context, error);
          setExitCode(exitCodeForError(error));
          return;
        }
        const deepOnly = [
          ['--sub-analyses', options.subAnalyses],
          ['--concurrency', options.concurrency],
        ].flatMap(([flag, value]) => (value === undefined ? [] : [flag]));
        if (options.deep !== true && deepOnly.length > 0) {
          // Options of a deep analysis only: refused rather than silently ignored by an ordinary run.
          const named = deepOnly.join(' and ');
          const error = new ConfigError(
            `${named} ${deepOnly.length === 1 ? 'is an option' : 'are options'} of a deep analysis: without --deep ${deepOnly.length === 1 ? 'it' : 'they'} would be ignored.`,
            `Add --deep to run a deep analysis (\`analyze <workspace> "<question>" --deep ${deepOnly.map((flag) => `${flag} <n>`).join(' ')}\`), or leave out ${named}.`,
          );
          printError(context, error);
          setExitCode(exitCodeForError(error));
          return;
        }
        if (options.continue !== undefined) {
          if (instruction !== undefined) {
            // Two arguments: a workspace and a question. The run's own workspace would be used, silently.
            const error = new ConfigError(
              `analyze --continue takes only the question: the workspace comes from the run's trace, so "${workspace ?? ''}" would be ignored.`,
              `Run \`datalyst analyze --continue ${options.continue} "<question>"\` without the workspace; to analyse another folder, start a new run with \`datalyst analyze <workspace> "<question>"\`.`,
            );
            printError(context, error);
            setExitCode(exitCodeForError(error));
            return;
          }
          // With --continue the one argument is the question.
          const { runContinue } = await import('./chat.ts');
          setExitCode(await runContinue(context, options.continue, workspace, options));
          return;
        }
        if (workspace === undefined) {
          command.error("error: missing required argument 'workspace'", {
            code: 'commander.missingArgument',
          });
        }
        setExitCode(await runAnalyze(context, workspace, instruction, options));
      },
    );
}

export function makeRenderer(
  context: CliContext,
  options: AnalyzeCommandOptions,
  maxRounds?: number,
  threaded = false,
  offline = false,
): ProgressRenderer {
  // With --json, stdout carries only JSON; people still see warnings and errors on stderr.
  const out = options.json === true ? context.stderr : context.stdout;
  return new ProgressRenderer({
    write: (text) => out.write(text),
    live: options.json !== true && liveProgressEnabled(out.isTTY, context.env),
    color: colorEnabled(out.isTTY, context.env),
    quiet: options.json === true || options.quiet === true,
    ...(out.columns === undefined ? {} : { columns: out.columns }),
    ...(maxRounds === undefined ? {} : { maxRounds }),
    threaded,
    offline,
  });
}

/** The workspace check, said on the terminal (and as a `workspace-check` line under `--json`). */
export function describeWorkspace(
  renderer: ProgressRenderer,
  check: WorkspaceCheck,
  context: CliContext,
  writeJson: JsonLineWriter | null = null,
): void {
  writeJson?.({
    type: 'workspace-check',
    dir: check.dir,
    excluded: check.excluded,
    totalBytes: check.totalBytes,
    dataFiles: check.dataFiles.map((entry) => entry.path),
    skipped: check.skipped.map((entry) => ({ path: entry.path, reason: entry.reason ?? entry.kind })),
  });
  renderer.info(
    `Workspace ${displayPath(check.dir, context.cwd)}: ${check.dataFiles.length} data file${check.dataFiles.length === 1 ? '' : 's'}, ${formatBytes(check.totalBytes)} in all`,
  );
  for (const entry of check.skipped) renderer.warn(`${entry.path}: ${entry.reason ?? entry.kind}; skipped`);
  for (const folder of check.excluded)
    renderer.info(`  ${folder}/ left out: Datalyst's own output (run folders)`);
}

/** The workspace is mounted read-only, outside the working directory: only its size cap is passed on. */
export function sandboxLimitsFor(settings: AnalyzeSettings): Partial<SandboxLimits> {
  return {
    cellTimeoutMs: settings.cellTimeoutMs,
    memoryMb: Math.round(settings.memoryMb),
    cpus: settings.cpus,
    maxWorkspaceMb: settings.maxWorkspaceBytes / 1024 / 1024,
  };
}

/**
 * The workspace check every command that runs an analysis makes: `datalyst
 * analyze .` (or `chat .`) must not read its earlier reports, nor the folder
 * it is writing to.
 */
export async function checkRunWorkspace(settings: AnalyzeSettings): Promise<WorkspaceCheck> {
  const excludeDirs = await findOwnOutput(settings.workspaceDir, {
    outDir: settings.outDir,
    runsDir: settings.outDirIsDefault ? path.dirname(settings.outDir) : null,
  });
  return checkWorkspace(settings.workspaceDir, { maxTotalBytes: settings.maxWorkspaceBytes, excludeDirs });
}

/**
 * What `analyze`, `chat` and `analyze --continue` pass the library alike: the
 * model's profile, the sandbox (backend, image, runtime, limits, the run
 * folders left out of the workspace) and the run bounds. One place, so that a
 * new setting reaches every command.
 */
export function runOptionsFor(
  settings: AnalyzeSettings,
  context: CliContext,
  image: string | undefined,
  check: WorkspaceCheck,
): Pick<AnalyzeOptions, 'createSandbox' | 'sandbox' | 'maxRounds' | 'deadlineMs'> &
  Partial<Pick<AnalyzeOptions, 'profile'>> {
  return {
    ...(settings.model.kind === 'endpoint' ? { profile: settings.model.profile } : {}),
    createSandbox: context.createSandbox,
    sandbox: {
      backend: settings.sandbox,
      ...(image === undefined ? {} : { image }),
      ...(settings.sandbox === 'docker' ? { runtime: settings.runtime } : {}),
      excludeDirs: check.excluded,
      limits: sandboxLimitsFor(settings),
    },
    maxRounds: settings.maxRounds,
    deadlineMs: settings.deadlineMs,
  };
}

/** Pre-flight, before any container or run folder: the model endpoint, then the sandbox. Returns the image. */
export async function preflightRun(
  context: CliContext,
  settings: AnalyzeSettings,
  renderer: ProgressRenderer,
  writeJson: JsonLineWriter | null,
  signal: AbortSignal,
  /** `rerun` asks the model only with --rewrite-answer. */
  checkModel = true,
): Promise<string | undefined> {
  const preflight = (step: string, detail: string) => {
    renderer.info(`  ${detail}`);
    writeJson?.({ type: 'preflight', step, detail });
  };
  if (checkModel && settings.model.kind === 'endpoint') {
    const { detail, warning } = await checkModelBeforeRun(settings.model);
    preflight('model', `Model endpoint: ${detail}.`);
    if (warning !== null) renderer.warn(warning);
  }
  return context.prepareSandbox({
    backend: settings.sandbox,
    image: settings.image,
    limits: { cpus: settings.cpus, memoryMb: settings.memoryMb },
    onProgress: (line) => preflight('sandbox', line),
    signal,
  });
}

async function runAnalyze(
  context: CliContext,
  workspace: string,
  instruction: string | undefined,
  options: AnalyzeCommandOptions,
): Promise<number> {
  const json = options.json === true;
  const writeJson = jsonLineWriter(context);
  let renderer = makeRenderer(context, options);
  const fail = cliFailure(context, () => renderer, json);

  let settings: AnalyzeSettings;
  let check: WorkspaceCheck;
  try {
    settings = await loadCommandSettings(context, workspace, instruction, options);
    renderer = makeRenderer(context, options, settings.maxRounds);
    check = await checkRunWorkspace(settings);
    describeWorkspace(renderer, check, context, json ? writeJson : null);
    if (check.totalBytes > (settings.memoryMb * 1024 * 1024) / 2) {
      renderer.warn(
        `The workspace (${formatBytes(check.totalBytes)}) is copied into the sandbox's memory (--memory ${settings.memoryMb} MB); consider a larger --memory.`,
      );
    }
    if (settings.model.kind === 'offline') {
      if (settings.model.reason === 'no-model-configured') {
        renderer.info(
          'No model configured: using the built-in offline analyst (rule-based, no language model; the report says so).',
        );
        renderer.info(
          '  To use a model: --model <name> [--base-url <url>], or DATALYST_MODEL; see `datalyst analyze --help`.',
        );
      } else {
        renderer.info(
          'Offline: using the built-in analyst (rule-based, no language model; the report says so).',
        );
      }
      if (settings.model.note !== null) renderer.warn(settings.model.note);
    } else {
      renderer.info(
        `Model ${settings.model.id} at ${settings.model.baseUrl ?? 'api.openai.com'} (profile ${settings.model.profile})`,
      );
    }
    await earlyRunChecks(context, renderer, settings, 'generated');
  } catch (error) {
    return fail(error);
  }
  if (options.deep === true) {
    const { runDeepAnalyze } = await import('./analyze-deep.ts');
    return runDeepAnalyze({
      context,
      settings,
      check,
      renderer,
      options,
      writeJson: json ? writeJson : null,
      fail,
    });
  }

  // The agent, the model clients and the report load with this command, not with the CLI.
  const [{ streamAnalysis }, { renderRunFolder }, { createModel }] = await Promise.all([
    import('../../agent/index.ts'),
    import('../../report/index.ts'),
    import('../model-factory.ts'),
  ]);
  const interrupts = handleCommandInterrupts(
    context,
    renderer,
    'stopping the model and the running cell, then writing a partial report',
  );
  // Charts are drawn as the cells make them, while the model thinks, so that
  // the report at the end only assembles them (run-charts.ts). Closed when the command ends.
  let charts: RunCharts | null = null;
  try {
    let result: AnalysisResult | null = null;
    try {
      await checkOutDir(settings.outDir, settings.outDirIsDefault);
      const image = await preflightRun(
        context,
        settings,
        renderer,
        json ? writeJson : null,
        interrupts.signal,
      );
      // After the pre-flight: a run that cannot start leaves no folder behind.
      const outDir = await prepareOutDir(settings.outDir, settings.outDirIsDefault);
      // Charts drawn during the run are kept in the run folder: `datalyst report` on it later draws none again.
      // The workers start now, while the sandbox starts.
      charts = await drawRunCharts({ outDir, png: reportNeedsChartPng(settings.formats), warm: true });
      const model = createModel(settings.model);
      const events = streamAnalysis({
        instruction: settings.instruction,
        workspaceDir: settings.workspaceDir,
        model,
        ...runOptionsFor(settings, context, image, check),
        outDir,
        signal: interrupts.signal,
      });
      for await (const event of events) {
        if (json) writeJson(event);
        else renderer.handle(event);
        // The container starts and the workspace is profiled before the first round (seconds).
        if (event.type === 'run-start') renderer.info('Starting the sandbox and profiling the workspace…');
        charts.observe(event);
        if (event.type === 'run-end') result = event.result;
      }
    } catch (error) {
      // Ctrl-C before the run began (the Docker ping, an image build) may surface as any abort error.
      if (interrupts.interrupted && !DatalystError.isInstance(error)) return fail(new CancelledError(error));
      return fail(error);
    }
    if (result === null || charts === null)
      return fail(new Error('The analysis ended without a run-end event.'));
    const chartPool = charts.pool;
    const render = (outDir: string) =>
      renderRunFolder(outDir, {
        formats: settings.formats,
        chartPool,
        ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
      });
    return await writeReport(context, result, renderer, render, json ? writeJson : null);
  } finally {
    interrupts.dispose();
    renderer.close();
    await charts?.close();
  }
}

export async function writeReport(
  context: CliContext,
  result: AnalysisResult,
  renderer: ProgressRenderer,
  render: (outDir: string) => Promise<RenderedReport>,
  writeJson: ((line: Parameters<typeof toJsonLine>[0]) => void) | null,
): Promise<number> {
  const exitCode = exitCodeForTermination(result.termination.reason, result.answer !== null);
  let rendered: RenderedReport;
  try {
    // No signal: after a Ctrl-C the run's signal is aborted, and the report of
    // the cancelled run is exactly what should still be written.
    rendered = await render(result.outDir);
  } catch (caught) {
    const error = mapWriteFailure(caught);
    printError(context, error);
    renderer.warn(
      `The trace is kept at ${displayPath(result.tracePath, context.cwd)}; render it again with \`datalyst report ${displayPath(result.outDir, context.cwd)}\`.`,
    );
    return exitCodeForError(error);
  }
  const files = rendered.files;
  writeJson?.({
    type: 'report-end',
    outDir: result.outDir,
    files: files.map((file) => ({ format: reportFormatOf(file), path: file })),
  });
  if (files.length > 0) describeRenderedReport(renderer, files, rendered, context.cwd);
  else renderer.result(`Run folder: ${displayPath(result.outDir, context.cwd)}`);
  return exitCode;
}

/** The format of a written report file, for `report-end` (a deep run's JSON is its `deep.json`). */
export function reportFormatOf(file: string): string {
  const name = path.basename(file);
  if (name === 'report.html') return 'html';
  if (name === 'report.md') return 'md';
  if (name === 'analysis.ipynb') return 'ipynb';
  if (name === 'trace.json' || name === 'deep.json') return 'json';
  if (name === 'report.pdf') return 'pdf';
  return 'asset';
}
