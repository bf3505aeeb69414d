import { DatalystError } from '../errors/index.ts';
import type { CellResult, SandboxSession } from '../sandbox/index.ts';
import type { TraceCellResult, Usage } from '../trace/schema.ts';
import { collectArtifacts, type ArtifactBudget } from './artifacts.ts';
import { clipText, errorText } from './clip-text.ts';
import type { ContextManager } from './context-manager.ts';
import type { AgentEvent } from './events.ts';
import { formatExecuteText, type ExecuteTextOptions } from './execute-text.ts';
import { executeMessages, type ModelProfile } from './model-profile.ts';
import { completeUnclosedCodeNotice, isCompleteUnclosedCode } from './complete-code.ts';
import { LiveCellOutput, defaultLiveOutputLimits } from './live-output.ts';
import { askUnansweredReply, continueNudge, repeatedFailureNudge, unclosedCodeNote } from './model-notes.ts';
import type { ModelTurn } from './model-turn.ts';
import type { ParsedStep } from './tag-parser.ts';
import type { MutableLoopState } from './stop-conditions.ts';
import type { TraceRecorder } from './trace-recorder.ts';

/** Characters of a failing cell's error quoted back to the model in the repeated-failure nudge. */
const maxQuotedErrorChars = 200;
/** Paths named in a notice about files not copied (the kernel's paths can be long and many). */
const maxNamedSkippedFiles = 20;
const maxQuotedPathChars = 200;

/** A cell as it ran: what a replay runs again and checks its output against. */
export interface ExecutedCell {
  outputId: string;
  code: string;
  status: TraceCellResult['status'];
  stdout: string;
  value: string | null;
  errorName: string | null;
}

export function executedCell(outputId: string, code: string, result: TraceCellResult): ExecutedCell {
  return {
    outputId,
    code,
    status: result.status,
    stdout: result.stdout.text,
    value: result.value,
    errorName: result.error?.name ?? null,
  };
}

export interface TurnHandlerSettings {
  session: SandboxSession;
  recorder: TraceRecorder;
  context: ContextManager;
  /** The loop's state; the handler sets the answer, stalled turns and repeated failures. */
  state: MutableLoopState;
  profile: ModelProfile;
  signal: AbortSignal;
  /** The run folder: artifacts go to its `artifacts/`. */
  outDir: string;
  executeText: ExecuteTextOptions;
  /** Spent as files are copied; shared by every turn of the run. */
  artifactBudget: ArtifactBudget;
  /**
   * What an `<Ask>` does: `pause` ends the turn (`asked`) to wait for the
   * user's reply (threads); `reply` answers it with a fixed message and goes
   * on (one-shot runs, where nobody can answer). Default `reply`.
   */
  askMode?: 'pause' | 'reply';
  /** Cells run earlier in the thread: output ids go on from there (E1, E2, …). Default 0. */
  executionsBefore?: number;
}

/** A cell the turn's cancel stopped: what it printed until then, no result from the kernel. */
export function cancelledResult(live: LiveCellOutput, durationMs: number): TraceCellResult {
  return {
    status: 'cancelled',
    stdout: live.captured('stdout'),
    stderr: live.captured('stderr'),
    error: null,
    value: null,
    figures: [],
    charts: [],
    tables: [],
    files: [],
    durationMs,
    stateLost: false,
    statusDetail:
      'The cell was stopped before it ended (its question was cancelled or reached its deadline); the output above is what it printed until then.',
  };
}

function normalizeCode(code: string): string {
  return code.replace(/\s+/g, ' ').trim();
}

/**
 * What happens after a model turn: the turn and its steps go into the trace,
 * an answer ends the work, code runs in the sandbox cell by cell (results into
 * the trace and the conversation, written files copied out), and the model is
 * told what went wrong (an unclosed block, no progress, the same failure again).
 */
export class TurnHandler {
  private readonly usageSoFar: Usage = { promptTokens: 0, completionTokens: 0 };
  private executions: number;
  /** Output ids of the cells this handler ran, and the artifacts it saved. */
  readonly outputIds: string[] = [];
  readonly artifacts: { outputId: string | null; path: string; sizeBytes: number }[] = [];
  /** The cells this handler ran, as a replay needs them (cancelled ones included). */
  readonly executed: ExecutedCell[] = [];
  private lastFailedCode: string | null = null;
  /** Notes for the model gathered during a turn; sent after its execution results. */
  private pendingNotes: string[] = [];

  constructor(private readonly settings: TurnHandlerSettings) {
    this.executions = settings.executionsBefore ?? 0;
  }

  /** Cells run in the thread so far, this handler's included. */
  get executionCount(): number {
    return this.executions;
  }

  /** Tokens the endpoint counted over every turn so far. */
  get usage(): Usage {
    return { ...this.usageSoFar };
  }

  async *afterTurn(round: number, turn: ModelTurn): AsyncGenerator<AgentEvent, void, undefined> {
    const { recorder, context, state } = this.settings;
    const at = new Date().toISOString();
    recorder.append({
      type: 'model-turn',
      round,
      at,
      text: turn.text,
      usage: turn.usage,
      durationMs: turn.durationMs,
      finishReason: turn.finishReason,
    });
    for (const step of turn.steps) {
      if (step.kind === 'execute') continue;
      recorder.append({ type: 'step', round, at, kind: step.kind, text: step.text, closed: step.closed });
    }
    if (turn.usage !== null) {
      this.usageSoFar.promptTokens += turn.usage.promptTokens;
      this.usageSoFar.completionTokens += turn.usage.completionTokens;
      context.observePromptTokens(turn.estimatedPromptTokens, turn.usage.promptTokens);
    }
    const complete = (step: ParsedStep): boolean =>
      isCompleteUnclosedCode(step, turn.finishReason, turn.cutAtExecute);
    const codes = turn.steps.filter(
      (step) => step.kind === 'code' && ((step.closed && step.text.length > 0) || complete(step)),
    );
    // Run as if closed, so the conversation reads as if closed too (DeepAnalyze's server appends it).
    const closing = codes.some((step) => !step.closed)
      ? `${turn.text.endsWith('\n') ? '' : '\n'}</Code>`
      : '';
    context.add('assistant', { role: 'assistant', content: turn.text + closing });
    if (turn.cutAtExecute) {
      yield recorder.notice(
        round,
        'warning',
        'The model wrote an <Execute> block itself (invented results); its reply was cut there and its code run for real.',
      );
    }

    if (codes.some((step) => !step.closed))
      yield recorder.notice(round, 'warning', completeUnclosedCodeNotice);
    const answer = turn.steps.find((step) => step.kind === 'answer');
    if (answer !== undefined) {
      state.answer = answer.text;
      if (codes.length > 0) {
        yield recorder.notice(
          round,
          'warning',
          'The reply holds both code and an answer; the code was not run.',
        );
      }
      if (!answer.closed) {
        yield recorder.notice(
          round,
          'warning',
          turn.finishReason === 'length'
            ? 'The answer was cut off by the token limit (no </Answer>); it is kept as it is.'
            : 'The answer has no closing </Answer>; it is kept as the model wrote it.',
        );
      }
      yield { type: 'answer-end', round, answer: answer.text };
      return;
    }
    const ask = turn.steps.find((step) => step.kind === 'ask' && step.text.length > 0);
    if (ask !== undefined) {
      if (codes.length > 0) {
        yield recorder.notice(
          round,
          'warning',
          'The reply holds both code and a question; the code was not run.',
        );
      }
      if ((this.settings.askMode ?? 'reply') === 'pause') {
        state.ask = ask.text;
        state.stalledTurns = 0;
        yield { type: 'ask', round, question: ask.text, reply: null };
        return;
      }
      yield { type: 'ask', round, question: ask.text, reply: askUnansweredReply };
      yield recorder.notice(round, 'ask-reply', askUnansweredReply);
      context.tellModel(askUnansweredReply);
      state.stalledTurns = 0;
      return;
    }
    if (state.finalAnswerRequestedAtRound !== null && codes.length > 0) {
      yield recorder.notice(
        round,
        'warning',
        'Code written after the request for a final answer was not run.',
      );
      return;
    }

    const executeTexts: string[] = [];
    for (const code of codes) {
      executeTexts.push(yield* this.runCell(round, code.text));
    }
    for (const message of executeMessages(this.settings.profile, executeTexts)) {
      context.add('execute', message);
    }

    for (const step of turn.steps) {
      if (step.kind === 'code' && !step.closed && !complete(step)) {
        const note = unclosedCodeNote(step, turn.finishReason);
        this.pendingNotes.push(note);
        yield recorder.notice(round, 'nudge', note);
      }
    }
    if (codes.length === 0) {
      state.stalledTurns += 1;
      this.pendingNotes.push(continueNudge);
      yield recorder.notice(round, 'nudge', continueNudge);
    } else {
      state.stalledTurns = 0;
    }
    for (const note of this.pendingNotes) context.tellModel(note);
    this.pendingNotes = [];
  }

  private async *runCell(round: number, code: string): AsyncGenerator<AgentEvent, string, undefined> {
    const { session, recorder, signal } = this.settings;
    this.executions += 1;
    const outputId = `E${this.executions}`;
    this.outputIds.push(outputId);
    yield { type: 'execution-start', round, outputId, code };
    const live = new LiveCellOutput({
      ...defaultLiveOutputLimits,
      maxKeptChars: session.limits.maxOutputBytes,
    });
    const startedMs = performance.now();
    const settled = session.execute(code, { signal, onOutput: live.push }).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    let outcome: Awaited<typeof settled> | 'output';
    do {
      outcome = await Promise.race([settled, live.arrival()]);
      for (const piece of live.take()) {
        yield { type: 'execution-output', round, outputId, stream: piece.stream, text: piece.text };
      }
    } while (outcome === 'output');
    if (!outcome.ok) {
      const error = outcome.error;
      if (DatalystError.isInstance(error) && error.code === 'CANCELLED') {
        // What the cell printed before the stop is kept: the trace and the report show it.
        const cancelled = cancelledResult(live, performance.now() - startedMs);
        recorder.cancelledExecution(round, outputId, code, cancelled);
        this.executed.push(executedCell(outputId, code, cancelled));
      }
      throw error;
    }
    const result = outcome.value;
    this.executed.push(executedCell(outputId, code, result));
    const executeText = formatExecuteText(result, this.settings.executeText);
    const omission = recorder.execution(round, outputId, code, result, executeText);
    yield { type: 'execution-end', round, outputId, result };
    if (omission !== null) yield omission;
    yield* this.saveArtifacts(round, result, outputId);
    yield* this.trackFailure(round, code, result);
    return executeText;
  }

  private async *saveArtifacts(
    round: number,
    result: CellResult,
    outputId: string,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    if (result.files.length === 0) return;
    const { session, recorder, signal } = this.settings;
    let collection;
    try {
      collection = await collectArtifacts(
        session,
        result.files,
        this.settings.outDir,
        this.settings.artifactBudget,
        signal,
      );
    } catch (error) {
      if (signal.aborted) throw error;
      yield recorder.notice(
        round,
        'warning',
        `Files of ${outputId} could not be copied out of the sandbox: ${errorText(error)}`,
      );
      return;
    }
    for (const artifact of collection.saved) {
      recorder.append({ type: 'artifact', at: new Date().toISOString(), outputId, ...artifact });
      this.artifacts.push({ outputId, path: artifact.path, sizeBytes: artifact.sizeBytes });
      yield { type: 'artifact-saved', outputId, path: artifact.path, sizeBytes: artifact.sizeBytes };
    }
    if (collection.skipped.length > 0) {
      const named = collection.skipped
        .slice(0, maxNamedSkippedFiles)
        .map((file) => `${clipText(file.path, maxQuotedPathChars)} (${file.why})`);
      const more = collection.skipped.length - named.length;
      const list = `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
      yield recorder.notice(round, 'warning', `Not copied from ${outputId}: ${list}`);
    }
  }

  private *trackFailure(
    round: number,
    code: string,
    result: CellResult,
  ): Generator<AgentEvent, void, undefined> {
    const { state } = this.settings;
    if (result.status === 'ok') {
      state.repeatedFailures = 0;
      this.lastFailedCode = null;
      return;
    }
    const key = normalizeCode(code);
    state.repeatedFailures = key === this.lastFailedCode ? state.repeatedFailures + 1 : 1;
    this.lastFailedCode = key;
    if (state.repeatedFailures >= 2) {
      const what = result.error === null ? result.status : `${result.error.name}: ${result.error.value}`;
      const nudge = repeatedFailureNudge(clipText(what, maxQuotedErrorChars));
      this.pendingNotes.push(nudge);
      yield this.settings.recorder.notice(round, 'nudge', nudge);
    }
  }
}
