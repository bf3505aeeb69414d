import type { AgentEvent } from '../agent/index.ts';

type TextDelta = Extract<AgentEvent, { type: 'text-delta' }>;

/** A joined delta holds at most this much text (a reader's event stays small). */
const MAX_BATCH_CHARS = 16 * 1024;

/**
 * Joins the model's text deltas that arrive in one burst into one event.
 *
 * Every event of a turn is numbered, written to its log and sent to each
 * reader as its own SSE message. A model's reply often comes in bursts — the
 * offline analyst yields a whole reply at once in 64-character pieces, and an
 * HTTP model's network read may carry many tokens — and one event per piece
 * cost more than the turn itself on short follow-ups (bench:server). Deltas of
 * the same round and tag that arrive in one run of promise callbacks are
 * joined; the batch goes out when that run ends (process.nextTick, before the
 * event loop goes on to any I/O), or as soon as any other event arrives, so
 * no delta waits for other work and the order of events is kept. The text is
 * exactly the concatenation of the pieces.
 */
export class TextDeltaBatch {
  readonly #emit: (event: TextDelta) => void;
  #pending: TextDelta | null = null;
  #scheduled = false;

  constructor(emit: (event: TextDelta) => void) {
    this.#emit = emit;
  }

  add(event: TextDelta): void {
    const pending = this.#pending;
    if (
      pending !== null &&
      pending.round === event.round &&
      pending.tag === event.tag &&
      pending.text.length + event.text.length <= MAX_BATCH_CHARS
    ) {
      pending.text += event.text;
      return;
    }
    this.flush();
    this.#pending = { ...event };
    if (!this.#scheduled) {
      this.#scheduled = true;
      process.nextTick(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }

  /** Sends the batch now (before any other event of the turn, and when the turn ends). */
  flush(): void {
    const pending = this.#pending;
    this.#pending = null;
    if (pending !== null) this.#emit(pending);
  }
}
