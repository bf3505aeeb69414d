import type { DatalystError, Fault } from '../errors/index.ts';
import type { CellResult } from '../sandbox/cell-result.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { NoticeKind, StepKind, TerminationReason, Usage } from '../trace/schema.ts';

/** Plain data of a DatalystError, the cause as text (a result is JSON: no Error objects in it). */
export function runErrorOf(error: DatalystError): RunError {
  const cause: unknown = error.cause;
  return {
    code: error.code,
    message: error.message,
    fix: error.fix,
    fault: error.fault,
    cause:
      cause === undefined || cause === null ? null : cause instanceof Error ? cause.message : String(cause),
  };
}

/**
 * The error that ended a run or a turn (the one its `error` event carried), as
 * plain data: what the result of `analyze()` says besides the termination.
 */
export interface RunError {
  /** Stable, e.g. `IMAGE_MISSING`, `SANDBOX_UNAVAILABLE`, `MODEL_UNAVAILABLE`; never match on the message. */
  code: string;
  message: string;
  /** What to do about it, as one sentence. */
  fix: string;
  fault: Fault;
  /** The underlying error's message (Docker's, the endpoint's), or null. */
  cause: string | null;
}

/** What `analyze()` returns and `run-end` carries. */
export interface AnalysisResult {
  runId: string;
  /** The run folder: trace.jsonl, artifacts/, and the report once rendered. */
  outDir: string;
  tracePath: string;
  answer: string | null;
  termination: { reason: TerminationReason; detail: string };
  /** Present when the run ended by an error (`model-unavailable`, `sandbox-failure`): the one its `error` event carried. */
  error?: RunError;
  rounds: number;
  usage: Usage;
  durationMs: number;
}

/** One question of a thread and how it ended: what `thread.ask()` resolves to and `turn-end` carries. */
export interface TurnResult {
  /** 1 for the first question of the thread. */
  turn: number;
  question: string;
  answer: string | null;
  /** The model's question to the user when the turn ended `asked`: reply with the next `ask()`. */
  ask: string | null;
  /** The turn's own named termination (the thread stays usable whatever it is). */
  termination: { reason: TerminationReason; detail: string };
  /** Present when the turn ended by an error (`model-unavailable`, `sandbox-failure`): the one its `error` event carried. */
  error?: RunError;
  /** Rounds of this turn; round numbers in events and the trace go on across turns. */
  rounds: number;
  usage: Usage;
  durationMs: number;
  /** Output ids of the cells the turn ran, in order, e.g. `['E4', 'E5']`. */
  outputIds: string[];
  /** Files the turn's code wrote, copied into the run folder's `artifacts/` (`path` is relative to it). */
  artifacts: { outputId: string | null; path: string; sizeBytes: number }[];
}

/** What a resumed thread's replay found. */
export interface ReplaySummary {
  /** Cells in the record. */
  cells: number;
  replayed: number;
  /** Cells whose output now differs from the record, with what differs. */
  mismatches: { outputId: string; detail: string }[];
  /** Cells not run again (they had timed out, crashed, run out of memory or been cancelled). */
  skipped: { outputId: string; detail: string }[];
  durationMs: number;
}

/**
 * The streaming form of a run: a discriminated union with noun-verb names.
 * Errors travel as events too; the stream always ends with `run-end`.
 */
export type AgentEvent =
  | { type: 'run-start'; runId: string; outDir: string; instruction: string; modelId: string }
  | { type: 'profile-end'; profile: WorkspaceProfile }
  | { type: 'round-start'; round: number }
  | { type: 'text-delta'; round: number; tag: StepKind; text: string }
  /** The model request broke after text had streamed; the turn starts over and its earlier deltas are void. */
  | { type: 'turn-restart'; round: number; reason: string }
  | { type: 'step-end'; round: number; kind: StepKind; text: string; closed: boolean }
  | { type: 'code-end'; round: number; code: string }
  | { type: 'execution-start'; round: number; outputId: string; code: string }
  /** What a running cell printed, as it arrives (bounded in size; merged when it comes fast). */
  | { type: 'execution-output'; round: number; outputId: string; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'execution-end'; round: number; outputId: string; result: CellResult }
  /** The model asked the user a question. `reply` is the fixed reply of a one-shot run; null when the turn ends to wait for the user. */
  | { type: 'ask'; round: number; question: string; reply: string | null }
  /** A question of a thread begins (turn 1 is the instruction of a run). */
  | { type: 'turn-start'; turn: number; question: string; replyToAsk: boolean }
  | { type: 'turn-end'; result: TurnResult }
  /** A thread whose sandbox was gone runs its recorded cells again in a fresh one. */
  | { type: 'replay-start'; cells: number }
  | { type: 'replay-end'; summary: ReplaySummary }
  | { type: 'artifact-saved'; outputId: string | null; path: string; sizeBytes: number }
  | { type: 'notice'; round: number; kind: NoticeKind; text: string }
  | { type: 'answer-end'; round: number; answer: string }
  | { type: 'run-end'; result: AnalysisResult }
  | { type: 'error'; error: DatalystError };
