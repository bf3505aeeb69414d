import type { DatalystError } from '../errors/index.ts';
import type { TerminationReason } from '../trace/schema.ts';
import { clipText } from './clip-text.ts';

const maxFailureDetailChars = 2000;

/** What the stop conditions look at, after every round and before every model turn. */
export interface LoopState {
  /** Rounds of this turn started (a round is one model turn and the cells it asked for). */
  readonly round: number;
  /** Rounds of the thread's earlier turns: this turn's round r is recorded, streamed and named as `roundsBefore + r`. */
  readonly roundsBefore?: number;
  /** The final answer, once the model gave one. */
  readonly answer: string | null;
  /** The model's question to the user (`<Ask>`) when the turn is to wait for the reply. */
  readonly ask?: string | null;
  readonly elapsedMs: number;
  /** Wall-clock limit of the run; null for none. */
  readonly deadlineMs: number | null;
  /** The conversation's size, estimated, and the budget for it. */
  readonly contextTokens: number;
  readonly contextBudgetTokens: number;
  /** Set once the loop asked for the final answer (the context nearly full, or the last round). */
  readonly finalAnswerRequestedAtRound: number | null;
  /** Why it asked: the context budget or the round limit. */
  readonly finalAnswerRequestReason?: 'context-budget' | 'max-rounds' | null;
  /** Consecutive turns with neither runnable code nor an answer. */
  readonly stalledTurns: number;
  /** How many times in a row the same code failed. */
  readonly repeatedFailures: number;
  /** The failure that ended the run's work, if any (model, sandbox, cancellation). */
  readonly failure: {
    reason: 'model-unavailable' | 'sandbox-failure' | 'cancelled' | 'deadline';
    error: DatalystError;
  } | null;
}

/** The loop's own view of the state, which it updates as the run goes on. */
export type MutableLoopState = { -readonly [K in keyof LoopState]: LoopState[K] };

export interface StopDecision {
  reason: TerminationReason;
  detail: string;
}

/** A small predicate: a reason to stop, or null to go on. Combine them in a list; the first that fires wins. */
export type StopCondition = (state: LoopState) => StopDecision | null;

/** The run's work ended on a failure or the caller's stop (model, sandbox, abort, deadline timer). */
export const failed = (): StopCondition => (state) => {
  if (state.failure === null) return null;
  if (state.failure.reason === 'deadline') {
    return {
      reason: 'deadline',
      detail: `The run reached its wall-clock limit of ${state.deadlineMs ?? 0} ms.`,
    };
  }
  // The message can quote what a sandbox or an endpoint sent: bounded, as all such text.
  return {
    reason: state.failure.reason,
    detail: clipText(state.failure.error.message, maxFailureDetailChars),
  };
};

/** The round as the trace and the events number it (counted over the whole thread). */
function recordedRound(state: LoopState): number {
  return (state.roundsBefore ?? 0) + state.round;
}

export const answered = (): StopCondition => (state) => {
  if (state.answer === null) return null;
  if (state.finalAnswerRequestedAtRound !== null && state.finalAnswerRequestReason === 'max-rounds') {
    return {
      reason: 'max-rounds',
      detail: `The run reached its last round; the model gave its final answer when asked (round ${recordedRound(state)}).`,
    };
  }
  if (state.finalAnswerRequestedAtRound !== null) {
    return {
      reason: 'context-budget',
      detail: `The context neared its budget of ${state.contextBudgetTokens} tokens; the model gave its final answer when asked (round ${recordedRound(state)}).`,
    };
  }
  return { reason: 'answered', detail: `Answered in round ${recordedRound(state)}.` };
};

/** The model asked the user something and the turn waits for the reply (threads only; a one-shot run replies itself). */
export const asked = (): StopCondition => (state) =>
  state.ask === undefined || state.ask === null
    ? null
    : {
        reason: 'asked',
        detail: `Asked a question in round ${recordedRound(state)}.`,
      };

export const roundCountIs =
  (maxRounds: number): StopCondition =>
  (state) =>
    state.round >= maxRounds
      ? { reason: 'max-rounds', detail: `Stopped after ${maxRounds} rounds without an answer.` }
      : null;

export const deadlinePassed = (): StopCondition => (state) =>
  state.deadlineMs !== null && state.elapsedMs >= state.deadlineMs
    ? { reason: 'deadline', detail: `The run reached its wall-clock limit of ${state.deadlineMs} ms.` }
    : null;

/**
 * After the one request for a final answer (made when the conversation nears
 * the budget, see the loop's context management), the next turn that brings
 * no answer ends the run.
 */
export const contextBudgetSpent = (): StopCondition => (state) =>
  state.finalAnswerRequestedAtRound !== null &&
  state.finalAnswerRequestReason !== 'max-rounds' &&
  state.round > state.finalAnswerRequestedAtRound
    ? {
        reason: 'context-budget',
        detail: `The conversation neared its budget of ${state.contextBudgetTokens} tokens and the model gave no answer when asked for it.`,
      }
    : null;

export const noProgressFor =
  (turns: number): StopCondition =>
  (state) =>
    state.stalledTurns >= turns
      ? {
          reason: 'no-progress',
          detail: `${state.stalledTurns} turns in a row brought neither code to run nor an answer.`,
        }
      : null;

export const sameFailureRepeated =
  (times: number): StopCondition =>
  (state) =>
    state.repeatedFailures >= times
      ? {
          reason: 'repeated-failure',
          detail: `The same code failed ${state.repeatedFailures} times in a row.`,
        }
      : null;

export interface DefaultStopOptions {
  maxRounds: number;
  maxStalledTurns: number;
  maxRepeatedFailures: number;
}

/** The loop's conditions, most decisive first. */
export function defaultStopConditions(options: DefaultStopOptions): StopCondition[] {
  return [
    failed(),
    answered(),
    asked(),
    deadlinePassed(),
    sameFailureRepeated(options.maxRepeatedFailures),
    noProgressFor(options.maxStalledTurns),
    contextBudgetSpent(),
    roundCountIs(options.maxRounds),
  ];
}

export function firstStop(conditions: readonly StopCondition[], state: LoopState): StopDecision | null {
  for (const condition of conditions) {
    const decision = condition(state);
    if (decision !== null) return decision;
  }
  return null;
}
