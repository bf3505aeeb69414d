import type { AgentEvent, TurnResult } from '../events.ts';

/**
 * One question of a thread, as it runs: iterate it for the turn's events
 * (`turn-start` … `turn-end`), and await `result` for how it ended. Awaiting
 * `result` without iterating runs the turn to its end, events unread.
 * Iterate at most once; breaking out of the iteration cancels the turn (its
 * running cell is interrupted, the thread stays usable).
 */
export class ThreadTurn implements AsyncIterable<AgentEvent> {
  private claimed = false;
  private readonly settled: Promise<TurnResult>;

  /** @internal Made by `Thread.ask`. */
  constructor(
    private readonly events: AsyncGenerator<AgentEvent, void, undefined>,
    settled: Promise<TurnResult>,
  ) {
    this.settled = settled;
    // The turn's result is often awaited only after the events; an early failure must not go unhandled meanwhile.
    settled.catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    if (this.claimed) throw new Error('A thread turn can be iterated only once.');
    this.claimed = true;
    return this.events;
  }

  /** How the turn ended. Rejects only when the question could not be asked at all (see `Thread.ask`). */
  get result(): Promise<TurnResult> {
    if (!this.claimed) {
      this.claimed = true;
      void this.drain();
    }
    return this.settled;
  }

  private async drain(): Promise<void> {
    try {
      for await (const event of this.events) void event;
    } catch {
      // The same failure rejects `result`.
    }
  }
}
