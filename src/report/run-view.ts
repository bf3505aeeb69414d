import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type {
  ArtifactRecord,
  ExecutionRecord,
  ModelTurnRecord,
  NoticeRecord,
  RunEndRecord,
  RunStartRecord,
  StepRecord,
  TurnEndRecord,
  TraceRecord,
  Usage,
} from '../trace/schema.ts';
import { CancelledError, TraceError } from '../errors/index.ts';
import { inputFileHistory, type InputFileEntry } from '../trace/input-files.ts';

/** One entry of the process, in the order it happened. */
export type ProcessEntry =
  | { kind: 'step'; step: StepRecord }
  /** A code step and the execution of that code (null when it never ran). */
  | { kind: 'cell'; step: StepRecord | null; execution: ExecutionRecord | null }
  /**
   * `beforeRounds`: written while a question of a thread was being prepared,
   * before its first round (the replay of a resumed thread); its `round` is
   * the earlier question's last.
   */
  | { kind: 'notice'; notice: NoticeRecord; beforeRounds?: true }
  /** A question of a thread begins (only traces with turn records have these). */
  | { kind: 'turn'; turn: TurnView };

/** One question of a thread: what was asked, how it ended, and its part of the process. */
export interface TurnView {
  turn: number;
  question: string;
  /** True when the question was the user's reply to the model's `<Ask>`. */
  replyToAsk: boolean;
  answer: string | null;
  /** The model's question to the user, when the turn ended `asked`. */
  ask: string | null;
  /** Null when the trace ends inside the turn. */
  termination: TurnEndRecord['termination'] | null;
  rounds: number;
  /** The turn's cells, in order. */
  executions: ExecutionRecord[];
}

/** How the run ended, as a reader should be told. */
export type RunOutcome = 'answered' | 'not-answered' | 'cancelled' | 'incomplete';

/** The trace folded into what a report shows. */
export interface RunView {
  start: RunStartRecord;
  end: RunEndRecord | null;
  /** The latest profile of the workspace (a thread whose files changed records one per change). */
  profile: WorkspaceProfile | null;
  /** The input files: run-start's, then each one a thread's question found added, changed or removed. */
  inputFiles: InputFileEntry[];
  process: ProcessEntry[];
  executions: ExecutionRecord[];
  artifacts: ArtifactRecord[];
  modelTurns: ModelTurnRecord[];
  /**
   * The questions of a thread, in order. A run of one question (and every
   * version 1 trace) has one, whose question is the instruction.
   */
  turns: TurnView[];
  /** The last answer given (the answer of a one-question run). */
  answer: string | null;
  outcome: RunOutcome;
  /** One sentence for the banner at the top; null when the run answered normally. */
  outcomeMessage: string | null;
  rounds: number;
  usage: Usage;
  /** The run's duration; in a resumed thread, its last session's (see `sessions`). */
  durationMs: number | null;
  /**
   * The processes that ran a thread, one per `run-end` (`analyze`, then each
   * `--continue` or resumed chat): how many ended and their durations added up.
   */
  sessions: { ended: number; durationMs: number };
  /**
   * A thread between questions: its last question ended, no `run-end` after it
   * yet (rendered before `close()`), which is not a crash.
   */
  open: boolean;
}

export function buildRunView(records: readonly TraceRecord[]): RunView {
  const start = records[0];
  if (start?.type !== 'run-start') throw new TraceError('The trace does not start with a run-start record.');
  let end: RunEndRecord | null = null;
  let profile: WorkspaceProfile | null = null;
  const process: ProcessEntry[] = [];
  const executions: ExecutionRecord[] = [];
  const artifacts: ArtifactRecord[] = [];
  const modelTurns: ModelTurnRecord[] = [];
  let lastAnswerStep: StepRecord | null = null;
  // A code step waits here for its execution, which the agent writes right after it.
  let pendingCode: Extract<ProcessEntry, { kind: 'cell' }> | null = null;
  const turns: TurnView[] = [];
  let currentTurn: TurnView | null = null;
  let endIndex = -1;
  const sessions = { ended: 0, durationMs: 0 };
  let sawTurnRecords = false;
  let lastTurnStartIndex = -1;
  // Notices after a turn's end serve the next question (a resumed thread's replay): shown under its heading.
  let betweenTurns: NoticeRecord[] | null = null;
  const flushBetweenTurns = (beforeRounds: boolean): void => {
    for (const notice of betweenTurns ?? [])
      process.push(beforeRounds ? { kind: 'notice', notice, beforeRounds } : { kind: 'notice', notice });
    betweenTurns = null;
  };
  const implicitTurn = (): TurnView => {
    if (currentTurn === null) {
      currentTurn = {
        turn: 1,
        question: start.instruction,
        replyToAsk: false,
        answer: null,
        ask: null,
        termination: null,
        rounds: 0,
        executions: [],
      };
      turns.push(currentTurn);
    }
    return currentTurn;
  };

  for (const [recordIndex, record] of records.entries()) {
    switch (record.type) {
      case 'run-start':
        break;
      case 'turn-start':
        sawTurnRecords = true;
        pendingCode = null;
        lastTurnStartIndex = recordIndex;
        currentTurn = {
          turn: record.turn,
          question: record.question,
          replyToAsk: record.replyToAsk,
          answer: null,
          ask: null,
          termination: null,
          rounds: 0,
          executions: [],
        };
        turns.push(currentTurn);
        process.push({ kind: 'turn', turn: currentTurn });
        flushBetweenTurns(true);
        break;
      case 'turn-end': {
        flushBetweenTurns(false);
        betweenTurns = [];
        const turn = implicitTurn();
        turn.termination = record.termination;
        turn.answer = record.answer;
        turn.ask = record.ask;
        turn.rounds = record.rounds;
        break;
      }
      case 'replay':
      case 'workspace-change':
        break;
      case 'workspace-profile':
        profile = record.profile;
        break;
      case 'model-turn':
        flushBetweenTurns(false);
        modelTurns.push(record);
        implicitTurn();
        break;
      case 'step':
        flushBetweenTurns(false);
        if (record.kind === 'code') {
          pendingCode = { kind: 'cell', step: record, execution: null };
          process.push(pendingCode);
        } else {
          pendingCode = null;
          process.push({ kind: 'step', step: record });
          if (record.kind === 'answer') lastAnswerStep = record;
        }
        break;
      case 'execution':
        flushBetweenTurns(false);
        executions.push(record);
        implicitTurn().executions.push(record);
        if (pendingCode !== null && pendingCode.execution === null) pendingCode.execution = record;
        else process.push({ kind: 'cell', step: null, execution: record });
        pendingCode = null;
        break;
      case 'artifact':
        artifacts.push(record);
        break;
      case 'notice':
        if (betweenTurns !== null) betweenTurns.push(record);
        else process.push({ kind: 'notice', notice: record });
        break;
      case 'run-end':
        end = record;
        endIndex = recordIndex;
        sessions.ended += 1;
        sessions.durationMs += record.durationMs;
        break;
    }
  }

  flushBetweenTurns(false);

  // A version 1 run is one turn, ended by its run-end.
  const onlyTurn = turns.length === 1 ? turns[0] : undefined;
  if (onlyTurn !== undefined && onlyTurn.termination === null && end !== null) {
    onlyTurn.termination = end.termination;
    onlyTurn.answer = end.answer;
    onlyTurn.rounds = end.rounds;
  }
  // A thread resumed after its run-end: that run-end is not the end of the trace.
  if (lastTurnStartIndex > endIndex) end = null;
  const lastTurn = turns.at(-1);
  const answer = end?.answer ?? lastTurn?.answer ?? lastAnswerStep?.text ?? null;
  const usage = end?.usage ?? sumUsage(modelTurns);
  const rounds =
    end?.rounds ?? Math.max(0, ...records.map((record) => ('round' in record ? record.round : 0)));
  const ending =
    end ?? (lastTurn?.termination ? { termination: lastTurn.termination, answer: lastTurn.answer } : null);
  const { outcome, outcomeMessage } = describeOutcome(
    ending,
    answer,
    start.rerunOf !== undefined,
    start.model.offline,
  );
  return {
    start,
    end,
    profile,
    inputFiles: inputFileHistory(records),
    process,
    executions,
    artifacts,
    modelTurns,
    turns,
    answer,
    outcome,
    outcomeMessage,
    rounds,
    usage,
    durationMs: end?.durationMs ?? null,
    sessions,
    open: end === null && sawTurnRecords && (lastTurn?.termination ?? null) !== null,
  };
}

function sumUsage(turns: readonly ModelTurnRecord[]): Usage {
  return turns.reduce(
    (total, turn) => ({
      promptTokens: total.promptTokens + (turn.usage?.promptTokens ?? 0),
      completionTokens: total.completionTokens + (turn.usage?.completionTokens ?? 0),
    }),
    { promptTokens: 0, completionTokens: 0 },
  );
}

/** What a cancelled run's detail says when nothing more is known (the CancelledError's own message). */
const bareCancelDetail = new CancelledError().message;

/** A termination's detail as a sentence of its own, after the headline's: capitalised, with its full stop. */
function detailSentence(detail: string): string {
  const text = detail.trim();
  if (text === '') return '';
  const sentence = `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
  return ` ${/[.!?]$/.test(sentence) ? sentence : `${sentence}.`}`;
}

function describeOutcome(
  end: Pick<RunEndRecord, 'termination' | 'answer'> | null,
  answer: string | null,
  rerun: boolean,
  offline: boolean,
): { outcome: RunOutcome; outcomeMessage: string | null } {
  if (end === null) {
    return {
      outcome: 'incomplete',
      outcomeMessage:
        'The trace ends before the run did (it crashed or is still going): this report shows everything up to that point.',
    };
  }
  const { reason, detail } = end.termination;
  if (reason === 'asked') {
    return {
      outcome: 'not-answered',
      outcomeMessage: `${askerName(offline)} asked the user a question (shown in the process) and waits for the reply; the thread can go on with it.`,
    };
  }
  if (reason === 'cancelled') {
    // "The run was cancelled." under "This run was cancelled" would say it twice.
    const because = detail.trim() === bareCancelDetail ? '' : detailSentence(detail);
    return {
      outcome: 'cancelled',
      outcomeMessage: `This run was cancelled before it finished.${because}${answer === null ? ' There is no answer.' : ''}`,
    };
  }
  if (rerun && reason === 'no-progress') {
    // A re-run of a run with no answer: nothing "made no progress", there was nothing to carry over (its detail says why).
    return { outcome: 'not-answered', outcomeMessage: `This re-run has no answer.${detailSentence(detail)}` };
  }
  if (reason !== 'answered' || answer === null) {
    return {
      outcome: 'not-answered',
      outcomeMessage: `This run ended without ${answer === null ? 'an' : 'a complete'} answer (${terminationLabel(reason)}).${detailSentence(detail)}`,
    };
  }
  return { outcome: 'answered', outcomeMessage: null };
}

const terminationLabels: Record<RunEndRecord['termination']['reason'], string> = {
  answered: 'answered',
  asked: 'the model asked the user a question and waits for the reply',
  'max-rounds': 'the round limit was reached',
  'context-budget': 'the context budget was used up',
  deadline: 'the deadline passed',
  'no-progress': 'no progress was being made',
  'repeated-failure': 'the same failure repeated',
  'no-data': 'no file held data that could be read',
  'model-unavailable': 'the model could not be reached',
  'sandbox-failure': 'the sandbox failed',
  cancelled: 'cancelled',
  'rerun-cell-failed': 'a recorded cell failed on the new data',
};

/** Who asks the user in an `<Ask>`: the model, or the built-in offline analyst, which is no model. */
export function askerName(offline: boolean): string {
  return offline ? 'The offline analyst' : 'The model';
}

export function terminationLabel(reason: RunEndRecord['termination']['reason']): string {
  return terminationLabels[reason];
}

/**
 * Why a turn has no answer, as one plain-text line: "No answer: cancelled. The run was cancelled." (its
 * detail is a sentence of its own, not put in brackets inside another one). Escaped by the caller.
 */
export function noAnswerText(termination: TurnEndRecord['termination'] | null): string {
  if (termination === null) return 'No answer: the trace ends inside this turn.';
  return `No answer: ${terminationLabel(termination.reason)}.${detailSentence(termination.detail)}`;
}

/** Code steps carry the model's text; the runnable code is inside a ```python fence, if any. */
export function stripCodeFence(text: string): string {
  const fenced = /```[\w-]*\n([\s\S]*?)(?:```|$)/.exec(text);
  return (fenced?.[1] ?? text).replace(/\s+$/, '');
}
