import { stat } from 'node:fs/promises';
import { isSameOrInside } from '../../util/path-inside.ts';
import path from 'node:path';
import {
  ConfigError,
  DatalystError,
  SandboxFailureError,
  TraceError,
  WorkspaceError,
} from '../../errors/index.ts';
import {
  createSandbox,
  type CellResult,
  type SandboxSession,
  type WorkspaceProfile,
} from '../../sandbox/index.ts';
import { readTrace } from '../../trace/reader.ts';
import type {
  ExecutionRecord,
  RunStartRecord,
  TerminationReason,
  TraceCellResult,
  TraceRecord,
  Usage,
} from '../../trace/schema.ts';
import { splitTurns } from '../../trace/turns.ts';
import { collectArtifacts } from '../artifacts.ts';
import { errorText } from '../clip-text.ts';
import { runErrorOf, type AgentEvent, type RunError } from '../events.ts';
import { formatExecuteText } from '../execute-text.ts';
import { hashInputFiles, listInputFiles, sha256File } from '../input-files.ts';
import { defaultLiveOutputLimits, LiveCellOutput } from '../live-output.ts';
import type { LanguageModel } from '../language-model.ts';
import { resolveModelProfile } from '../model-profile.ts';
import { runFailureFrom } from '../run-failure.ts';
import { newRunId } from '../run-metadata.ts';
import { runStartRecord } from '../run-start-record.ts';
import { defaultMaxTraceFigureBytes } from '../trace-figure-budget.ts';
import { TraceRecorder } from '../trace-recorder.ts';
import { assertRunFolderIsFree, withRunFolderLeftOut } from '../thread/run-folder.ts';
import { cancelledResult } from '../turn-handler.ts';
import {
  NOT_GROUNDED_MARK,
  SIGN_CHANGED_MARK,
  STALE_MARK,
  updateAnswerNumbers,
  type NumberUpdate,
} from './answer-numbers.ts';
import type { RerunCell, RerunOptions, RerunResult } from './rerun-options.ts';
import { rewriteAnswer } from './rewrite-answer.ts';
import { vanishedColumns, type VanishedColumn } from './vanished-columns.ts';

const nowIso = () => new Date().toISOString();

/** Statuses whose recorded cells are not run again: they hit a limit or were stopped, and would again (as a thread's replay). */
const notRerun = new Set(['timeout', 'memory', 'crashed', 'output-limit', 'cancelled']);

interface RecordedRun {
  runDir: string;
  tracePath: string;
  traceSha256: string;
  start: RunStartRecord;
  records: TraceRecord[];
  executions: ExecutionRecord[];
  /** The last answer of the run (of its last answered question), or null. */
  answer: string | null;
  /** The question that answer answers. */
  question: string;
  /** How the earlier run ended. */
  termination: { reason: TerminationReason; detail: string } | null;
  /** The earlier workspace's profile (its columns), or null when it was not profiled. */
  profile: WorkspaceProfile | null;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    (info) => info.isFile(),
    () => false,
  );
}

/** Reads the earlier run's trace (`trace.jsonl`, else `trace.json`; versions 1 and 2). */
async function readRecordedRun(runDir: string, signal: AbortSignal): Promise<RecordedRun> {
  const folder = await stat(runDir).catch(() => null);
  if (folder === null) {
    throw new ConfigError(
      `The run folder ${runDir} does not exist.`,
      'Pass the folder an earlier `datalyst analyze` wrote (it holds trace.jsonl), e.g. runs/<time>-<workspace>.',
    );
  }
  if (!folder.isDirectory()) {
    throw new ConfigError(
      `${runDir} is not a folder: a re-run takes the run folder an earlier \`datalyst analyze\` wrote.`,
      'Pass the run folder (it holds trace.jsonl), not a file in it.',
    );
  }
  const jsonl = path.join(runDir, 'trace.jsonl');
  const json = path.join(runDir, 'trace.json');
  const tracePath = (await exists(jsonl)) ? jsonl : (await exists(json)) ? json : null;
  if (tracePath === null) {
    throw new TraceError(
      `${runDir} holds no trace.jsonl or trace.json: it is not a Datalyst run folder (re-run takes the folder an earlier \`datalyst analyze\` wrote).`,
    );
  }
  const trace = await readTrace(tracePath, { signal });
  const start = trace.records[0];
  if (start?.type !== 'run-start') throw new TraceError('The trace does not start with a run-start record.');
  const executions = trace.records.filter((record) => record.type === 'execution');
  const turns = splitTurns(trace.records);
  const answered = turns.findLast((turn) => turn.end?.answer != null);
  const runEnd = trace.records.findLast((record) => record.type === 'run-end');
  const answer = runEnd?.answer ?? answered?.end?.answer ?? null;
  return {
    runDir,
    tracePath,
    traceSha256: await sha256File(tracePath, signal),
    start,
    records: trace.records,
    executions,
    answer,
    question: answered?.question ?? start.instruction,
    termination: runEnd?.termination ?? turns.at(-1)?.end?.termination ?? null,
    profile: trace.records.find((record) => record.type === 'workspace-profile')?.profile ?? null,
  };
}

/**
 * Which files of the earlier workspace a re-run needs: those the recorded run
 * read as data, that is, in which its profile found a table. A file it read as
 * text or could not read ("Not read: README.md (text, not a table)") is not
 * needed: the analysis used no data of it. A file the profile left out, or
 * every file when the trace holds no profile, is needed, since what the run
 * made of it cannot be told. Code that opens a text file by itself (a model's
 * `open('README.md')`) fails on the new data when it is gone, and the re-run
 * ends `rerun-cell-failed` naming the error.
 */
function filesNeeded(recorded: RecordedRun): { needed: string[]; notRead: string[] } {
  const profiled = new Map(recorded.profile?.files.map((file) => [file.path, file]) ?? []);
  const needed: string[] = [];
  const notRead: string[] = [];
  for (const file of recorded.start.workspace.files) {
    const profile = profiled.get(file.path);
    if (profile === undefined || profile.tables.length > 0) needed.push(file.path);
    else notRead.push(file.path);
  }
  return { needed, notRead };
}

/** The earlier model, for the trace's run-start: the code was its, even though no model runs now. */
function recordedModel(start: RunStartRecord): LanguageModel {
  return {
    id: start.model.id,
    contextWindowTokens: start.limits.contextBudgetTokens,
    ...(start.model.baseUrl === null ? {} : { baseUrl: start.model.baseUrl }),
    offline: start.model.offline,
    // Never called: a re-run asks no model for code.
    stream: () => {
      throw new Error('The recorded model is not asked in a re-run.');
    },
  };
}

function cellDetail(result: TraceCellResult): string | null {
  if (result.error !== null) return `${result.error.name}: ${result.error.value}`;
  return result.status === 'ok' ? null : result.status;
}

function countBy(numbers: readonly NumberUpdate[], status: NumberUpdate['status']): number {
  return numbers.filter((number) => number.status === status).length;
}

/** How many numbers of each kind, one sentence (the CLI's summary line, and the start of `describeNumbers`). */
export function countNumbers(numbers: readonly NumberUpdate[]): string {
  const signChanged = countBy(numbers, 'sign-changed');
  const parts = [
    `${countBy(numbers, 'updated')} updated`,
    `${countBy(numbers, 'unchanged')} unchanged`,
    `${countBy(numbers, 'stale')} stale`,
    `${countBy(numbers, 'not-grounded')} not grounded`,
    ...(signChanged > 0 ? [`${signChanged} with their sign changed`] : []),
  ];
  return `Numbers of the earlier answer: ${parts.join(', ')}.`;
}

/** The counts, then the stale numbers with why, for the run's notice. */
export function describeNumbers(numbers: readonly NumberUpdate[]): string {
  const stale = numbers
    .filter((number) => number.status === 'stale')
    .slice(0, 10)
    .map((number) => `${number.oldText} (${number.reason ?? 'not placed'})`);
  return `${countNumbers(numbers)}${stale.length > 0 ? ` Stale: ${stale.join('; ')}${countBy(numbers, 'stale') > stale.length ? '; …' : ''}.` : ''}`;
}

function namesOf(columns: readonly VanishedColumn[]): string {
  return columns.map((column) => `\`${column.name}\``).join(', ');
}

/** What a carried-over answer whose columns are gone is told: which names, which cells printed them. */
function columnsChangedText(columns: readonly VanishedColumn[]): string {
  const one = columns.length === 1;
  const cellsOf = [...new Set(columns.map((column) => column.outputId))].join(', ');
  return `The answer names ${namesOf(columns)}, which the new outputs never print (${cellsOf} printed ${one ? 'it' : 'them'} in the recorded run): the data's columns changed. The earlier answer is carried over, but it describes ${one ? 'a column' : 'columns'} the new data no longer ${one ? 'has' : 'have'}; check the new outputs, or re-run with --rewrite-answer.`;
}

/** The lines put before a carried-over answer, so that no reader takes it for a fresh analysis. */
function carriedOverPreamble(
  runId: string,
  numbers: readonly NumberUpdate[],
  columnsChanged: string | null,
): string {
  const lines = [
    `> **Re-run** of run \`${runId}\` on new data, with no model: every number the earlier answer took from an output is taken again from the same place in the new outputs. The wording is the earlier answer's; check it against the new outputs.`,
  ];
  if (columnsChanged !== null) lines.push(`> **${columnsChanged}**`);
  if (numbers.some((number) => number.status === 'stale'))
    lines.push(
      `> Numbers marked ${STALE_MARK} could not be found at their place in the new outputs: they are the earlier run's values.`,
    );
  if (numbers.some((number) => number.status === 'sign-changed'))
    lines.push(
      `> Numbers marked ${SIGN_CHANGED_MARK} are the new values, whose sign is the opposite of the earlier one: the words around them may say the opposite now.`,
    );
  if (numbers.some((number) => number.status === 'not-grounded'))
    lines.push(
      `> Numbers marked ${NOT_GROUNDED_MARK} were never found in an output of the earlier run and are kept as written.`,
    );
  return `${lines.join('\n>\n')}\n\n`;
}

/**
 * Re-runs a recorded analysis on new data: reads the earlier run's trace,
 * runs its recorded cells again in order in a fresh sandbox on the new
 * workspace (mounted read-only like any run's), with no model, and writes a
 * new run folder with its own trace (marked as a re-run of the earlier one),
 * which `renderRunFolder` turns into the report. The earlier answer's
 * grounded numbers are carried over to the new outputs (see
 * answer-numbers.ts), or, with `rewriteAnswer`, a model rewrites the answer
 * in one turn.
 *
 * Throws before anything is written when the run folder is missing or its
 * trace cannot be read, the new workspace lacks a file the earlier run read
 * as data (the error names it), the new run folder is the earlier one or
 * inside it, or `prepareSandbox` (called after those checks) fails.
 * Afterwards failures are results: a cell that fails on the new data ends the
 * run `rerun-cell-failed`, a broken sandbox `sandbox-failure`, a model that
 * fails the rewrite `model-unavailable`, a cancel `cancelled`, and a recorded
 * run with no answer to carry over `no-progress` (never the recorded run's
 * own ending: this run was not cancelled because that one was). As with
 * `analyze()`, `result.error` is the error behind a `sandbox-failure` or
 * `model-unavailable` ending (the one the `error` event carried) and is
 * absent otherwise: a cell that fails on the new data is a result
 * (`failedCell`), not an error. A bug in Datalyst rejects with
 * `INTERNAL_ERROR`, after the sandbox is closed, and leaves the trace
 * without a run-end, as a crash does.
 */
export async function rerunAnalysis(options: RerunOptions): Promise<RerunResult> {
  const signal = options.signal ?? new AbortController().signal;
  const emit = (event: AgentEvent) => options.onEvent?.(event);
  const recorded = await readRecordedRun(path.resolve(options.runDir), signal);
  const workspaceDir = path.resolve(options.workspaceDir);
  const runId = options.runId ?? newRunId();
  const outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', runId));
  // Run folders inside the new workspace are not data, the new one nor the recorded one (`datalyst rerun runs/x .`):
  // left out of the listing, the hashes and the sandbox.
  const { sandbox } = await withRunFolderLeftOut(
    await withRunFolderLeftOut({ ...options, workspaceDir }, recorded.runDir),
    outDir,
  );
  const listed = await listInputFiles(workspaceDir, sandbox?.excludeDirs);
  const present = new Set(listed.map((file) => file.path));
  const { needed, notRead } = filesNeeded(recorded);
  const missing = needed.filter((file) => !present.has(file));
  if (missing.length > 0) {
    throw new WorkspaceError(
      `The new workspace ${workspaceDir} has no ${missing.join(', ')}: the recorded run ${recorded.profile === null ? 'had' : 'read'} ${missing.length === 1 ? 'this file' : 'these files'}${recorded.profile === null ? '' : ' as data'}, and a re-run expects each under the same name.`,
      `Put the new data in ${workspaceDir} under the earlier names (${needed.join(', ')}).`,
    );
  }
  const absent = notRead.filter((file) => !present.has(file));
  if (isSameOrInside(outDir, recorded.runDir)) {
    throw new ConfigError(
      `The new run folder ${outDir} is the earlier run's folder or inside it; a re-run never changes the earlier run.`,
      'Pass another folder for the new run.',
    );
  }
  // A folder that holds anything is never written into (the user's files are not overwritten), as openThread's.
  assertRunFolderIsFree(outDir);
  // The slow checks (Docker, the runner image) after the cheap ones, and before anything is written.
  const image = await options.prepareSandbox?.(signal);
  const sandboxOptions = image === undefined ? sandbox : { ...sandbox, image };
  const inputFiles = await hashInputFiles(listed, signal);
  const recorder = TraceRecorder.open(outDir, {
    maxFigureBytes: options.maxTraceFigureBytes ?? defaultMaxTraceFigureBytes,
  });
  // Whatever escapes from here is a bug in Datalyst (failures of the sandbox and the model end the run):
  // the trace is closed as it stands, with no run-end, as a crash leaves it.
  try {
    const startedMs = Date.now();
    const startedAt = new Date(startedMs).toISOString();
    const rerunOf = {
      runId: recorded.start.runId,
      runDir: recorded.runDir,
      traceSha256: recorded.traceSha256,
    };
    emit({
      type: 'run-start',
      runId,
      outDir,
      instruction: recorded.start.instruction,
      modelId: 'none (re-run)',
    });

    let session: SandboxSession | null = null;
    let newProfile: WorkspaceProfile | null = null;
    const cells: RerunCell[] = [];
    const newExecutions: ExecutionRecord[] = [];
    let failedCell: RerunCell | null = null;
    let termination: { reason: TerminationReason; detail: string } | null = null;
    let runError: RunError | null = null;
    let answer: string | null = null;
    let answerSource: RerunResult['answerSource'] = 'none';
    let numbers: NumberUpdate[] = [];
    let rounds = 0;
    const usage: Usage = { promptTokens: 0, completionTokens: 0 };
    const lastRecordedRound = Math.max(1, ...recorded.executions.map((execution) => execution.round));
    const artifactBudget = {
      remainingBytes: options.maxArtifactBytes ?? 64 * 1024 * 1024,
      remainingFiles: options.maxArtifactFiles ?? 200,
    };
    let phase: 'setup' | 'sandbox' | 'model' = 'setup';
    let runStartWritten = false;
    const writeRunStart = () => {
      if (runStartWritten) return;
      runStartWritten = true;
      const record = runStartRecord({
        options: {
          instruction: recorded.start.instruction,
          workspaceDir,
          model: recordedModel(recorded.start),
          ...(sandboxOptions === undefined ? {} : { sandbox: sandboxOptions }),
        },
        runId,
        startedAt,
        inputFiles,
        profile: resolveModelProfile('chat'),
        maxRounds: recorded.start.limits.maxRounds,
        deadlineMs: null,
        contextBudgetTokens: recorded.start.limits.contextBudgetTokens,
        session,
      });
      recorder.append({
        ...record,
        model: recorded.start.model,
        rerunOf: { ...rerunOf, workspacePath: recorded.start.workspace.path },
      });
    };
    try {
      phase = 'sandbox';
      try {
        session = await (options.createSandbox ?? createSandbox)({
          ...sandboxOptions,
          workspaceDir,
          signal,
        });
      } catch (error) {
        // createSandbox maps Docker's errors; a caller's factory may throw anything, and it is still the sandbox's.
        if (DatalystError.isInstance(error) || signal.aborted) throw error;
        throw new SandboxFailureError(`The sandbox could not be opened: ${errorText(error)}`, {
          cause: error,
        });
      } finally {
        writeRunStart();
      }
      try {
        const profile = await session.profileWorkspace({ signal });
        newProfile = profile;
        recorder.append({ type: 'workspace-profile', at: nowIso(), profile });
        emit({ type: 'profile-end', profile });
      } catch (error) {
        if (signal.aborted) throw error;
        emit(recorder.notice(0, 'warning', `The new workspace could not be profiled: ${errorText(error)}`));
      }
      recorder.append({
        type: 'turn-start',
        turn: 1,
        at: nowIso(),
        question: recorded.question,
        replyToAsk: false,
      });
      emit({ type: 'turn-start', turn: 1, question: recorded.question, replyToAsk: false });
      emit(
        recorder.notice(
          0,
          'rerun',
          `Re-run of run ${recorded.start.runId} (${recorded.runDir}) on the files of ${workspaceDir}: its ${recorded.executions.length} recorded cells run again in order, with no model.`,
        ),
      );
      if (absent.length > 0) {
        const one = absent.length === 1;
        emit(
          recorder.notice(
            0,
            'warning',
            `${absent.join(', ')} ${one ? 'is' : 'are'} not in the new workspace; the recorded run did not read ${one ? 'it' : 'them'} as data, so the re-run goes on without ${one ? 'it' : 'them'}.`,
          ),
        );
      }
      for (const old of recorded.executions) {
        const recordedStatus = old.result.status;
        if (failedCell !== null) {
          cells.push({
            outputId: old.outputId,
            status: 'not-run',
            recordedStatus,
            detail: `not run: ${failedCell.outputId} failed before it`,
          });
          continue;
        }
        if (notRerun.has(recordedStatus)) {
          cells.push({
            outputId: old.outputId,
            status: 'not-run',
            recordedStatus,
            detail: `not run: it ended ${recordedStatus} in the recorded run`,
          });
          continue;
        }
        emit({ type: 'execution-start', round: old.round, outputId: old.outputId, code: old.code });
        // What the cell prints is kept as it arrives: a cell stopped by a cancel is recorded with it, as `analyze` does.
        const live = new LiveCellOutput({
          ...defaultLiveOutputLimits,
          maxKeptChars: session.limits.maxOutputBytes,
        });
        const startedMs = performance.now();
        let result: CellResult;
        try {
          result = await session.execute(old.code, { signal, onOutput: live.push });
        } catch (error) {
          if (DatalystError.isInstance(error) && error.code === 'CANCELLED') {
            const cancelled = cancelledResult(live, performance.now() - startedMs);
            recorder.cancelledExecution(old.round, old.outputId, old.code, cancelled);
            cells.push({ outputId: old.outputId, status: 'cancelled', recordedStatus, detail: 'cancelled' });
          }
          throw error;
        }
        const executeText = formatExecuteText(result);
        const omission = recorder.execution(old.round, old.outputId, old.code, result, executeText);
        newExecutions.push({
          type: 'execution',
          round: old.round,
          at: nowIso(),
          outputId: old.outputId,
          code: old.code,
          result,
          executeText,
        });
        emit({ type: 'execution-end', round: old.round, outputId: old.outputId, result });
        if (omission !== null) emit(omission);
        await saveArtifacts(session, recorder, outDir, artifactBudget, old, result.files, signal, emit);
        const cell: RerunCell = {
          outputId: old.outputId,
          status: result.status,
          recordedStatus,
          detail: cellDetail(result),
        };
        cells.push(cell);
        // A cell that failed in the record too (the model's mistake, fixed by a later cell) fails again as recorded.
        if (result.status !== 'ok' && recordedStatus === 'ok') failedCell = cell;
      }

      const carried =
        recorded.answer === null
          ? null
          : updateAnswerNumbers(recorded.answer, recorded.executions, newExecutions);
      numbers = carried?.numbers ?? [];
      // Every cell ran, yet the answer may name a column the new data lacks (code that finds its columns
      // by itself raises no error on a rename). A rewrite is the remedy, so it is looked for only without one.
      const vanished =
        recorded.answer === null || failedCell !== null || options.rewriteAnswer !== undefined
          ? []
          : vanishedColumns(
              recorded.answer,
              recorded.profile,
              newProfile,
              recorded.executions,
              newExecutions,
            );
      const columnsChanged = vanished.length > 0 ? columnsChangedText(vanished) : null;
      if (carried !== null) {
        answer = carriedOverPreamble(recorded.start.runId, carried.numbers, columnsChanged) + carried.text;
        answerSource = 'carried-over';
      }
      const vanishedCell = cells.find((cell) => cell.outputId === vanished[0]?.outputId);
      if (columnsChanged !== null && vanishedCell !== undefined) {
        // The same ending as a cell that fails on a renamed column, on the cell that printed the column before.
        const names = namesOf(vanished.filter((column) => column.outputId === vanishedCell.outputId));
        vanishedCell.detail = `no error, but it no longer prints ${names}, which the answer names: the data's columns changed`;
        failedCell = vanishedCell;
        termination = { reason: 'rerun-cell-failed', detail: `${columnsChanged} Every recorded cell ran.` };
        emit(recorder.notice(lastRecordedRound, 'warning', columnsChanged));
      } else if (failedCell !== null) {
        const after = cells.slice(cells.indexOf(failedCell) + 1);
        const notRun = after.filter((cell) => cell.status === 'not-run');
        termination = {
          reason: 'rerun-cell-failed',
          detail: `${failedCell.outputId} failed on the new data (${failedCell.detail ?? failedCell.status}); it ran in the recorded run.${notRun.length > 0 ? ` Not run after it: ${notRun.map((cell) => cell.outputId).join(', ')}.` : ''}`,
        };
        if (options.rewriteAnswer !== undefined)
          emit(
            recorder.notice(
              lastRecordedRound,
              'rerun',
              'The answer was not rewritten: a cell failed on the new data.',
            ),
          );
      } else if (options.rewriteAnswer !== undefined && recorded.answer !== null) {
        phase = 'model';
        const round = lastRecordedRound + 1;
        emit({ type: 'round-start', round });
        const rewritten = drain(
          rewriteAnswer({
            model: options.rewriteAnswer.model,
            question: recorded.question,
            oldAnswer: recorded.answer,
            executions: newExecutions,
            round,
            signal,
            onRetry: (text) => recorder.notice(round, 'retry', text),
          }),
          emit,
        );
        const { answer: newAnswer, turn } = await rewritten;
        rounds = 1;
        usage.promptTokens += turn.usage?.promptTokens ?? 0;
        usage.completionTokens += turn.usage?.completionTokens ?? 0;
        recorder.append({
          type: 'model-turn',
          round,
          at: nowIso(),
          text: turn.text,
          usage: turn.usage,
          durationMs: turn.durationMs,
          finishReason: turn.finishReason,
        });
        answer = `> **Re-run** of run \`${recorded.start.runId}\` on new data; this answer was rewritten by the model \`${options.rewriteAnswer.model.id}\` from the new outputs.\n\n${newAnswer}`;
        answerSource = 'rewritten';
        numbers = [];
        termination = {
          reason: 'answered',
          detail: `Re-ran ${newExecutions.length} recorded cells on the new data; the model rewrote the answer from their outputs.`,
        };
      } else if (recorded.answer !== null) {
        termination = {
          reason: 'answered',
          detail: `Re-ran ${newExecutions.length} recorded cells on the new data; the earlier answer's numbers were carried over.`,
        };
      } else {
        // Not the recorded run's ending: this re-run was not cancelled, nor out of rounds. Every cell it
        // had ran and none failed, but with no model and no recorded answer it can go no further: of the
        // endings a run has, "no progress" (no answer, nothing left to try) is the one that is true of it.
        const how =
          recorded.termination === null
            ? 'its trace ends before an answer'
            : `it ended ${recorded.termination.reason}${recorded.termination.detail === '' ? '' : `: ${recorded.termination.detail.replace(/\.$/, '')}`}`;
        termination = {
          reason: 'no-progress',
          detail: `The recorded run has no answer to carry over (${how}). Its recorded cells ran on the new data (${cells.filter((cell) => cell.status !== 'not-run').length} of ${cells.length}); with no model a re-run goes no further. For an answer, analyse the new data anew.`,
        };
      }
      if (answerSource === 'carried-over')
        emit(recorder.notice(lastRecordedRound, 'rerun', describeNumbers(numbers)));
    } catch (error) {
      const failure = runFailureFrom(error, phase, signal.aborted ? 'cancelled' : null);
      if (failure.reason !== 'cancelled') emit({ type: 'error', error: failure.error });
      termination = { reason: failure.reason, detail: errorText(failure.error, 2000) };
      // On the result as analyze() puts it: the error of a failed ending; a cancel is none.
      if (failure.reason === 'sandbox-failure' || failure.reason === 'model-unavailable')
        runError = runErrorOf(failure.error);
      if (!runStartWritten) writeRunStart();
    } finally {
      if (session !== null) await session.close().catch(() => undefined);
    }
    if (termination === null) throw new Error('rerunAnalysis ended without a termination');
    if (answer !== null) {
      const round = lastRecordedRound + rounds;
      recorder.append({ type: 'step', round, at: nowIso(), kind: 'answer', text: answer, closed: true });
      emit({ type: 'answer-end', round, answer });
    }
    const durationMs = Date.now() - startedMs;
    recorder.append({
      type: 'turn-end',
      turn: 1,
      at: nowIso(),
      rounds,
      usage,
      durationMs,
      termination,
      answer,
      ask: null,
    });
    for (const notice of recorder.end({
      endedAt: nowIso(),
      durationMs,
      rounds,
      usage,
      termination,
      answer,
    }))
      emit(notice);
    const result: RerunResult = {
      runId,
      outDir,
      tracePath: recorder.tracePath,
      answer,
      termination,
      ...(runError === null ? {} : { error: runError }),
      rounds,
      usage,
      durationMs,
      rerunOf,
      cells,
      failedCell,
      answerSource,
      numbers,
    };
    emit({ type: 'run-end', result });
    return result;
  } catch (error) {
    recorder.abandon();
    throw error;
  }
}

/** Runs an event generator to its end, passing each event on; resolves to what it returns. */
async function drain<T>(
  generator: AsyncGenerator<AgentEvent, T, undefined>,
  emit: (event: AgentEvent) => void,
): Promise<T> {
  for (;;) {
    const next = await generator.next();
    if (next.done === true) return next.value;
    emit(next.value);
  }
}

async function saveArtifacts(
  session: SandboxSession,
  recorder: TraceRecorder,
  outDir: string,
  budget: { remainingBytes: number; remainingFiles: number },
  cell: ExecutionRecord,
  files: TraceCellResult['files'],
  signal: AbortSignal,
  emit: (event: AgentEvent) => void,
): Promise<void> {
  if (files.length === 0) return;
  try {
    const collection = await collectArtifacts(session, files, outDir, budget, signal);
    for (const artifact of collection.saved) {
      recorder.append({ type: 'artifact', at: nowIso(), outputId: cell.outputId, ...artifact });
      emit({
        type: 'artifact-saved',
        outputId: cell.outputId,
        path: artifact.path,
        sizeBytes: artifact.sizeBytes,
      });
    }
    if (collection.skipped.length > 0)
      emit(
        recorder.notice(
          cell.round,
          'warning',
          `${collection.skipped.length} file(s) of ${cell.outputId} not copied: ${collection.skipped
            .slice(0, 5)
            .map((file) => `${file.path} (${file.why})`)
            .join(', ')}`,
        ),
      );
  } catch (error) {
    if (signal.aborted) throw error;
    emit(
      recorder.notice(
        cell.round,
        'warning',
        `Files of ${cell.outputId} could not be copied out of the sandbox: ${errorText(error)}`,
      ),
    );
  }
}
