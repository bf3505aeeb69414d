import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Option, type Command } from 'commander';
import { modelProfileNames, sandboxBackendNames } from '../../config/config-file.ts';
import { CancelledError, ConfigError, DatalystError } from '../../errors/index.ts';
import type { AnalyzeSettings } from '../../config/index.ts';
import type { AgentEvent, LanguageModel, Thread, ThreadSummary, TurnResult } from '../../index.ts';
import type { CliContext } from '../cli-context.ts';
import { loadCommandSettings } from '../command-settings.ts';
import { ExitCode, exitCodeForError, exitCodeHelpFor } from '../exit-codes.ts';
import { formatBytes } from '../format.ts';
import { plural } from '../../util/plural.ts';
import { handleInterrupts } from '../interrupt.ts';
import { toJsonLine } from '../json-lines.ts';
import {
  checkOutDir,
  claimOutDir,
  displayPath,
  releaseUnusedOutDir,
  type ClaimedOutDir,
} from '../output-dir.ts';
import type { ExitCodeSink } from '../program.ts';
import { printError } from '../program.ts';
import type { ProgressRenderer } from '../progress-renderer.ts';
import { describeRenderedReport, mapWriteFailure } from '../report-summary.ts';
import { drawRunCharts, reportNeedsChartPng } from '../run-charts.ts';
import type { RunCharts } from '../run-charts.ts';
import { sanitizeForTerminal } from '../terminal-style.ts';
import type { WorkspaceCheck } from '../workspace-check.ts';
import {
  analyzeOptionsSchema,
  collect,
  describeWorkspace,
  makeRenderer,
  checkRunWorkspace,
  runOptionsFor,
  writeReport,
  type AnalyzeCommandOptions,
} from './analyze.ts';

/** The prompt's commands: --help, /help and the completer are made from this one list. */
const chatCommandHelp = [
  ['/report', 'write the report now and print where it is'],
  ['/files', "list the workspace's files and the files the code wrote"],
  ['/help', 'this list'],
  ['/exit', 'end the session (Ctrl-D too); the report is written on exit'],
] as const;

/** What `/help` prints: how to use the prompt and its commands (part of --help too). */
const promptHelp = `Type a question and press Enter. Line editing and history (Up/Down) work as
in a shell. Ctrl-C cancels the running question (the session goes on; Ctrl-C
at the prompt shows how to leave). Commands:
${chatCommandHelp.map(([name, what]) => `  ${name.padEnd(10)}${what}`).join('\n')}`;

const chatHelp = `
An interactive conversation about a workspace: each question runs in the same
sandbox, so the variables and files of earlier questions are still there.

${promptHelp}

When the model asks you something (<Ask>), your next line is the reply.
Without a model the built-in offline analyst answers: the first question gets
its exploratory analysis; follow-ups that name columns or tables get a
breakdown of those, "describe the data" every table; to any other question it
replies by asking which column or table is meant.

The session's run folder (default runs/<time>-<workspace>) holds the trace of
every question; \`datalyst analyze --continue <run-folder> "<question>"\` adds
one later (the cells are replayed in a fresh sandbox first).

A question that ends without an answer does not end the session: the exit code
says how the session ended.

${exitCodeHelpFor([
  [ExitCode.answered, 'the session ended (/exit, Ctrl-D) and its report was written'],
  [ExitCode.internal, 'internal error (a bug in Datalyst)'],
  [
    ExitCode.usage,
    'usage or input error (arguments, config, workspace, output folder), or the report could not be written',
  ],
  [ExitCode.sandboxUnavailable, 'sandbox unavailable (Docker engine, runner image, local Python)'],
])}`;

const chatCommands = chatCommandHelp.map(([name]) => name);
// A chat waits for its user: chart workers that drew nothing for this long end (they hold memory), and start again with the next chart.
const CHAT_CHART_WORKERS_IDLE_MS = 60_000;

export function defineChatCommand(program: Command, context: CliContext, setExitCode: ExitCodeSink): void {
  program
    .command('chat')
    .description('Talk with the analyst about a workspace: follow-up questions in the same sandbox.')
    .argument('<workspace>', 'folder of data files (CSV, Excel, JSON, SQLite, Parquet)')
    .option('--model <name>', 'model name at the endpoint (env DATALYST_MODEL)')
    .option('--base-url <url>', 'OpenAI-compatible endpoint (env DATALYST_BASE_URL, OPENAI_BASE_URL)')
    .option('--api-key <key>', 'API key for the endpoint (env DATALYST_API_KEY, OPENAI_API_KEY)')
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
    .option('--max-rounds <n>', 'model turns at most per question (default: 30)')
    .option('--cell-timeout <duration>', 'limit per code cell, e.g. 90s, 5m (default: 120s)')
    .option('--deadline <duration>', 'limit per question, e.g. 30m (default: none)')
    .option('--memory <size>', 'sandbox memory, e.g. 2g, 512m (default: 2g)')
    .option('--cpus <n>', 'sandbox CPU cores (default: 1.5)')
    .addOption(
      new Option('--sandbox <backend>', 'sandbox backend; local: NO isolation (default: docker)').choices(
        sandboxBackendNames,
      ),
    )
    .option('--runtime <name>', 'container runtime: runc, or runsc for gVisor (default: runc)')
    .option('--max-workspace-mb <mb>', 'refuse larger workspaces (default: 2048)')
    .option(
      '--config <file>',
      'config file (default: the nearest datalyst.config.json, here or in a folder above)',
    )
    .addHelpText('after', chatHelp)
    .action(async (workspace: string, rawOptions: unknown) => {
      setExitCode(await runChat(context, workspace, analyzeOptionsSchema.parse(rawOptions)));
    });
}

interface Prepared {
  settings: AnalyzeSettings;
  check: WorkspaceCheck;
  renderer: ProgressRenderer;
}

/** Settings, the workspace check and what the person is told before anything runs (as `analyze` does). */
async function prepare(
  context: CliContext,
  workspace: string,
  question: string | undefined,
  options: AnalyzeCommandOptions,
  threaded: boolean,
): Promise<Prepared> {
  const settings = await loadCommandSettings(context, workspace, question, options);
  const renderer = makeRenderer(
    context,
    options,
    settings.maxRounds,
    threaded,
    settings.model.kind === 'offline',
  );
  const check = await checkRunWorkspace(settings);
  describeWorkspace(renderer, check, context);
  if (settings.model.kind === 'offline') {
    renderer.info('Offline: using the built-in analyst (rule-based, no language model; the report says so).');
    if (settings.model.note !== null) renderer.warn(settings.model.note);
  } else {
    renderer.info(
      `Model ${settings.model.id} at ${settings.model.baseUrl ?? 'api.openai.com'} (profile ${settings.model.profile})`,
    );
  }
  if (settings.sandbox === 'local') {
    renderer.warn('--sandbox local runs the generated code on THIS machine with NO isolation.');
  }
  return { settings, check, renderer };
}

/** Streams one turn to the renderer (or JSON lines) and returns its result. */
async function streamTurn(
  thread: Thread,
  question: string,
  signal: AbortSignal,
  show: (event: AgentEvent) => void,
): Promise<TurnResult> {
  const turn = thread.ask(question, { signal });
  for await (const event of turn) show(event);
  return turn.result;
}

async function writeThreadReport(
  context: CliContext,
  outDir: string,
  formats: AnalyzeSettings['formats'],
  renderer: ProgressRenderer,
  charts: RunCharts,
): Promise<number | null> {
  const { renderRunFolder } = await import('../../report/index.ts');
  try {
    const rendered = await renderRunFolder(outDir, { formats, chartPool: charts.pool });
    describeRenderedReport(renderer, rendered.files, rendered, context.cwd);
    return null;
  } catch (caught) {
    const error = mapWriteFailure(caught);
    printError(context, error);
    renderer.warn(`Render it again with \`datalyst report ${displayPath(outDir, context.cwd)}\`.`);
    return exitCodeForError(error);
  }
}

async function listFiles(dir: string): Promise<{ path: string; sizeBytes: number }[]> {
  const { stat } = await import('node:fs/promises');
  const found: { path: string; sizeBytes: number }[] = [];
  let entries: string[];
  try {
    entries = await readdir(dir, { recursive: true });
  } catch {
    return found;
  }
  for (const entry of entries.sort()) {
    const info = await stat(path.join(dir, entry)).catch(() => null);
    if (info?.isFile()) found.push({ path: entry, sizeBytes: info.size });
  }
  return found;
}

/**
 * `datalyst chat <workspace>`: a prompt (node's readline: line editing and
 * history) whose every line is a question of one thread. Ctrl-C cancels the
 * running turn, not the session; the report is written on exit.
 */
async function runChat(
  context: CliContext,
  workspace: string,
  options: AnalyzeCommandOptions,
): Promise<number> {
  let prepared: Prepared;
  try {
    prepared = await prepare(context, workspace, undefined, options, true);
  } catch (error) {
    printError(context, error);
    return exitCodeForError(error);
  }
  const { settings, check, renderer } = prepared;
  const [{ openThread }, { createModel }] = await Promise.all([
    import('../../agent/index.ts'),
    import('../model-factory.ts'),
  ]);
  let thread: Thread;
  let claimed: ClaimedOutDir | null = null;
  const setup = new AbortController();
  try {
    await checkOutDir(settings.outDir, settings.outDirIsDefault);
    const image = await context.prepareSandbox({
      backend: settings.sandbox,
      image: settings.image,
      onProgress: (line) => renderer.info(`  ${line}`),
      signal: setup.signal,
    });
    claimed = await claimOutDir(settings.outDir, settings.outDirIsDefault);
    thread = await openThread({
      workspaceDir: settings.workspaceDir,
      model: createModel(settings.model),
      ...runOptionsFor(settings, context, image, check),
      outDir: claimed.dir,
    });
  } catch (error) {
    if (claimed !== null) await releaseUnusedOutDir(claimed);
    printError(context, error);
    return exitCodeForError(error);
  }
  renderer.result(
    `Chat · run folder ${displayPath(thread.outDir, context.cwd)} · /help for commands, /exit to end`,
  );
  // Charts are drawn as the cells make them, while the user reads and the model thinks (run-charts.ts).
  const charts = await drawRunCharts({
    outDir: thread.outDir,
    png: reportNeedsChartPng(settings.formats),
    idleTimeoutMs: CHAT_CHART_WORKERS_IDLE_MS,
  });
  try {
    return await chatLoop(context, thread, settings, check, renderer, charts);
  } finally {
    await charts.close();
    // No question, no trace (the thread discarded it): the folders made for it go too, if still empty.
    if (thread.turns === 0) await releaseUnusedOutDir(claimed);
  }
}

async function chatLoop(
  context: CliContext,
  thread: Thread,
  settings: AnalyzeSettings,
  check: WorkspaceCheck,
  renderer: ProgressRenderer,
  charts: RunCharts,
): Promise<number> {
  const input = context.stdin ?? process.stdin;
  const terminal = input.isTTY === true && context.stdout.isTTY;
  const lines = createInterface({
    input,
    ...(terminal ? { output: process.stdout, terminal: true, historySize: 500 } : { terminal: false }),
    completer: (line: string) => {
      const hits = chatCommands.filter((command) => command.startsWith(line));
      return [line.startsWith('/') ? hits : [], line];
    },
  });
  let turnControl: AbortController | null = null;
  const cancelTurn = () => {
    if (turnControl !== null && !turnControl.signal.aborted) {
      renderer.warn('Cancelling this question (the session goes on).');
      turnControl.abort(new CancelledError('SIGINT'));
    } else if (turnControl === null) {
      renderer.info('(Ctrl-C cancels a running question; /exit or Ctrl-D ends the session.)');
      prompt();
    }
  };
  // A terminal's Ctrl-C reaches readline; a signal from outside (kill -INT) reaches the process.
  lines.on('SIGINT', cancelTurn);
  context.signals.on('SIGINT', cancelTurn);
  const prompt = () => {
    const text = thread.openQuestion === null ? 'datalyst> ' : 'reply> ';
    if (terminal) {
      lines.setPrompt(text);
      lines.prompt();
    } else {
      context.stdout.write(text);
    }
  };
  try {
    prompt();
    for await (const rawLine of lines) {
      const line = rawLine.trim();
      if (line === '') {
        prompt();
        continue;
      }
      if (line === '/exit' || line === '/quit') break;
      if (line === '/help') {
        renderer.result(promptHelp);
      } else if (line === '/report') {
        // Before the first question the run folder holds no trace to render.
        if (thread.turns === 0) renderer.result('Nothing to report yet: ask a question first.');
        else await writeThreadReport(context, thread.outDir, settings.formats, renderer, charts);
      } else if (line === '/files') {
        const inputs = check.dataFiles.map((file) => file.path);
        renderer.result(
          `Workspace (${displayPath(check.dir, context.cwd)}): ${inputs.map(sanitizeForTerminal).join(', ') || 'no data files'}`,
        );
        const written = await listFiles(path.join(thread.outDir, 'artifacts'));
        renderer.result(
          written.length === 0
            ? 'Files the code wrote: none yet.'
            : `Files the code wrote (${displayPath(path.join(thread.outDir, 'artifacts'), context.cwd)}):\n${written
                .map((file) => `  ${sanitizeForTerminal(file.path)} (${formatBytes(file.sizeBytes)})`)
                .join('\n')}`,
        );
      } else if (line.startsWith('/') && !line.includes(' ')) {
        renderer.warn(`Unknown command ${line}; /help lists them.`);
      } else {
        turnControl = new AbortController();
        try {
          await streamTurn(thread, line, turnControl.signal, (event) => {
            renderer.handle(event);
            charts.observe(event);
          });
        } catch (error) {
          printError(context, error);
        } finally {
          turnControl = null;
          renderer.close();
        }
      }
      prompt();
    }
  } finally {
    lines.off('SIGINT', cancelTurn);
    context.signals.off('SIGINT', cancelTurn);
    lines.close();
    if (terminal) context.stdout.write('\n');
  }
  const summary = await thread.close();
  if (summary.turns === 0) {
    renderer.result('No question was asked; nothing was written.');
    return ExitCode.answered;
  }
  renderer.result(`Session ended after ${plural(summary.turns, 'question')}.`);
  return (
    (await writeThreadReport(context, thread.outDir, settings.formats, renderer, charts)) ?? ExitCode.answered
  );
}

/**
 * `datalyst analyze --continue <run-folder> "<question>"`: resumes the thread
 * of an earlier run or chat (its cells replayed in a fresh sandbox, outputs
 * checked) and adds one question; the report is written again.
 */
export async function runContinue(
  context: CliContext,
  runFolder: string,
  question: string | undefined,
  options: AnalyzeCommandOptions,
): Promise<number> {
  const json = options.json === true;
  const writeJson = (line: Parameters<typeof toJsonLine>[0]) => context.stdout.write(toJsonLine(line));
  const outDir = path.resolve(context.cwd, runFolder);
  let prepared: Prepared;
  try {
    if (question === undefined || question.trim() === '') {
      throw new ConfigError(
        'analyze --continue needs the question to add.',
        'Run `datalyst analyze --continue <run-folder> "<question>"`.',
      );
    }
    const { readTrace } = await import('../../trace/index.ts');
    const trace = await readTrace(path.join(outDir, 'trace.jsonl'));
    const start = trace.records[0];
    if (start?.type !== 'run-start') throw new Error('readTrace returned a trace without run-start');
    prepared = await prepare(context, start.workspace.path, question, options, false);
  } catch (error) {
    printError(context, error);
    return exitCodeForError(error);
  }
  const { settings, check, renderer } = prepared;
  const [{ resumeThread }, { createModel }] = await Promise.all([
    import('../../agent/index.ts'),
    import('../model-factory.ts'),
  ]);
  const interrupts = handleInterrupts({
    source: context.signals,
    onFirst: () => renderer.warn('Cancelling the question; the report is written with what was done.'),
    onSecond: () => {
      renderer.close();
      context.exit(ExitCode.cancelled);
    },
  });
  // The new question's charts are drawn as its cells make them; earlier ones come from the run folder's cache.
  const charts = await drawRunCharts({ outDir, png: reportNeedsChartPng(settings.formats) });
  try {
    let result: TurnResult;
    let thread: Thread;
    let summary: ThreadSummary;
    try {
      const image = await context.prepareSandbox({
        backend: settings.sandbox,
        image: settings.image,
        onProgress: (line) => renderer.info(`  ${line}`),
        signal: interrupts.signal,
      });
      const model: LanguageModel = createModel(settings.model);
      thread = await resumeThread(outDir, {
        workspaceDir: settings.workspaceDir,
        model,
        ...runOptionsFor(settings, context, image, check),
        askMode: 'pause',
        signal: interrupts.signal,
      });
      try {
        result = await streamTurn(thread, settings.instruction, interrupts.signal, (event) => {
          if (json) writeJson(event);
          else renderer.handle(event);
          charts.observe(event);
        });
      } finally {
        summary = await thread.close();
      }
    } catch (error) {
      const reported =
        interrupts.interrupted && !DatalystError.isInstance(error) ? new CancelledError(error) : error;
      printError(context, reported);
      return exitCodeForError(reported);
    }
    renderer.close();
    const reason = result.termination.reason;
    if (reason === 'answered')
      renderer.result(`✓ Answered (question ${result.turn}) in ${plural(result.rounds, 'round')}`);
    else if (reason === 'asked')
      renderer.result(
        `${settings.model.kind === 'offline' ? 'The offline analyst' : 'The model'} asks: ${sanitizeForTerminal(result.ask ?? '')}\n  Reply with --continue ${runFolder} "<reply>".`,
      );
    else renderer.result(`✗ No answer (${reason}): ${sanitizeForTerminal(result.termination.detail)}`);
    // As `analyze` does: the report-end line under --json tells scripts where the report went.
    const { renderRunFolder } = await import('../../report/index.ts');
    const chartPool = charts.pool;
    const render = (dir: string) =>
      renderRunFolder(dir, {
        formats: settings.formats,
        chartPool,
        ...(context.env.chromium === undefined ? {} : { chromiumPath: context.env.chromium }),
      });
    return await writeReport(context, summary, renderer, render, json ? writeJson : null);
  } finally {
    interrupts.dispose();
    renderer.close();
    await charts.close();
  }
}
