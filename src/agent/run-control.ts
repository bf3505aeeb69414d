export type StopCause = 'cancelled' | 'deadline';

/**
 * The run's own abort signal. It fires when the caller's signal aborts or the
 * wall-clock deadline passes, and remembers which came first, so the run ends
 * with the right reason rather than the error the abort caused.
 */
export class RunControl {
  private readonly controller = new AbortController();
  private cause: StopCause | null = null;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private removeAbortListener: () => void = () => undefined;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** What stopped the run from outside, or null. */
  get stopCause(): StopCause | null {
    return this.cause;
  }

  /** Listens to the caller's signal and starts the deadline timer (null: none). */
  arm(userSignal: AbortSignal | undefined, deadlineMs: number | null): void {
    const onAbort = () => this.stop('cancelled', userSignal?.reason);
    userSignal?.addEventListener('abort', onAbort, { once: true });
    this.removeAbortListener = () => userSignal?.removeEventListener('abort', onAbort);
    if (userSignal?.aborted) this.stop('cancelled', userSignal.reason);
    if (deadlineMs !== null) {
      this.deadlineTimer = setTimeout(() => this.stop('deadline', new Error('deadline')), deadlineMs);
    }
  }

  /** Stops listening and clears the timer; the signal keeps its state. */
  disarm(): void {
    clearTimeout(this.deadlineTimer);
    this.removeAbortListener();
  }

  /** Cancels from inside (the caller stopped reading, or the thread is closing). */
  cancel(reason?: unknown): void {
    this.stop('cancelled', reason ?? new Error('cancelled'));
  }

  private stop(cause: StopCause, reason: unknown): void {
    this.cause ??= cause;
    this.controller.abort(reason);
  }
}
