import { CancelledError, DatalystError, ModelUnavailableError } from '../errors/index.ts';
import { errorText } from './clip-text.ts';
import type { LoopState } from './stop-conditions.ts';

export type RunFailure = NonNullable<LoopState['failure']>;

/** Where the loop was when something threw: decides what an unknown error is blamed on. */
export type RunPhase = 'setup' | 'sandbox' | 'model';

/** The code of the error a stream throws when Datalyst itself broke (fault `internal`). */
export const INTERNAL_ERROR_CODE = 'INTERNAL_ERROR';

/**
 * A bug in Datalyst, wrapped (the original as `cause`): what the stream, the
 * turn and `analyze()` throw instead of ending with a termination, since no
 * termination reason names it and none of the others is true. A TraceError
 * while writing is one: the loop made a record the schema refuses.
 */
export function internalError(error: unknown): DatalystError {
  if (DatalystError.isInstance(error) && error.code === INTERNAL_ERROR_CODE) return error;
  return new DatalystError(INTERNAL_ERROR_CODE, `Datalyst failed (a bug): ${errorText(error, 2000)}`, {
    fault: 'internal',
    fix: 'Report it with the run folder (trace.jsonl) and the stack of this error; run again meanwhile.',
    cause: error,
  });
}

/**
 * Is this a failure of Datalyst's own code, rather than of the model, the
 * sandbox or the caller's stop? In the model phase an unknown error is the
 * model client's (a custom LanguageModel may throw anything); elsewhere only
 * DatalystErrors come from the sandbox (it maps Docker's errors itself, and a
 * caller's sandbox factory is wrapped where it is called).
 */
export function isInternalFailure(error: unknown, phase: RunPhase): boolean {
  if (DatalystError.isInstance(error)) {
    // A record the schema refuses is the loop's bug; a line the disk refused (ENOSPC…) is not.
    const cause: unknown = error.cause;
    const ioFailure = typeof cause === 'object' && cause !== null && 'errno' in cause;
    return error.fault === 'internal' || (error.code === 'TRACE_INVALID' && !ioFailure);
  }
  return phase !== 'model';
}

/**
 * Maps what ended the run's work to a termination. The caller's stop (abort or
 * deadline) wins over the error it caused; a model error is `model-unavailable`;
 * a sandbox error `sandbox-failure`. Throws the `internalError` of a bug (see
 * `isInternalFailure`): it is not a sandbox failure, and no termination names it.
 * Unknown errors of the model phase are wrapped, with the original as `cause`.
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
  if (isInternalFailure(error, phase)) throw internalError(error);
  if (DatalystError.isInstance(error)) {
    if (error.code === 'MODEL_UNAVAILABLE') return { reason: 'model-unavailable', error };
    return { reason: phase === 'model' ? 'model-unavailable' : 'sandbox-failure', error };
  }
  return {
    reason: 'model-unavailable',
    error: new ModelUnavailableError(`The model failed: ${errorText(error, 2000)}`, {
      fix: 'Check the model endpoint; run again.',
      cause: error,
    }),
  };
}
