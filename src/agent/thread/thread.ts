import path from 'node:path';
import { DatalystError, SandboxFailureError, ThreadStateError } from '../../errors/index.ts';
import { createSandbox } from '../../sandbox/index.ts';
import type { SandboxSession, WorkspaceProfile } from '../../sandbox/index.ts';
import type { InputFile, Usage } from '../../trace/schema.ts';
import { noDataDecision } from '../no-data.ts';
import { runTurnLoop } from '../agent-loop.ts';
import type { ArtifactBudget } from '../artifacts.ts';
import { errorText } from '../clip-text.ts';
import { ContextManager } from '../context-manager.ts';
import { runErrorOf, type AgentEvent, type AnalysisResult, type TurnResult } from '../events.ts';
import { defaultExecuteTextOptions } from '../execute-text.ts';
import { defaultFirstMessageLimits, formatFileSize, formatFirstMessage } from '../first-message.ts';
import { hashInputFiles, hashWorkspaceFiles, listInputFiles } from '../input-files.ts';
import { resolveModelProfile, type ModelProfile } from '../model-profile.ts';
import { stoppedTurnNote, threadFullText } from '../model-notes.ts';
import { RunControl } from '../run-control.ts';
import { assertThreadOptions } from '../options-schema.ts';
import { internalError, isInternalFailure, runFailureFrom } from '../run-failure.ts';
import { newRunId } from '../run-metadata.ts';
import { runStartRecord } from '../run-start-record.ts';
import {
  defaultStopConditions,
  type MutableLoopState,
  type StopCondition,
  type StopDecision,
} from '../stop-conditions.ts';
import { defaultMaxTraceFigureBytes } from '../trace-figure-budget.ts';
import { TraceRecorder } from '../trace-recorder.ts';
import { TurnHandler, type ExecutedCell } from '../turn-handler.ts';
import { diffInputFiles, formatWorkspaceChangeNote, type WorkspaceChange } from '../workspace-change.ts';
import { replayCells, replayTexts } from './replay.ts';
import {
  assertRunFolderIsFree,
  createRunFolder,
  removeUnusedRunFolder,
  withRunFolderLeftOut,
} from './run-folder.ts';
import type { AskOptions, ThreadOptions } from './thread-options.ts';
import { ThreadTurn } from './thread-turn.ts';

const nowIso = () => new Date().toISOString();

/** What `close()` returns: the thread as a whole, in the shape of a run's result (the last turn's answer and termination). */
export interface ThreadSummary extends AnalysisResult {
  turns: number;
  /** Problems ending the trace (a full disk): also in trace.jsonl when it could still be written. */
  endNotices: AgentEvent[];
}

/** Where the thread's sandbox is: not opened yet, open, released (idle, failed, or resumed from disk: the next question replays), closed. */
export type ThreadSandboxState = 'none' | 'open' | 'released' | 'closed';

/** @internal What a resumed thread starts from (see resume-thread.ts). */
export interface RestoredThread {
  instruction: string;
  context: ContextManager;
  cells: ExecutedCell[];
  rounds: number;
  usage: Usage;
  turns: number;
  /** The model's open question, when the last turn ended `asked`. */
  pendingAsk: string | null;
  lastTurn: Pick<TurnResult, 'answer' | 'termination' | 'error'> | null;
  artifactBudget: ArtifactBudget;
  /** The recorded `no-data` decision, when the last question found nothing readable (a change is seen before the next). */
  noData: StopDecision | null;
  /** Opens the next question's message: the last turn was stopped (see `stoppedTurnNote`). */
  noteBeforeNextQuestion: string | null;
}

/** The context budget of a thread: the caller's, or 85 % of the model's window. */
export function contextBudgetFor(options: ThreadOptions): number {
  return options.contextBudgetTokens ?? Math.floor(options.model.contextWindowTokens * 0.85);
}

/** Room kept free for one reply: the model's max reply tokens (4096 when unknown), at most a quarter of the budget. */
export function replyReserveFor(options: ThreadOptions): number {
  return (
    options.replyReserveTokens ??
    Math.min(options.model.maxReplyTokens ?? 4096, Math.floor(contextBudgetFor(options) / 4))
  );
}

function emptyState(
  contextBudgetTokens: number,
  deadlineMs: number | null,
  roundsBefore: number,
): MutableLoopState {
  return {
    round: 0,
    roundsBefore,
    answer: null,
    ask: null,
    elapsedMs: 0,
    deadlineMs,
    contextTokens: 0,
    contextBudgetTokens,
    finalAnswerRequestedAtRound: null,
    finalAnswerRequestReason: null,
    stalledTurns: 0,
    repeatedFailures: 0,
    failure: null,
  };
}

/**
 * A conversation on one workspace: one sandbox session whose kernel keeps its
 * variables from question to question, the conversation the model sees, and
 * one run folder whose trace records every turn. Open one with `openThread`,
 * or `resumeThread` from a run folder; see `ThreadOptions` for an example.
 */
export class Thread implements AsyncDisposable {
  readonly runId: string;
  /** The run folder: trace.jsonl, artifacts/, and the report once rendered. */
  readonly outDir: string;
  readonly workspaceDir: string;
  /** The outermost folder `openThread` created for the run folder (null: it was there), taken back when nothing was asked. */
  private readonly createdDir: string | null;
  private readonly profile: ModelProfile;
  private readonly maxRounds: number;
  private readonly deadlineMs: number | null;
  private readonly contextBudgetTokens: number;
  private readonly stopConditions: StopCondition[];
  /** Set when the workspace profile found nothing readable: every turn then ends `no-data` before the model is asked, until the workspace changes. */
  private noData: StopDecision | null;
  /** The input files as the thread knows them: hashed when it opened (or folded from the trace), then as each change found them. */
  private knownInputs: Promise<InputFile[]>;
  private readonly context: ContextManager;
  private session: SandboxSession | null = null;
  private sandbox: ThreadSandboxState;
  private started: boolean;
  private conversationStarted: boolean;
  private instruction: string | null;
  private cells: ExecutedCell[];
  private rounds: number;
  private readonly usage: Usage;
  private turnCount: number;
  private pendingAsk: string | null;
  private lastTurn: Pick<TurnResult, 'answer' | 'termination' | 'error'> | null;
  /** Set when a turn whose question the model had seen was stopped: the next question's message begins with it. */
  private noteBeforeNextQuestion: string | null;
  private readonly artifactBudget: ArtifactBudget;
  private startedAtMs = Date.now();
  private startedAt = nowIso();
  private busy = false;
  private closed = false;
  private activeControl: RunControl | null = null;
  /** The turn asked last while it runs: close() must be able to end it even when nobody reads it. */
  private activeTurn: {
    events: AsyncGenerator<AgentEvent, void, undefined>;
    started: boolean;
    abandon: () => void;
  } | null = null;
  private turnDone: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private releasing: Promise<void> = Promise.resolve();
  private summary: ThreadSummary | null = null;
  /** A bug in Datalyst that ended a turn: the thread takes no more questions and its trace is left as a crash leaves it. */
  private bug: DatalystError | null = null;

  /** @internal Use `openThread` or `resumeThread`. */
  constructor(
    private readonly options: ThreadOptions,
    private readonly recorder: TraceRecorder,
    /** Hashed while the first sandbox starts (see `openThread`); awaited when run-start is written. A resumed thread's are the trace's. */
    private readonly inputFiles: Promise<InputFile[]>,
    identity: { runId: string; outDir: string; createdDir: string | null },
    restored: RestoredThread | null,
  ) {
    // A failure surfaces where it is awaited; unawaited, it must not crash the process.
    inputFiles.catch(() => {});
    this.knownInputs = inputFiles;
    this.runId = identity.runId;
    this.outDir = identity.outDir;
    this.createdDir = identity.createdDir;
    this.workspaceDir = path.resolve(options.workspaceDir);
    this.profile = resolveModelProfile(options.profile);
    this.maxRounds = options.maxRounds ?? 30;
    this.deadlineMs = options.deadlineMs ?? null;
    this.contextBudgetTokens = contextBudgetFor(options);
    this.context =
      restored?.context ??
      new ContextManager({
        contextBudgetTokens: this.contextBudgetTokens,
        replyReserveTokens: replyReserveFor(options),
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
    this.started = restored !== null;
    this.conversationStarted = restored !== null;
    this.sandbox = restored === null ? 'none' : 'released';
    this.instruction = restored?.instruction ?? null;
    this.cells = restored?.cells ?? [];
    this.rounds = restored?.rounds ?? 0;
    this.usage = restored?.usage ?? { promptTokens: 0, completionTokens: 0 };
    this.turnCount = restored?.turns ?? 0;
    this.pendingAsk = restored?.pendingAsk ?? null;
    this.lastTurn = restored?.lastTurn ?? null;
    this.noData = restored?.noData ?? null;
    this.noteBeforeNextQuestion = restored?.noteBeforeNextQuestion ?? null;
    this.artifactBudget = restored?.artifactBudget ?? {
      remainingBytes: options.maxArtifactBytes ?? 64 * 1024 * 1024,
      remainingFiles: options.maxArtifactFiles ?? 200,
    };
  }

  get tracePath(): string {
    return this.recorder.tracePath;
  }

  /** Questions asked so far (a turn that is running counts). */
  get turns(): number {
    return this.turnCount;
  }

  get sandboxState(): ThreadSandboxState {
    return this.sandbox;
  }

  /** The model's question waiting for the user's reply (the last turn ended `asked`), or null. */
  get openQuestion(): string | null {
    return this.pendingAsk;
  }

  /** True while a turn runs. */
  get running(): boolean {
    return this.busy;
  }

  /**
   * Asks the next question (or, after a turn that ended `asked`, gives the
   * reply). The turn streams its events and resolves to its result; the
   * thread stays usable whatever the turn's termination. Throws
   * ThreadStateError when a turn is already running or the thread is closed.
   */
  ask(question: string, options: AskOptions = {}): ThreadTurn {
    if (this.closed) throw new ThreadStateError('THREAD_CLOSED', `The thread ${this.runId} is closed.`);
    if (this.busy) {
      throw new ThreadStateError('THREAD_BUSY', `A turn of the thread ${this.runId} is still running.`);
    }
    this.busy = true;
    clearTimeout(this.idleTimer);
    let settle: (result: TurnResult) => void = () => undefined;
    let fail: (error: unknown) => void = () => undefined;
    const settled = new Promise<TurnResult>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    let markDone: () => void = () => undefined;
    this.turnDone = new Promise((resolve) => {
      markDone = resolve;
    });
    const events = this.turn(question, options, (result) => {
      settle(result);
      markDone();
    });
    const active = {
      events: undefined as unknown as AsyncGenerator<AgentEvent, void, undefined>,
      started: false,
      // A turn closed before it began: it never runs, and its result says why.
      abandon: () => {
        this.busy = false;
        this.activeTurn = null;
        fail(
          new ThreadStateError(
            'THREAD_CLOSED',
            `The thread ${this.runId} was closed before this question ran.`,
          ),
        );
        markDone();
      },
    };
    // A turn that throws before its first event (none does today) still settles.
    active.events = (async function* () {
      active.started = true;
      try {
        yield* events;
      } catch (error) {
        fail(error);
        markDone();
        throw error;
      }
    })();
    this.activeTurn = active;
    return new ThreadTurn(active.events, settled);
  }

  /** Closes the sandbox now (its variables are replayed on the next question). Waits for a running turn to end first. */
  async releaseSandbox(): Promise<void> {
    await this.turnDone;
    await this.closeSession('released');
  }

  /**
   * Ends the thread: cancels a running turn, closes the sandbox, appends
   * `run-end` and writes `trace.json`. Safe to call twice. A thread closed
   * before any question leaves nothing behind: no trace, and no run folder
   * when `openThread` created it (a folder that was there stays).
   */
  async close(): Promise<ThreadSummary> {
    if (this.summary !== null) return this.summary;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const active = this.activeTurn;
    if (active !== null && !active.started) {
      active.abandon();
    } else if (active !== null) {
      this.activeControl?.cancel(new Error('The thread was closed.'));
      // Ends the turn even when nobody reads its events any more (its cleanup runs at its next event).
      void active.events.return(undefined).catch(() => undefined);
    }
    await this.turnDone;
    await this.closeSession('closed');
    const durationMs = this.started ? Date.now() - this.startedAtMs : 0;
    const termination: StopDecision = this.lastTurn?.termination ?? {
      reason: 'cancelled',
      detail: 'The thread was closed before any question was answered.',
    };
    let endNotices: AgentEvent[] = [];
    if (this.bug !== null) {
      // No termination names a bug and no other is true: no run-end, as after a crash (readers handle that).
      // An empty trace goes; one with records is closed as written (discardIfEmpty alone left it open).
      this.recorder.discardIfEmpty();
      this.recorder.abandon();
    } else if (this.started) {
      endNotices = this.recorder.end({
        endedAt: nowIso(),
        durationMs,
        rounds: this.rounds,
        usage: { ...this.usage },
        termination,
        answer: this.lastTurn?.answer ?? null,
      });
    } else {
      this.recorder.discardIfEmpty();
    }
    // Nothing was asked: the folders made for the run go too (never one that was there, or holds anything).
    if (!this.started) await removeUnusedRunFolder(this.outDir, this.createdDir);
    this.summary = {
      runId: this.runId,
      outDir: this.outDir,
      tracePath: this.recorder.tracePath,
      answer: this.lastTurn?.answer ?? null,
      termination,
      ...(this.lastTurn?.error === undefined ? {} : { error: this.lastTurn.error }),
      rounds: this.rounds,
      usage: { ...this.usage },
      durationMs,
      turns: this.turnCount,
      endNotices,
    };
    return this.summary;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async closeSession(next: ThreadSandboxState): Promise<void> {
    await this.releasing;
    const session = this.session;
    this.session = null;
    if (this.sandbox !== 'closed') this.sandbox = next;
    if (session === null) return;
    this.releasing = session.close().catch((error: unknown) => {
      this.recorder.warnIfPossible(
        this.rounds,
        `The sandbox session ${session.id} could not be closed: ${errorText(error)}`,
      );
    });
    await this.releasing;
  }

  private armIdleTimer(): void {
    const idleMs = this.options.idleTimeoutMs ?? null;
    if (idleMs === null || this.closed || this.session === null) return;
    this.idleTimer = setTimeout(() => {
      if (!this.busy) void this.closeSession('released');
    }, idleMs);
    this.idleTimer.unref();
  }

  private async openSession(signal: AbortSignal): Promise<SandboxSession> {
    let session: SandboxSession;
    try {
      session = await (this.options.createSandbox ?? createSandbox)({
        ...this.options.sandbox,
        workspaceDir: this.options.workspaceDir,
        signal,
      });
    } catch (error) {
      // createSandbox maps Docker's errors; a caller's factory may throw anything, and it is still the sandbox's.
      if (DatalystError.isInstance(error) || signal.aborted) throw error;
      throw new SandboxFailureError(`The sandbox could not be opened: ${errorText(error)}`, { cause: error });
    }
    this.session = session;
    this.sandbox = 'open';
    return session;
  }

  /** The first question: the run begins (run-start, sandbox, workspace profile, the first message). */
  private async *begin(question: string, signal: AbortSignal): AsyncGenerator<AgentEvent, void, undefined> {
    if (!this.started) {
      this.instruction = question;
      this.startedAtMs = Date.now();
      this.startedAt = new Date(this.startedAtMs).toISOString();
      yield {
        type: 'run-start',
        runId: this.runId,
        outDir: this.outDir,
        instruction: question,
        modelId: this.options.model.id,
      };
      try {
        await this.openSession(signal);
      } finally {
        // A listing that failed now (the folder gone) leaves the inputs hashed at open: the session says why.
        const inputFiles = await this.inputsAtStart(signal).catch(() => this.inputFiles);
        this.recorder.append(
          runStartRecord({
            options: { ...this.options, instruction: question },
            runId: this.runId,
            startedAt: this.startedAt,
            inputFiles,
            profile: this.profile,
            maxRounds: this.maxRounds,
            deadlineMs: this.deadlineMs,
            contextBudgetTokens: this.contextBudgetTokens,
            session: this.session,
          }),
        );
        // Only now: a run-start that could not be written leaves no trace behind, not one without its start.
        this.started = true;
      }
    } else if (this.session === null) {
      await this.openSession(signal);
    }
    const session = this.session;
    if (session === null) throw new Error('Thread.begin: no session');
    const profile = yield* this.profileWorkspace(
      session,
      signal,
      this.options.workspaceProfile,
      () => this.inputFiles,
    );
    if (this.profile.systemPrompt !== null) {
      this.context.add('system', { role: 'system', content: this.profile.systemPrompt });
    }
    this.context.add('first', {
      role: 'user',
      content: formatFirstMessage(question, profile, {
        ...defaultFirstMessageLimits,
        ...this.options.firstMessageLimits,
      }),
    });
    this.conversationStarted = true;
  }

  /**
   * The inputs as the first question's sandbox got them: those hashed when
   * the thread opened, hashed again when the files listed now differ (files
   * put into the workspace between `openThread` and the first question were
   * missing from run-start, and the next change found them "added").
   */
  private async inputsAtStart(signal: AbortSignal): Promise<InputFile[]> {
    const hashed = await this.inputFiles;
    const listed = await listInputFiles(this.workspaceDir, this.options.sandbox?.excludeDirs);
    const same =
      listed.length === hashed.length &&
      listed.every(
        (file, index) => file.path === hashed[index]?.path && file.sizeBytes === hashed[index].sizeBytes,
      );
    if (same) return hashed;
    const now = await hashInputFiles(listed, signal);
    this.knownInputs = Promise.resolve(now);
    return now;
  }

  /**
   * Before a later question: the sandbox is opened again when it is gone,
   * and the workspace is compared with the inputs the thread knows. A thread
   * with nothing readable opens none unless its files changed (then a fresh
   * one, even if a session is open: it holds a copy of the old workspace).
   */
  private async *prepareLaterQuestion(signal: AbortSignal): AsyncGenerator<AgentEvent, void, undefined> {
    if (this.session !== null && this.noData === null) return;
    // Hashed while the sandbox starts and replays, as `openThread` hashes while the first one starts.
    const listing = hashWorkspaceFiles(this.workspaceDir, signal, this.options.sandbox?.excludeDirs);
    listing.catch(() => undefined);
    if (this.noData !== null) {
      if (diffInputFiles(await this.knownInputs, await listing) === null) return;
      await this.closeSession('released');
    }
    yield* this.reopen(listing, signal);
  }

  /**
   * A fresh session replays the recorded cells, and the model is told what
   * differs; then files that came, changed or went since the inputs known
   * are recorded, profiled and told to the model before the question.
   */
  private async *reopen(
    listing: Promise<InputFile[]>,
    signal: AbortSignal,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    const session = await this.openSession(signal);
    if (this.cells.length > 0) {
      const summary = yield* replayCells(session, this.cells, signal);
      this.recorder.append({ type: 'replay', at: nowIso(), ...summary });
      const { notice, modelNote } = replayTexts(summary);
      yield this.recorder.notice(this.rounds, 'replay', notice);
      this.context.tellModel(modelNote);
    }
    const now = await listing;
    const change = diffInputFiles(await this.knownInputs, now);
    if (change !== null) yield* this.takeInChange(session, change, now, signal);
  }

  /**
   * The workspace changed: profiled again in the fresh session (the whole
   * of it: the report's data section and the `no-data` decision need every
   * file), recorded (`workspace-profile`, then `workspace-change`), and told
   * to the model in a note before the question, in the first message's
   * layout. Only once all of that is done do the changed files count as
   * known: a turn stopped before then finds the change again.
   */
  private async *takeInChange(
    session: SandboxSession,
    change: WorkspaceChange,
    now: InputFile[],
    signal: AbortSignal,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    // A profile that fails says nothing of the files: the question goes to the model (see noDataDecision).
    const noDataBefore = this.noData;
    this.noData = null;
    let profile: WorkspaceProfile;
    try {
      profile = yield* this.profileWorkspace(session, signal, undefined, () => Promise.resolve(now));
    } catch (error) {
      this.noData = noDataBefore;
      throw error;
    }
    this.recorder.append({ type: 'workspace-change', at: nowIso(), ...change });
    this.knownInputs = Promise.resolve(now);
    yield this.recorder.notice(this.rounds, 'workspace', workspaceChangeNotice(change));
    this.context.beginQuestion(
      formatWorkspaceChangeNote(change, profile, {
        ...defaultFirstMessageLimits,
        ...this.options.firstMessageLimits,
      }),
    );
  }

  private async *turn(
    question: string,
    options: AskOptions,
    settle: (result: TurnResult) => void,
  ): AsyncGenerator<AgentEvent, void, undefined> {
    const control = new RunControl();
    this.activeControl = control;
    control.arm(options.signal, this.deadlineMs);
    const startedAtMs = Date.now();
    const turnNumber = this.turnCount + 1;
    this.turnCount = turnNumber;
    const replyToAsk = this.pendingAsk !== null;
    this.pendingAsk = null;
    const state = emptyState(this.contextBudgetTokens, this.deadlineMs, this.rounds);
    let handler: TurnHandler | null = null;
    let decision: StopDecision | null = null;
    let result: TurnResult | null = null;
    let bug: DatalystError | null = null;
    // Whether the model will see this question (a turn stopped before that leaves nothing to tell it about).
    let questionAdded = false;
    try {
      if (!this.conversationStarted) {
        yield* this.begin(question, control.signal);
      } else {
        // A thread with nothing readable needs no sandbox unless its files changed: its turn ends `no-data` below.
        yield* this.prepareLaterQuestion(control.signal);
        // A message of its own says the last turn was stopped, and the question follows in it (never in a
        // cell's output); after any replay and workspace notes, so that nothing stands between it and the question.
        if (this.noteBeforeNextQuestion !== null) this.context.beginQuestion(this.noteBeforeNextQuestion);
        this.noteBeforeNextQuestion = null;
        this.context.addQuestion(question);
      }
      questionAdded = true;
      this.recorder.append({ type: 'turn-start', turn: turnNumber, at: nowIso(), question, replyToAsk });
      yield { type: 'turn-start', turn: turnNumber, question, replyToAsk };
      if (turnNumber > 1) {
        const room = this.context.prepareNewTurn();
        for (const notice of room.notices) yield this.recorder.notice(this.rounds, notice.kind, notice.text);
        if (!room.fits) {
          decision = {
            reason: 'context-budget',
            detail: threadFullText(room.tokens, this.contextBudgetTokens),
          };
        }
      }
      // Nothing readable: the turn ends `no-data` before any model turn (never an "answer" about nothing).
      decision ??= this.noData;
      if (decision === null) {
        const session = this.session;
        if (session === null) throw new Error('Thread.turn: no session');
        handler = new TurnHandler({
          session,
          recorder: this.recorder,
          context: this.context,
          state,
          profile: this.profile,
          signal: control.signal,
          outDir: this.outDir,
          executeText: { ...defaultExecuteTextOptions, ...this.options.executeText },
          artifactBudget: this.artifactBudget,
          askMode: this.options.askMode ?? 'pause',
          executionsBefore: this.cells.length,
        });
        decision = yield* runTurnLoop({
          model: this.options.model,
          profile: this.profile,
          context: this.context,
          handler,
          recorder: this.recorder,
          state,
          stopConditions: this.stopConditions,
          maxRounds: this.maxRounds,
          roundsBefore: this.rounds,
          control,
          startedAtMs,
        });
      }
    } catch (error) {
      if (control.stopCause === null && isInternalFailure(error, 'sandbox')) {
        // A bug (here or in the loop): thrown to the caller, not passed off as a sandbox failure.
        bug = internalError(error);
        throw bug;
      }
      // Opening the sandbox, profiling or replaying failed (or was cancelled).
      const failure = runFailureFrom(error, 'sandbox', control.stopCause);
      state.failure = failure;
      if (failure.reason === 'model-unavailable' || failure.reason === 'sandbox-failure') {
        yield { type: 'error', error: failure.error };
      }
      decision = { reason: failure.reason, detail: failure.error.message };
      if (failure.reason === 'deadline') {
        decision.detail = `The turn reached its wall-clock limit of ${this.deadlineMs ?? 0} ms.`;
      }
    } finally {
      control.disarm();
      if (bug !== null) {
        await this.endTurnByBug(bug, state);
      } else {
        if (decision === null) {
          // The caller stopped reading: the running cell is stopped, the thread stays usable.
          control.cancel(new Error('The caller stopped reading the turn.'));
          decision = { reason: 'cancelled', detail: 'The caller stopped reading the turn before it ended.' };
        }
        if (questionAdded) {
          const cellStopped = handler?.executed.some((cell) => cell.status === 'cancelled') ?? false;
          this.noteBeforeNextQuestion = stoppedTurnNote(decision.reason, cellStopped);
        }
        result = await this.endTurn(turnNumber, question, startedAtMs, state, handler, decision);
        settle(result);
      }
    }
    if (result !== null) yield { type: 'turn-end', result };
  }

  /** A bug ended the turn: the trace says so (no turn-end), the sandbox is closed, the thread takes no more questions. */
  private async endTurnByBug(bug: DatalystError, state: MutableLoopState): Promise<void> {
    this.bug = bug;
    this.closed = true;
    this.rounds += state.round;
    if (this.started) this.recorder.warnIfPossible(this.rounds, `${bug.message} The turn has no end record.`);
    await this.closeSession('released');
    this.activeControl = null;
    this.activeTurn = null;
    this.busy = false;
  }

  /** Bookkeeping and the turn-end record; never throws (the turn must still end). */
  private async endTurn(
    turnNumber: number,
    question: string,
    startedAtMs: number,
    state: MutableLoopState,
    handler: TurnHandler | null,
    decision: StopDecision,
  ): Promise<TurnResult> {
    const usage = handler?.usage ?? { promptTokens: 0, completionTokens: 0 };
    this.usage.promptTokens += usage.promptTokens;
    this.usage.completionTokens += usage.completionTokens;
    this.rounds += state.round;
    if (handler !== null) this.cells.push(...handler.executed);
    const ask = decision.reason === 'asked' ? (state.ask ?? null) : null;
    this.pendingAsk = ask;
    // The error behind a failed turn, as its `error` event gave it (a cancel or a deadline is no error).
    const failed = decision.reason === 'model-unavailable' || decision.reason === 'sandbox-failure';
    const error = failed && state.failure !== null ? runErrorOf(state.failure.error) : undefined;
    const result: TurnResult = {
      turn: turnNumber,
      question,
      answer: state.answer,
      ask,
      termination: decision,
      ...(error === undefined ? {} : { error }),
      rounds: state.round,
      usage,
      durationMs: Date.now() - startedAtMs,
      outputIds: handler?.outputIds.slice() ?? [],
      artifacts: handler?.artifacts.slice() ?? [],
    };
    this.lastTurn = {
      answer: result.answer,
      termination: result.termination,
      ...(error === undefined ? {} : { error }),
    };
    try {
      if (this.started) {
        this.recorder.append({
          type: 'turn-end',
          turn: turnNumber,
          at: nowIso(),
          rounds: result.rounds,
          usage,
          durationMs: result.durationMs,
          termination: decision,
          answer: result.answer,
          ask,
        });
      }
    } catch (error) {
      this.recorder.warnIfPossible(
        this.rounds,
        `The turn-end record could not be written: ${errorText(error)}`,
      );
    }
    // A broken sandbox is given up; the next question replays the cells in a fresh one.
    if (decision.reason === 'sandbox-failure') await this.closeSession('released');
    this.activeControl = null;
    this.activeTurn = null;
    this.busy = false;
    this.armIdleTimer();
    return result;
  }

  /**
   * The workspace profile for the first message (`given`: the caller's,
   * made of this workspace), or for the note after a change, and the
   * `no-data` decision made from it. A profile that fails does not stop the
   * analysis: the model gets the file names and sizes (of `inputs`), and the
   * trace says why there is no more.
   */
  private async *profileWorkspace(
    session: SandboxSession,
    signal: AbortSignal,
    given: WorkspaceProfile | undefined,
    inputs: () => Promise<InputFile[]>,
  ): AsyncGenerator<AgentEvent, WorkspaceProfile, undefined> {
    let profile: WorkspaceProfile;
    try {
      profile = given ?? (await session.profileWorkspace({ signal }));
      this.noData = noDataDecision(profile, true, this.options.whenNoFiles ?? 'stop');
    } catch (error) {
      if (signal.aborted) throw error;
      yield this.recorder.notice(
        this.rounds,
        'warning',
        `The workspace could not be profiled; the model sees file names and sizes only. ${errorText(error)}`,
      );
      profile = {
        truncated: false,
        files: (await inputs()).map((file) => ({
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

/** The user's notice of a change: each file with its size; the trace's record holds the SHA-256. */
function workspaceChangeNotice(change: WorkspaceChange): string {
  const files = (list: readonly InputFile[]) =>
    list.map((file) => `${file.path} (${formatFileSize(file.sizeBytes, ' ')})`).join(', ');
  const parts = [
    change.added.length > 0 ? `added ${files(change.added)}` : null,
    change.changed.length > 0 ? `changed ${files(change.changed)}` : null,
    change.removed.length > 0 ? `removed ${files(change.removed)}` : null,
  ].filter((part) => part !== null);
  return `The workspace changed before this question: ${parts.join('; ')}. It was profiled again and the model is told.`;
}

/**
 * Opens a thread on a workspace. The workspace is hashed and the run folder
 * claimed (its trace.jsonl created) now; the sandbox opens with the first
 * question, whose events begin with `run-start`. Throws, before anything is
 * written, ConfigError when an option is wrong (naming it) or the run folder
 * is a file or already holds anything, WorkspaceError when the workspace folder is missing.
 *
 * @example
 * await using thread = await openThread({ workspaceDir: 'data', model });
 * const first = await thread.ask('Load the sales and show the revenue by region.').result;
 * const second = await thread.ask('Now by month.').result; // the kernel still holds the DataFrame
 */
export async function openThread(options: ThreadOptions): Promise<Thread> {
  assertThreadOptions(options);
  const runId = options.runId ?? newRunId();
  const outDir = path.resolve(options.outDir ?? path.join(options.runsDir ?? 'runs', runId));
  // A run folder inside the workspace is not data: left out of the listing, the hashes and the sandbox.
  const threadOptions = await withRunFolderLeftOut(options, outDir);
  // Listed now (a missing workspace throws before the run folder exists); hashed
  // in the background, so a large workspace's SHA-256 overlaps the sandbox's start.
  const listed = await listInputFiles(options.workspaceDir, threadOptions.sandbox?.excludeDirs);
  // Refused before the hashing starts: a hash left running when this throws rejected unhandled later
  // (an aborted signal, a file gone meanwhile) and took the caller's process down.
  assertRunFolderIsFree(outDir);
  const inputFiles = hashInputFiles(listed, options.signal);
  const createdDir = createRunFolder(outDir);
  let recorder: TraceRecorder;
  try {
    recorder = TraceRecorder.open(outDir, {
      ...(options.traceSync === undefined ? {} : { sync: options.traceSync }),
      maxFigureBytes: options.maxTraceFigureBytes ?? defaultMaxTraceFigureBytes,
    });
  } catch (error) {
    // The thread that would have awaited the hashes is not made: theirs is nobody's failure now.
    inputFiles.catch(() => undefined);
    await removeUnusedRunFolder(outDir, createdDir);
    throw error;
  }
  return new Thread(threadOptions, recorder, inputFiles, { runId, outDir, createdDir }, null);
}
