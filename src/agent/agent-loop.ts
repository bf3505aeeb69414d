import path from 'node:path';
import { createSandbox } from '../sandbox/index.ts';
import type { SandboxSession, WorkspaceProfile } from '../sandbox/index.ts';
import type { InputFile } from '../trace/schema.ts';
import type { AnalyzeOptions } from './analyze-options.ts';
import { clipText, errorText } from './clip-text.ts';
import { ContextManager } from './context-manager.ts';
import type { AgentEvent, AnalysisResult } from './events.ts';
import { defaultExecuteTextOptions } from './execute-text.ts';
import { defaultFirstMessageLimits, formatFirstMessage } from './first-message.ts';
import { hashInputFiles, listInputFiles } from './input-files.ts';
import { resolveModelProfile, type ModelProfile } from './model-profile.ts';
import { noDataDecision } from './no-data.ts';
import { readModelTurn } from './model-turn.ts';
import { RunControl } from './run-control.ts';
import { runFailureFrom, type RunPhase } from './run-failure.ts';
import { newRunId } from './run-metadata.ts';
import { runStartRecord } from './run-start-record.ts';
import {
  defaultStopConditions,
  firstStop,
  type MutableLoopState,
  type StopCondition,
  type StopDecision,
} from './stop-conditions.ts';
import { defaultMaxTraceFigureBytes } from './trace-figure-budget.ts';
import { TraceRecorder } from './trace-recorder.ts';
import { TurnHandler } from './turn-handler.ts';

const nowIso = () => new Date().toISOString();

/**
 * One run: opens the trace and the sandbox, profiles the workspace, then
 * alternates model turns (model-turn.ts) and what follows them
 * (turn-handler.ts) until a stop condition fires, keeping the conversation
 * within its budget (context-manager.ts); ends the trace however it stops.
 */
class AnalysisRun {
  readonly runId: string;
  readonly outDir: string;
  private readonly profile: ModelProfile;
  /** False when the workspace profile failed as a whole (then it says nothing about the files). */
  private profileComputed = true;
  private openedRecorder: TraceRecorder | null = null;
  private inputFiles: InputFile[] = [];
  private readonly control = new RunControl();
  private startedAtMs = Date.now();
  private startedAt = new Date(this.startedAtMs).toISOString();
  private session: SandboxSession | null = null;
  private turns: TurnHandler | null = null;
  private readonly context: ContextManager;
  private readonly stopConditions: StopCondition[];
  private readonly maxRounds: number;
  private readonly deadlineMs: number | null;
  private readonly contextBudgetTokens: number;
  private endResult: AnalysisResult | null = null;
  /** Notices about a trace that could not be ended cleanly; streamed just before run-end. */
  private endProblems: AgentEvent[] = [];
  private readonly state: MutableLoopState;

  constructor(private readonly options: AnalyzeOptions) {
    this.runId = options.runId ?? newRunId();
    this.outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', this.runId));
    this.profile = resolveModelProfile(options.profile);
    this.maxRounds = options.maxRounds ?? 30;
    this.deadlineMs = options.deadlineMs ?? null;
    this.contextBudgetTokens =
      options.contextBudgetTokens ?? Math.floor(options.model.contextWindowTokens * 0.85);
    this.context = new ContextManager({
      contextBudgetTokens: this.contextBudgetTokens,
      replyReserveTokens:
        options.replyReserveTokens ??
        Math.min(options.model.maxReplyTokens ?? 4096, Math.floor(this.contextBudgetTokens / 4)),
      maxRounds: this.maxRounds,
    });
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

  private get recorder(): TraceRecorder {
    if (this.openedRecorder === null) throw new Error('AnalysisRun: the trace is not open yet');
    return this.openedRecorder;
  }

  private updateState(): void {
    this.state.elapsedMs = Date.now() - this.startedAtMs;
    this.state.contextTokens = this.context.tokens();
  }

  /**
   * The run, as events. The workspace is hashed before anything is written, so
   * a missing workspace throws (WorkspaceError) and leaves no run folder.
   */
  async *run(): AsyncGenerator<AgentEvent, void, undefined> {
    // Listed before anything is written (a missing workspace leaves no run
    // folder); hashed while the sandbox starts, not before it.
    const listedInputs = await listInputFiles(this.options.workspaceDir);
    this.startedAtMs = Date.now();
    this.startedAt = new Date(this.startedAtMs).toISOString();
    // The run has begun once its trace is open and the caller's signal and the deadline are armed.
    this.openedRecorder = TraceRecorder.open(this.outDir, {
      ...(this.options.traceSync === undefined ? {} : { sync: this.options.traceSync }),
      maxFigureBytes: this.options.maxTraceFigureBytes ?? defaultMaxTraceFigureBytes,
    });
    this.control.arm(this.options.signal, this.deadlineMs);
    const signal = this.control.signal;
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
      const hashing = hashInputFiles(listedInputs, signal);
      hashing.catch(() => {}); // awaited below, after the start
      try {
        this.session = await (this.options.createSandbox ?? createSandbox)({
          ...this.options.sandbox,
          workspaceDir: this.options.workspaceDir,
          signal,
        });
      } finally {
        // A file that cannot be hashed (deleted, unreadable) fails the run just below; the record then lists none.
        this.inputFiles = await hashing.catch(() => []);
        this.recorder.append(
          runStartRecord({
            options: this.options,
            runId: this.runId,
            startedAt: this.startedAt,
            inputFiles: this.inputFiles,
            profile: this.profile,
            maxRounds: this.maxRounds,
            deadlineMs: this.deadlineMs,
            contextBudgetTokens: this.contextBudgetTokens,
            session: this.session,
          }),
        );
      }
      await hashing;
      const profile = yield* this.profileWorkspace(this.session);
      // Nothing readable: the run ends `no-data` before any model turn (never an "answer" about nothing).
      const noData = noDataDecision(profile, this.profileComputed);

      if (this.profile.systemPrompt !== null) {
        this.context.add('system', { role: 'system', content: this.profile.systemPrompt });
      }
      const firstMessage = formatFirstMessage(this.options.instruction, profile, {
        ...defaultFirstMessageLimits,
        ...this.options.firstMessageLimits,
      });
      this.context.add('first', { role: 'user', content: firstMessage });
      const turns = new TurnHandler({
        session: this.session,
        recorder: this.recorder,
        context: this.context,
        state: this.state,
        profile: this.profile,
        signal,
        outDir: this.outDir,
        executeText: { ...defaultExecuteTextOptions, ...this.options.executeText },
        artifactBudget: {
          remainingBytes: this.options.maxArtifactBytes ?? 64 * 1024 * 1024,
          remainingFiles: this.options.maxArtifactFiles ?? 200,
        },
      });
      this.turns = turns;

      for (;;) {
        this.updateState();
        decision = noData ?? firstStop(this.stopConditions, this.state);
        if (decision !== null) break;
        const round = this.state.round + 1;
        // Counted when it starts: a run cancelled mid-round reports that round.
        this.state.round = round;
        yield { type: 'round-start', round };

        phase = 'model';
        const turn = yield* readModelTurn({
          model: this.options.model,
          messages: this.context.messages(),
          stop: this.profile.stop,
          round,
          signal,
          onRetry: (chunk) =>
            this.recorder.notice(
              round,
              'retry',
              // The reason can quote the endpoint's error body.
              `Model request failed (${clipText(chunk.reason, 300)}); retry ${chunk.retry} in ${chunk.delayMs} ms.`,
            ),
        });
        phase = 'sandbox';
        yield* turns.afterTurn(round, turn);
        if (this.state.answer === null && round < this.maxRounds) {
          for (const notice of this.context.prepareNextTurn(round, this.state)) {
            yield this.recorder.notice(round, notice.kind, notice.text);
          }
        }
      }
    } catch (error) {
      const failure = runFailureFrom(error, phase, this.control.stopCause);
      this.state.failure = failure;
      if (failure.reason === 'model-unavailable' || failure.reason === 'sandbox-failure') {
        yield { type: 'error', error: failure.error };
      }
      this.updateState();
      decision = firstStop(this.stopConditions, this.state);
    } finally {
      this.control.disarm();
      await this.closeSession();
      // The trace is ended here so that it ends however the run stops, also
      // when the caller stops reading the events (then nothing says why).
      this.endResult ??= this.endTrace(
        decision ?? { reason: 'cancelled', detail: 'The caller stopped reading the run before it ended.' },
      );
    }
    yield* this.endProblems;
    yield { type: 'run-end', result: this.endResult };
  }

  private async closeSession(): Promise<void> {
    const session = this.session;
    if (session === null) return;
    this.session = null;
    try {
      await session.close();
    } catch (error) {
      // No event: the caller may have stopped reading, and a yield here would never resume.
      this.recorder.warnIfPossible(
        this.state.round,
        `The sandbox session ${session.id} could not be closed: ${errorText(error)}`,
      );
    }
  }

  /** Writes run-end and trace.json; never throws (problems are kept for the events). */
  private endTrace(decision: StopDecision): AnalysisResult {
    const durationMs = Date.now() - this.startedAtMs;
    const usage = this.turns?.usage ?? { promptTokens: 0, completionTokens: 0 };
    this.endProblems = this.recorder.end({
      endedAt: nowIso(),
      durationMs,
      rounds: this.state.round,
      usage,
      termination: decision,
      answer: this.state.answer,
    });
    return {
      runId: this.runId,
      outDir: this.outDir,
      tracePath: this.recorder.tracePath,
      answer: this.state.answer,
      termination: decision,
      rounds: this.state.round,
      usage,
      durationMs,
    };
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
      profile = await session.profileWorkspace({ signal: this.control.signal });
    } catch (error) {
      if (this.control.signal.aborted) throw error;
      this.profileComputed = false;
      yield this.recorder.notice(
        0,
        'warning',
        `The workspace could not be profiled; the model sees file names and sizes only. ${errorText(error)}`,
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
    this.recorder.append({ type: 'workspace-profile', at: nowIso(), profile });
    yield { type: 'profile-end', profile };
    return profile;
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
