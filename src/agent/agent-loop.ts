import { clipText } from './clip-text.ts';
import type { ContextManager } from './context-manager.ts';
import type { AgentEvent } from './events.ts';
import type { LanguageModel } from './language-model.ts';
import type { ModelProfile } from './model-profile.ts';
import { readModelTurn } from './model-turn.ts';
import type { RunControl } from './run-control.ts';
import { runFailureFrom, type RunPhase } from './run-failure.ts';
import {
  firstStop,
  type MutableLoopState,
  type StopCondition,
  type StopDecision,
} from './stop-conditions.ts';
import type { TraceRecorder } from './trace-recorder.ts';
import type { TurnHandler } from './turn-handler.ts';

/** What the loop of one turn works with; the thread (src/agent/thread) owns all of it across turns. */
export interface TurnLoopSettings {
  model: LanguageModel;
  profile: ModelProfile;
  context: ContextManager;
  handler: TurnHandler;
  recorder: TraceRecorder;
  /** The turn's state, fresh for each turn: `round` counts this turn's rounds. */
  state: MutableLoopState;
  stopConditions: readonly StopCondition[];
  maxRounds: number;
  /** Rounds of earlier turns: round r of this turn is recorded and streamed as `roundsBefore + r`. */
  roundsBefore: number;
  /** The turn's abort signal (the caller's cancel, the deadline) and what fired it. */
  control: RunControl;
  startedAtMs: number;
}

/**
 * The loop of one turn: alternates model turns (model-turn.ts) and what
 * follows them (turn-handler.ts) until a stop condition fires, keeping the
 * conversation within its budget (context-manager.ts). Never throws for a
 * failure of the model, the sandbox or a cancel: they end the turn with their
 * named termination (an `error` event first for model and sandbox failures).
 * A bug in Datalyst is thrown (INTERNAL_ERROR, see run-failure.ts).
 */
export async function* runTurnLoop(
  settings: TurnLoopSettings,
): AsyncGenerator<AgentEvent, StopDecision, undefined> {
  const { state, context, recorder, control } = settings;
  const signal = control.signal;
  const update = () => {
    state.elapsedMs = Date.now() - settings.startedAtMs;
    state.contextTokens = context.tokens();
  };
  let phase: RunPhase = 'model';
  try {
    for (;;) {
      update();
      const decision = firstStop(settings.stopConditions, state);
      if (decision !== null) return decision;
      // Counted when it starts: a turn cancelled mid-round reports that round.
      state.round += 1;
      const round = settings.roundsBefore + state.round;
      yield { type: 'round-start', round };

      phase = 'model';
      const turn = yield* readModelTurn({
        model: settings.model,
        messages: context.messages(),
        stop: settings.profile.stop,
        round,
        signal,
        onRetry: (chunk) =>
          recorder.notice(
            round,
            'retry',
            // The reason can quote the endpoint's error body.
            `Model request failed (${clipText(chunk.reason, 300)}); retry ${chunk.retry} in ${chunk.delayMs} ms.`,
          ),
      });
      phase = 'sandbox';
      yield* settings.handler.afterTurn(round, turn);
      if (state.answer === null && (state.ask ?? null) === null && state.round < settings.maxRounds) {
        for (const notice of context.prepareNextTurn(state.round, state)) {
          yield recorder.notice(round, notice.kind, notice.text);
        }
      }
    }
  } catch (error) {
    const failure = runFailureFrom(error, phase, control.stopCause);
    state.failure = failure;
    if (failure.reason === 'model-unavailable' || failure.reason === 'sandbox-failure') {
      yield { type: 'error', error: failure.error };
    }
    update();
    return (
      firstStop(settings.stopConditions, state) ?? { reason: failure.reason, detail: failure.error.message }
    );
  }
}
