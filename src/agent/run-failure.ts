import {
  CancelledError,
  DatalystError,
  ModelUnavailableError,
  SandboxFailureError,
} from '../errors/index.ts';
import { errorText } from './clip-text.ts';
import type { LoopState } from './stop-conditions.ts';

export type RunFailure = NonNullable<LoopState['failure']>;

/** Where the loop was when something threw: decides what an unknown error is blamed on. */
export type RunPhase = 'setup' | 'sandbox' | 'model';

/**
 * Maps what ended the run's work to a termination. The caller's stop (abort or
 * deadline) wins over the error it caused; a model error is `model-unavailable`;
 * anything else that broke while the sandbox was at work is `sandbox-failure`.
 * Errors that are not Datalyst's are wrapped, with the original as `cause`.
 */
export function runFailureFrom(
  error: unknown,
  phase: RunPhase,
  stopCause: 'cancelled' | 'deadline' | null,
): RunFailure {
  if (stopCause === 'deadline') return { reason: 'deadline', error: new CancelledError(error) };
  if (stopCause === 'cancelled' || (DatalystError.isInstance(error) && error.code === 'CANCELLED')) {
    return {
      reason: 'cancelled',
      error: DatalystError.isInstance(error) ? error : new CancelledError(error),
    };
  }
  if (DatalystError.isInstance(error)) {
    if (error.code === 'MODEL_UNAVAILABLE') return { reason: 'model-unavailable', error };
    return { reason: phase === 'model' ? 'model-unavailable' : 'sandbox-failure', error };
  }
  const message = errorText(error, 2000);
  if (phase === 'model') {
    return {
      reason: 'model-unavailable',
      error: new ModelUnavailableError(`The model failed: ${message}`, {
        fix: 'Check the model endpoint; run again.',
        cause: error,
      }),
    };
  }
  return {
    reason: 'sandbox-failure',
    error: new SandboxFailureError(`The sandbox failed: ${message}`, { cause: error }),
  };
}
