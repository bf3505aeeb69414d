import path from 'node:path';
import { SandboxFailureError } from '../errors/index.ts';
import {
  createSandbox,
  defaultSandboxLimits,
  readSandboxEnvironment,
  runnerImageTag,
} from '../sandbox/index.ts';
import type { CellResult, SandboxSession, WorkspaceProfile } from '../sandbox/index.ts';
import type { InputFile, TraceRecord, Usage } from '../trace/schema.ts';
import { TraceWriter } from '../trace/writer.ts';
import type { AnalyzeOptions } from './analyze-options.ts';
import { collectArtifacts, type ArtifactBudget } from './artifacts.ts';
import { compactConversation, type ConversationEntry } from './context-compaction.ts';
import { TokenCalibration } from './context-budget.ts';
import type { AgentEvent, AnalysisResult } from './events.ts';
import { defaultExecuteTextOptions, formatExecuteText, type ExecuteTextOptions } from './execute-text.ts';
import { defaultFirstMessageLimits, formatFirstMessage } from './first-message.ts';
import { hashWorkspaceFiles } from './input-files.ts';
import type { ChatMessage } from './language-model.ts';
import { executeMessages, resolveModelProfile, type ModelProfile } from './model-profile.ts';
import {
  continueNudge,
  finalAnswerRequest,
  lastRoundAnswerRequest,
  repeatedFailureNudge,
  unclosedCodeNote,
} from './model-notes.ts';
import { readModelTurn, type ModelTurn } from './model-turn.ts';
import { runFailureFrom, type RunPhase } from './run-failure.ts';
import { datalystVersion, newRunId } from './run-metadata.ts';
import {
  defaultStopConditions,
  firstStop,
  type LoopState,
  type StopCondition,
  type StopDecision,
} from './stop-conditions.ts';

type NoticeKind = Extract<TraceRecord, { type: 'notice' }>['kind'];

const nowIso = () => new Date().toISOString();

function normalizeCode(code: string): string {
  return code.replace(/\s+/g, ' ').trim();
}

class AnalysisRun {
  readonly runId: string;
  readonly outDir: string;
  private readonly profile: ModelProfile;
  private openedTrace: TraceWriter | null = null;
  private inputFiles: InputFile[] = [];
  private readonly controller = new AbortController();
  private stopCause: 'cancelled' | 'deadline' | null = null;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private removeAbortListener: () => void = () => undefined;
  private startedAtMs = Date.now();
  private startedAt = new Date(this.startedAtMs).toISOString();
  private session: SandboxSession | null = null;
  private readonly entries: ConversationEntry[] = [];
  private readonly calibration = new TokenCalibration();
  private readonly stopConditions: StopCondition[];
  private readonly executeTextOptions: ExecuteTextOptions;
  private readonly artifactBudget: ArtifactBudget;
  private readonly maxRounds: number;
  private readonly deadlineMs: number | null;
  readonly contextBudgetTokens: number;
  private readonly replyReserveTokens: number;
  private readonly usage: Usage = { promptTokens: 0, completionTokens: 0 };
  private executions = 0;
  private lastFailedCode: string | null = null;
  /** Notes for the model gathered during a turn; sent after its execution results. */
  private pendingNotes: string[] = [];
  private ended = false;
  private image: string | null = null;

  private readonly state: {
    -readonly [K in keyof LoopState]: LoopState[K];
  };

  constructor(private readonly options: AnalyzeOptions) {
    this.runId = options.runId ?? newRunId();
    this.outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', this.runId));
    this.profile = resolveModelProfile(options.profile);
    this.maxRounds = options.maxRounds ?? 30;
    this.deadlineMs = options.deadlineMs ?? null;
    this.contextBudgetTokens =
      options.contextBudgetTokens ?? Math.floor(options.model.contextWindowTokens * 0.85);
    this.replyReserveTokens =
      options.replyReserveTokens ??
      Math.min(options.model.maxReplyTokens ?? 4096, Math.floor(this.contextBudgetTokens / 4));
    this.executeTextOptions = { ...defaultExecuteTextOptions, ...options.executeText };
    this.artifactBudget = {
      remainingBytes: options.maxArtifactBytes ?? 64 * 1024 * 1024,
      remainingFiles: options.maxArtifactFiles ?? 200,
    };
    this.stopConditions = [
      ...defaultStopConditions({
        maxRounds: this.maxRounds,
        maxStalledTurns: options.maxStalledTurns ?? 3,
        maxRepeatedFailures: options.maxRepeatedFailures ?? 3,
      }),
      ...(options.stopWhen ?? []),
    ];
    this.state = {
      round: 0,
      answer: null,
      elapsedMs: 0,
      deadlineMs: this.deadlineMs,
      contextTokens: 0,
      contextBudgetTokens: this.contextBudgetTokens,
      finalAnswerRequestedAtRound: null,
      finalAnswerRequestReason: null,
      stalledTurns: 0,
      repeatedFailures: 0,
      failure: null,
    };
  }

  /** Opens the trace and arms the caller's signal and the deadline: the run has begun. */
  private begin(): void {
    this.openedTrace = TraceWriter.open(
      this.outDir,
      this.options.traceSync === undefined ? {} : { sync: this.options.traceSync },
    );
    const userSignal = this.options.signal;
    const onAbort = () => this.stop('cancelled', userSignal?.reason);
    userSignal?.addEventListener('abort', onAbort, { once: true });
    this.removeAbortListener = () => userSignal?.removeEventListener('abort', onAbort);
    if (userSignal?.aborted) this.stop('cancelled', userSignal.reason);
    if (this.deadlineMs !== null) {
      this.deadlineTimer = setTimeout(() => this.stop('deadline', new Error('deadline')), this.deadlineMs);
    }
  }

  private get trace(): TraceWriter {
    if (this.openedTrace === null) throw new Error('AnalysisRun: the trace is not open yet');
    return this.openedTrace;
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private stop(cause: 'cancelled' | 'deadline', reason: unknown): void {
    this.stopCause ??= cause;
    this.controller.abort(reason);
  }

  private notice(round: number, kind: NoticeKind, text: string): AgentEvent {
    this.trace.append({ type: 'notice', at: nowIso(), round, kind, text });
    return { type: 'notice', round, kind, text };
  }

  private messages(): ChatMessage[] {
    return this.entries.map((entry) => entry.message);
  }

  /** Adds a note for the model; merged into a user message that is already last (templates want alternating roles). */
  private tellModel(text: string): void {
    const last = this.entries.at(-1);
    if (last !== undefined && last.message.role === 'user' && last.kind !== 'first') {
      this.entries[this.entries.length - 1] = {
        kind: last.kind,
        message: { role: 'user', content: `${last.message.content}\n\n${text}` },
      };
      return;
    }
    this.entries.push({ kind: 'nudge', message: { role: 'user', content: text } });
  }

  private writeRunStart(): void {
    // When the session could not be opened, the limits it would have had.
    const limits = this.session?.limits ?? { ...defaultSandboxLimits, ...this.options.sandbox?.limits };
    this.trace.append({
      type: 'run-start',
      version: 1,
      runId: this.runId,
      startedAt: this.startedAt,
      instruction: this.options.instruction,
      workspace: { path: path.resolve(this.options.workspaceDir), files: this.inputFiles },
      model: {
        id: this.options.model.id,
        profile: this.options.model.offline === true ? 'offline' : this.profile.name,
        baseUrl: this.options.model.baseUrl ?? null,
        offline: this.options.model.offline === true,
      },
      limits: {
        maxRounds: this.maxRounds,
        cellTimeoutMs: limits.cellTimeoutMs,
        memoryMb: limits.memoryMb,
        cpus: limits.cpus,
        deadlineMs: this.deadlineMs,
        contextBudgetTokens: this.contextBudgetTokens,
      },
      environment: {
        datalystVersion,
        nodeVersion: process.version,
        sandboxBackend: this.session?.backend ?? this.options.sandbox?.backend ?? 'docker',
        image: this.image,
      },
    });
  }

  /**
   * The runner image, for the trace. The session does not tell which image it
   * runs, so this repeats createSandbox's choice (option, DATALYST_IMAGE, the
   * tag of docker/python-runner); unknown (null) for a factory of the caller's.
   */
  private async imageForTrace(): Promise<string | null> {
    if (this.options.sandbox?.image !== undefined) return this.options.sandbox.image;
    if (this.options.createSandbox !== undefined) return null;
    const environment = readSandboxEnvironment();
    if ((this.options.sandbox?.backend ?? environment.backend ?? 'docker') !== 'docker') return null;
    return environment.image ?? (await runnerImageTag());
  }

  private updateState(): void {
    this.state.elapsedMs = Date.now() - this.startedAtMs;
    this.state.contextTokens = this.calibration.tokens(this.messages());
  }

  /**
   * The run, as events. The workspace is hashed before anything is written, so
   * a missing workspace throws (WorkspaceError) and leaves no run folder.
   */
  async *run(): AsyncGenerator<AgentEvent, void, undefined> {
    this.inputFiles = await hashWorkspaceFiles(this.options.workspaceDir, this.options.signal);
    this.startedAtMs = Date.now();
    this.startedAt = new Date(this.startedAtMs).toISOString();
    this.begin();
    let decision: StopDecision | null = null;
    let phase: RunPhase = 'setup';
    try {
      yield {
        type: 'run-start',
        runId: this.runId,
        outDir: this.outDir,
        instruction: this.options.instruction,
        modelId: this.options.model.id,
      };
      phase = 'sandbox';
      this.image = await this.imageForTrace();
      try {
        this.session = await (this.options.createSandbox ?? createSandbox)({
          ...this.options.sandbox,
          workspaceDir: this.options.workspaceDir,
          signal: this.signal,
        });
      } finally {
        this.writeRunStart();
      }
      const profile = yield* this.profileWorkspace(this.session);

      if (this.profile.systemPrompt !== null) {
        this.entries.push({
          kind: 'system',
          message: { role: 'system', content: this.profile.systemPrompt },
        });
      }
      const firstMessage = formatFirstMessage(this.options.instruction, profile, {
        ...defaultFirstMessageLimits,
        ...this.options.firstMessageLimits,
      });
      this.entries.push({ kind: 'first', message: { role: 'user', content: firstMessage } });

      for (;;) {
        this.updateState();
        decision = firstStop(this.stopConditions, this.state);
        if (decision !== null) break;
        const round = this.state.round + 1;
        // Counted when it starts: a run cancelled mid-round reports that round.
        this.state.round = round;
        yield { type: 'round-start', round };

        phase = 'model';
        const turn = yield* readModelTurn({
          model: this.options.model,
          messages: this.messages(),
          stop: this.profile.stop,
          round,
          signal: this.signal,
          onRetry: (chunk) =>
            this.notice(
              round,
              'retry',
              `Model request failed (${chunk.reason}); retry ${chunk.retry} in ${chunk.delayMs} ms.`,
            ),
        });
        phase = 'sandbox';
        yield* this.afterTurn(round, turn);
        if (this.state.answer === null && round < this.maxRounds) yield* this.manageContext(round);
      }
    } catch (error) {
      const failure = runFailureFrom(error, phase, this.stopCause);
      this.state.failure = failure;
      if (failure.reason === 'model-unavailable' || failure.reason === 'sandbox-failure') {
        yield { type: 'error', error: failure.error };
      }
      this.updateState();
      decision = firstStop(this.stopConditions, this.state);
    } finally {
      clearTimeout(this.deadlineTimer);
      this.removeAbortListener();
      if (this.session !== null) {
        const session = this.session;
        this.session = null;
        try {
          await session.close();
        } catch (error) {
          // No event: the caller may have stopped reading, and a yield here would never resume.
          const message = error instanceof Error ? error.message : String(error);
          this.trace.append({
            type: 'notice',
            at: nowIso(),
            round: this.state.round,
            kind: 'warning',
            text: `The sandbox session ${session.id} could not be closed: ${message}`,
          });
        }
      }
      if (!this.ended) {
        // The trace is ended here so that it ends however the run stops, also
        // when the caller stops reading the events (then nothing says why).
        this.endTrace(
          decision ?? { reason: 'cancelled', detail: 'The caller stopped reading the run before it ended.' },
        );
      }
    }
    yield { type: 'run-end', result: this.result(decision) };
  }

  private endResult: AnalysisResult | null = null;

  private endTrace(decision: StopDecision): AnalysisResult {
    this.ended = true;
    const durationMs = Date.now() - this.startedAtMs;
    const result: AnalysisResult = {
      runId: this.runId,
      outDir: this.outDir,
      tracePath: this.trace.jsonlPath,
      answer: this.state.answer,
      termination: decision,
      rounds: this.state.round,
      usage: { ...this.usage },
      durationMs,
    };
    try {
      this.trace.append({
        type: 'run-end',
        endedAt: nowIso(),
        durationMs,
        rounds: this.state.round,
        usage: { ...this.usage },
        termination: decision,
        answer: this.state.answer,
      });
    } finally {
      this.trace.finish();
    }
    this.endResult = result;
    return result;
  }

  private result(decision: StopDecision | null): AnalysisResult {
    return (
      this.endResult ?? this.endTrace(decision ?? { reason: 'cancelled', detail: 'The run ended early.' })
    );
  }

  /**
   * The workspace profile for the first message. A profile that fails (a file
   * that breaks the profiler, a profiler bug) does not stop the analysis: the
   * model gets the file names and sizes, as DeepAnalyze's own layout has them,
   * and the trace says why there is no more.
   */
  private async *profileWorkspace(
    session: SandboxSession,
  ): AsyncGenerator<AgentEvent, WorkspaceProfile, undefined> {
    let profile: WorkspaceProfile;
    try {
      profile = await session.profileWorkspace({ signal: this.signal });
    } catch (error) {
      if (this.signal.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      yield this.notice(
        0,
        'warning',
        `The workspace could not be profiled; the model sees file names and sizes only. ${message}`,
      );
      profile = {
        truncated: false,
        files: this.inputFiles.map((file) => ({
          path: file.path,
          sizeBytes: file.sizeBytes,
          format: 'unsupported' as const,
          tables: [],
          error: 'not profiled',
          notes: [],
        })),
      };
    }
    this.trace.append({ type: 'workspace-profile', at: nowIso(), profile });
    yield { type: 'profile-end', profile };
    return profile;
  }

  private async *afterTurn(round: number, turn: ModelTurn): AsyncGenerator<AgentEvent, void, undefined> {
    const at = nowIso();
    this.trace.append({
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
      this.trace.append({ type: 'step', round, at, kind: step.kind, text: step.text, closed: step.closed });
    }
    if (turn.usage !== null) {
      this.usage.promptTokens += turn.usage.promptTokens;
      this.usage.completionTokens += turn.usage.completionTokens;
      this.calibration.observe(turn.estimatedPromptTokens, turn.usage.promptTokens);
    }
    this.entries.push({ kind: 'assistant', message: { role: 'assistant', content: turn.text } });
    if (turn.cutAtExecute) {
      yield this.notice(
        round,
        'warning',
        'The model wrote an <Execute> block itself (invented results); its reply was cut there and its code run for real.',
      );
    }

    const codes = turn.steps.filter((step) => step.kind === 'code' && step.closed && step.text.length > 0);
    const answer = turn.steps.find((step) => step.kind === 'answer');
    if (answer !== undefined) {
      this.state.answer = answer.text;
      if (codes.length > 0) {
        yield this.notice(round, 'warning', 'The reply holds both code and an answer; the code was not run.');
      }
      if (!answer.closed) {
        yield this.notice(
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
    if (this.state.finalAnswerRequestedAtRound !== null && codes.length > 0) {
      yield this.notice(round, 'warning', 'Code written after the request for a final answer was not run.');
      return;
    }

    const executeTexts: string[] = [];
    for (const code of codes) {
      executeTexts.push(yield* this.runCell(round, code.text));
    }
    for (const message of executeMessages(this.profile, executeTexts)) {
      this.entries.push({ kind: 'execute', message });
    }

    for (const step of turn.steps) {
      if (step.kind === 'code' && !step.closed) {
        const note = unclosedCodeNote(step, turn.finishReason);
        this.pendingNotes.push(note);
        yield this.notice(round, 'nudge', note);
      }
    }
    if (codes.length === 0) {
      this.state.stalledTurns += 1;
      this.pendingNotes.push(continueNudge);
      yield this.notice(round, 'nudge', continueNudge);
    } else {
      this.state.stalledTurns = 0;
    }
    for (const note of this.pendingNotes) this.tellModel(note);
    this.pendingNotes = [];
  }

  private async *runCell(round: number, code: string): AsyncGenerator<AgentEvent, string, undefined> {
    const session = this.session;
    if (session === null) throw new SandboxFailureError('The sandbox session is closed.');
    this.executions += 1;
    const outputId = `E${this.executions}`;
    yield { type: 'execution-start', round, outputId, code };
    const result = await session.execute(code, { signal: this.signal });
    const executeText = formatExecuteText(result, this.executeTextOptions);
    this.trace.append({ type: 'execution', round, at: nowIso(), outputId, code, result, executeText });
    yield { type: 'execution-end', round, outputId, result };
    yield* this.saveArtifacts(round, session, result, outputId);
    yield* this.trackFailure(round, code, result);
    return executeText;
  }

  private async *saveArtifacts(
    round: number,
    session: SandboxSession,
    result: CellResult,
    outputId: string,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    if (result.files.length === 0) return;
    let collection;
    try {
      collection = await collectArtifacts(
        session,
        result.files,
        this.outDir,
        this.artifactBudget,
        this.signal,
      );
    } catch (error) {
      if (this.signal.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      yield this.notice(
        round,
        'warning',
        `Files of ${outputId} could not be copied out of the sandbox: ${message}`,
      );
      return;
    }
    for (const artifact of collection.saved) {
      this.trace.append({ type: 'artifact', at: nowIso(), outputId, ...artifact });
      yield { type: 'artifact-saved', outputId, path: artifact.path, sizeBytes: artifact.sizeBytes };
    }
    if (collection.skipped.length > 0) {
      const list = collection.skipped.map((file) => `${file.path} (${file.why})`).join(', ');
      yield this.notice(round, 'warning', `Not copied from ${outputId}: ${list}`);
    }
  }

  private *trackFailure(
    round: number,
    code: string,
    result: CellResult,
  ): Generator<AgentEvent, void, undefined> {
    if (result.status === 'ok') {
      this.state.repeatedFailures = 0;
      this.lastFailedCode = null;
      return;
    }
    const key = normalizeCode(code);
    this.state.repeatedFailures = key === this.lastFailedCode ? this.state.repeatedFailures + 1 : 1;
    this.lastFailedCode = key;
    if (this.state.repeatedFailures >= 2) {
      const what = result.error === null ? result.status : `${result.error.name}: ${result.error.value}`;
      const nudge = repeatedFailureNudge(what);
      this.pendingNotes.push(nudge);
      yield this.notice(round, 'nudge', nudge);
    }
  }

  /** Before the next turn: shorten old outputs when the conversation grows, and ask once for the final answer near the budget. */
  private *manageContext(round: number): Generator<AgentEvent, void, undefined> {
    const compactAt = Math.floor(this.contextBudgetTokens * 0.7);
    let tokens = this.calibration.tokens(this.messages());
    if (tokens > compactAt) {
      const before = tokens;
      const { shortened } = compactConversation(this.entries, {
        keepRecent: 2,
        maxCharsPerOldResult: 1500,
        charsToSave: Math.ceil((tokens - compactAt * 0.8) * 3.5),
      });
      if (shortened > 0) {
        tokens = this.calibration.tokens(this.messages());
        yield this.notice(
          round,
          'compaction',
          `Shortened ${shortened} older execution output${shortened === 1 ? '' : 's'} (about ${before} → ${tokens} tokens).`,
        );
      }
    }
    if (
      tokens + this.replyReserveTokens > this.contextBudgetTokens &&
      this.state.finalAnswerRequestedAtRound === null
    ) {
      this.state.finalAnswerRequestedAtRound = round;
      this.state.finalAnswerRequestReason = 'context-budget';
      this.tellModel(finalAnswerRequest);
      yield this.notice(round, 'final-answer-request', finalAnswerRequest);
    } else if (round + 1 === this.maxRounds && this.state.finalAnswerRequestedAtRound === null) {
      // Without this, a run that hits the round limit ends with no answer at all.
      this.state.finalAnswerRequestedAtRound = round;
      this.state.finalAnswerRequestReason = 'max-rounds';
      this.tellModel(lastRoundAnswerRequest);
      yield this.notice(round, 'final-answer-request', lastRoundAnswerRequest);
    }
    this.state.contextTokens = this.calibration.tokens(this.messages());
  }
}

/**
 * Runs an analysis and streams what happens, as typed events. The stream
 * always ends with `run-end` (errors arrive as `error` events before it). The
 * trace is on disk as it goes; breaking out of the iteration cancels the run,
 * closes the sandbox and ends the trace with `cancelled`.
 *
 * Throws on the first iteration, before any event and without writing
 * anything, when the workspace folder is missing (WorkspaceError) or the run
 * folder already holds a trace (ConfigError).
 */
export function streamAnalysis(options: AnalyzeOptions): AsyncGenerator<AgentEvent, void, undefined> {
  // The run's own generator, not a wrapper around it: every event would pay for one more hop.
  return new AnalysisRun(options).run();
}

/** Runs an analysis to its end and returns the result (see `streamAnalysis` for the events). */
export async function analyze(options: AnalyzeOptions): Promise<AnalysisResult> {
  for await (const event of streamAnalysis(options)) {
    if (event.type === 'run-end') return event.result;
  }
  // streamAnalysis always ends with run-end; reaching here is a bug.
  throw new Error('streamAnalysis ended without run-end');
}
