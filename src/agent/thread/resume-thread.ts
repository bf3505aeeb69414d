import path from 'node:path';
import { readTrace } from '../../trace/reader.ts';
import { currentInputFiles } from '../../trace/input-files.ts';
import type { TraceRecord } from '../../trace/schema.ts';
import type { WorkspaceProfile } from '../../sandbox/index.ts';
import { ContextManager } from '../context-manager.ts';
import type { StopDecision } from '../stop-conditions.ts';
import { defaultFirstMessageLimits, formatFirstMessage } from '../first-message.ts';
import { listInputFiles } from '../input-files.ts';
import { assertResumeThreadOptions } from '../options-schema.ts';
import { executeMessages, resolveModelProfile, type ModelProfile } from '../model-profile.ts';
import { stoppedTurnNote } from '../model-notes.ts';
import { defaultMaxTraceFigureBytes } from '../trace-figure-budget.ts';
import { TraceRecorder } from '../trace-recorder.ts';
import { executedCell, type ExecutedCell } from '../turn-handler.ts';
import { formatWorkspaceChangeNote } from '../workspace-change.ts';
import { Thread, contextBudgetFor, replyReserveFor, type RestoredThread } from './thread.ts';
import { withRunFolderLeftOut } from './run-folder.ts';
import type { ResumeThreadOptions, ThreadOptions } from './thread-options.ts';

/** Notices the model was told (and that a rebuilt conversation tells it again). */
const toldKinds = new Set(['nudge', 'final-answer-request', 'ask-reply', 'replay']);

/**
 * The conversation as the model saw it, rebuilt from the trace: the system
 * prompt, the first message (instruction and workspace profile), each reply,
 * the execution results after it, what the loop told the model, and each
 * later question (after a note on a changed workspace, made again from the
 * `workspace-change` record and the profile before it, and after a stopped
 * turn, in a message the stop note opens).
 * Shortenings made by compaction are not redone; the thread compacts again
 * when it needs to. Returns the note that opens the next question's message
 * when the last turn was stopped.
 */
function rebuildConversation(
  records: readonly TraceRecord[],
  profile: ModelProfile,
  context: ContextManager,
  options: ThreadOptions,
): string | null {
  const start = records[0];
  if (start?.type !== 'run-start') return null;
  const workspaceProfile = records.find((record) => record.type === 'workspace-profile');
  const limits = { ...defaultFirstMessageLimits, ...options.firstMessageLimits };
  if (profile.systemPrompt !== null) context.add('system', { role: 'system', content: profile.systemPrompt });
  const firstMessage = formatFirstMessage(
    start.instruction,
    workspaceProfile?.type === 'workspace-profile'
      ? workspaceProfile.profile
      : { truncated: false, files: [] },
    limits,
  );
  context.add('first', { role: 'user', content: firstMessage });
  let executeTexts: string[] = [];
  let notes: string[] = [];
  const flush = () => {
    for (const message of executeMessages(profile, executeTexts)) context.add('execute', message);
    for (const note of notes) context.tellModel(note);
    executeTexts = [];
    notes = [];
  };
  let turnsSeen = 0;
  // As the thread decides it: a turn whose question reached the model (turn 1's is the first message) and that was stopped.
  let questionReached = true;
  let cellStopped = false;
  let noteBeforeNextQuestion: string | null = null;
  // The latest profile (a change's note is made from the one recorded just before it), and notes for the next question.
  let latestProfile: WorkspaceProfile = { truncated: false, files: [] };
  let changeNotes: string[] = [];
  for (const record of records) {
    switch (record.type) {
      case 'workspace-profile':
        latestProfile = record.profile;
        break;
      case 'workspace-change':
        changeNotes.push(formatWorkspaceChangeNote(record, latestProfile, limits));
        break;
      case 'model-turn':
        flush();
        context.add('assistant', { role: 'assistant', content: record.text });
        break;
      case 'execution':
        if (record.result.status === 'cancelled') cellStopped = true;
        else executeTexts.push(record.executeText);
        break;
      case 'notice':
        if (toldKinds.has(record.kind)) notes.push(record.text);
        break;
      case 'turn-end':
        // What the turn told the model belongs to it; notes after it (a replay) to the next question.
        flush();
        if (questionReached) noteBeforeNextQuestion = stoppedTurnNote(record.termination.reason, cellStopped);
        questionReached = false;
        cellStopped = false;
        break;
      case 'turn-start':
        turnsSeen += 1;
        // Turn 1's question is the instruction of the first message.
        if (turnsSeen > 1 || record.turn > 1) {
          flush();
          // As the live thread: the workspace's note after any replay note, then the stop's note, then the question.
          for (const note of changeNotes) context.beginQuestion(note);
          changeNotes = [];
          if (noteBeforeNextQuestion !== null) context.beginQuestion(noteBeforeNextQuestion);
          noteBeforeNextQuestion = null;
          context.addQuestion(record.question);
        } else {
          flush();
        }
        questionReached = true;
        break;
      default:
        break;
    }
  }
  flush();
  // A change taken in by a question that never began (stopped at once): the next question's message holds it.
  for (const note of changeNotes) context.beginQuestion(note);
  return noteBeforeNextQuestion;
}

/**
 * Resumes a thread from its run folder: the conversation is rebuilt from the
 * trace, and the first question replays the recorded cells in a fresh sandbox
 * (checking that their outputs match the record; the user and the model are
 * told of any that do not) before it runs. Works on a thread that was closed,
 * on one whose process was killed (its unfinished turn is ended `cancelled`),
 * and on a one-question run, of trace version 1 or 2. A wrong option is a
 * ConfigError naming it, thrown before the trace is read.
 *
 * @example
 * const thread = await resumeThread('runs/20260101-sales', { model: createOfflineAnalyst() });
 * const turn = await thread.ask('And which month was best?').result;
 * await thread.close();
 */
export async function resumeThread(runDir: string, options: ResumeThreadOptions): Promise<Thread> {
  assertResumeThreadOptions(options);
  const outDir = path.resolve(runDir);
  const trace = await readTrace(
    path.join(outDir, 'trace.jsonl'),
    options.signal === undefined ? {} : { signal: options.signal },
  );
  const start = trace.records[0];
  if (start?.type !== 'run-start') throw new Error('readTrace returned a trace without run-start');
  const workspaceDir = options.workspaceDir ?? start.workspace.path;
  // The run folder inside the workspace stays out of it, as when the thread was opened.
  const resumeOptions = await withRunFolderLeftOut({ ...options, workspaceDir }, outDir);
  // Listed now so that a missing workspace throws here; compared with the trace's inputs before the first question.
  await listInputFiles(workspaceDir, resumeOptions.sandbox?.excludeDirs);
  const threadOptions: ThreadOptions = {
    ...resumeOptions,
    workspaceDir,
    outDir,
    runId: start.runId,
    profile: options.profile ?? (start.model.profile === 'deepanalyze' ? 'deepanalyze' : 'chat'),
    maxRounds: options.maxRounds ?? start.limits.maxRounds,
    contextBudgetTokens: options.contextBudgetTokens ?? start.limits.contextBudgetTokens,
  };
  const profile = resolveModelProfile(threadOptions.profile);
  const recorder = TraceRecorder.reopen(outDir, {
    ...(options.traceSync === undefined ? {} : { sync: options.traceSync }),
    maxFigureBytes: options.maxTraceFigureBytes ?? defaultMaxTraceFigureBytes,
  });
  const records = trace.records;
  const cells: ExecutedCell[] = [];
  let rounds = 0;
  const usage = { promptTokens: 0, completionTokens: 0 };
  let artifactBytes = 0;
  let artifactFiles = 0;
  let turns = 0;
  let openTurn: { turn: number; rounds: number } | null = null;
  let lastTurn: RestoredThread['lastTurn'] = null;
  let pendingAsk: string | null = null;
  // Only a workspace with nothing readable ends a turn `no-data`; it stays so until its files change (the
  // thread looks before the next question). A question the model answered, or a change, means it was readable.
  let noData: StopDecision | null = null;
  for (const record of records) {
    switch (record.type) {
      case 'execution':
        cells.push(executedCell(record.outputId, record.code, record.result));
        break;
      case 'workspace-change':
        noData = null;
        break;
      case 'model-turn':
        noData = null;
        rounds = Math.max(rounds, record.round);
        if (openTurn !== null) openTurn.rounds += 1;
        usage.promptTokens += record.usage?.promptTokens ?? 0;
        usage.completionTokens += record.usage?.completionTokens ?? 0;
        break;
      case 'artifact':
        artifactBytes += record.sizeBytes;
        artifactFiles += 1;
        break;
      case 'turn-start':
        turns = Math.max(turns, record.turn);
        openTurn = { turn: record.turn, rounds: 0 };
        pendingAsk = null;
        break;
      case 'turn-end':
        openTurn = null;
        lastTurn = { answer: record.answer, termination: record.termination };
        pendingAsk = record.ask;
        if (record.termination.reason === 'no-data') noData = record.termination;
        break;
      case 'run-end':
        rounds = Math.max(rounds, record.rounds);
        // A version 1 run is one turn, ended by its run-end.
        if (turns === 0) {
          turns = 1;
          lastTurn = { answer: record.answer, termination: record.termination };
          if (record.termination.reason === 'no-data') noData = record.termination;
        }
        break;
      default:
        break;
    }
  }
  if (turns === 0) turns = 1; // a v1 run killed before its end
  if (openTurn !== null) {
    // The process ended inside this turn (killed, or crashed): it is ended here, for readers.
    const termination = {
      reason: 'cancelled' as const,
      detail: 'The process ended during this turn (it was killed or crashed); the thread resumed after it.',
    };
    recorder.append({
      type: 'turn-end',
      turn: openTurn.turn,
      at: new Date().toISOString(),
      rounds: openTurn.rounds,
      usage: { promptTokens: 0, completionTokens: 0 },
      durationMs: 0,
      termination,
      answer: null,
      ask: null,
    });
    lastTurn = { answer: null, termination };
  }
  const context = new ContextManager({
    contextBudgetTokens: contextBudgetFor(threadOptions),
    replyReserveTokens: replyReserveFor(threadOptions),
    maxRounds: threadOptions.maxRounds ?? 30,
  });
  const rebuiltNote = rebuildConversation(records, profile, context, threadOptions);
  // A turn the process died in was stopped too (its turn-end is the one appended above).
  const noteBeforeNextQuestion = openTurn === null ? rebuiltNote : stoppedTurnNote('cancelled', false);
  return new Thread(
    threadOptions,
    recorder,
    // The inputs as the trace knows them: the first question compares the workspace with them.
    Promise.resolve(currentInputFiles(records)),
    { runId: start.runId, outDir, createdDir: null },
    {
      instruction: start.instruction,
      context,
      cells,
      rounds,
      usage,
      turns,
      pendingAsk,
      lastTurn,
      artifactBudget: {
        remainingBytes: Math.max(0, (options.maxArtifactBytes ?? 64 * 1024 * 1024) - artifactBytes),
        remainingFiles: Math.max(0, (options.maxArtifactFiles ?? 200) - artifactFiles),
      },
      noData,
      noteBeforeNextQuestion,
    },
  );
}
