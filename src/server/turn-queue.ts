import { ServerRequestError } from './http-error.ts';

export interface TurnQueueOptions {
  /** Turns running at once. */
  maxRunning: number;
  /** Turns waiting; one more answers 429. */
  maxQueued: number;
  /** Sent as Retry-After with a 429. */
  retryAfterSeconds: number;
}

const turns = (count: number): string => `${count} ${count === 1 ? 'turn is' : 'turns are'}`;

interface Waiter {
  start: () => void;
}

/**
 * At most `maxRunning` turns at once, the rest in order behind them; past
 * `maxQueued` waiting, a new turn is refused with 429 and `Retry-After`.
 */
export class TurnQueue {
  readonly #options: TurnQueueOptions;
  #running = 0;
  readonly #waiting: Waiter[] = [];
  readonly #slotFreed = new Set<() => void>();

  constructor(options: TurnQueueOptions) {
    this.#options = options;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** True while fewer turns run than may (and so none waits). */
  get hasFreeSlot(): boolean {
    return this.#running < this.#options.maxRunning;
  }

  /** `listener` is called each time a turn ends and no turn waits for its slot. */
  onSlotFreed(listener: () => void): void {
    this.#slotFreed.add(listener);
  }

  /**
   * Throws the 429 now, before any work, when there is no room; otherwise reserves a place. A
   * reservation whose turn is not started after all (its files refused, a record not written) is
   * given back with `cancel()`, or its place would stay taken until the server restarts.
   */
  reserve(): {
    position: number;
    whenStarted: (signal: AbortSignal) => Promise<() => void>;
    cancel: () => void;
  } {
    if (this.#running + this.#waiting.length >= this.#options.maxRunning + this.#options.maxQueued) {
      throw new ServerRequestError(
        429,
        'TOO_MANY_TURNS',
        `${turns(this.#running)} running and ${this.#waiting.length} waiting, as many as this server takes; no room for another.`,
        {
          fix:
            `Retry after ${this.#options.retryAfterSeconds} s, or start the server with a larger --max-queued ` +
            `(turns that may wait, now ${this.#options.maxQueued}; the \`maxQueuedTurns\` option) or --max-turns ` +
            `(turns run at once, now ${this.#options.maxRunning}; \`maxConcurrentTurns\`).`,
          fault: 'system',
          retryAfterSeconds: this.#options.retryAfterSeconds,
        },
      );
    }
    const position = Math.max(0, this.#running + this.#waiting.length + 1 - this.#options.maxRunning);
    // Count the reservation now so that a burst cannot overbook between reserve() and whenStarted().
    const { wait, cancel } = this.#enqueue();
    return { position, whenStarted: (signal) => wait(signal), cancel };
  }

  #enqueue(): { wait: (signal: AbortSignal) => Promise<() => void>; cancel: () => void } {
    let settle: (() => void) | null = null;
    let started = false;
    const entry: Waiter = {
      start: () => {
        started = true;
        settle?.();
      },
    };
    if (this.#running < this.#options.maxRunning) {
      this.#running += 1;
      started = true;
    } else {
      this.#waiting.push(entry);
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#running -= 1;
      const next = this.#waiting.shift();
      if (next !== undefined) {
        this.#running += 1;
        next.start();
      } else {
        for (const listener of this.#slotFreed) listener();
      }
    };
    const cancel = (): void => {
      const index = this.#waiting.indexOf(entry);
      if (index >= 0) this.#waiting.splice(index, 1);
      else if (started) release();
    };
    const wait = async (signal: AbortSignal): Promise<() => void> => {
      if (!started) {
        await new Promise<void>((resolve, reject) => {
          settle = resolve;
          const onAbort = (): void => {
            const index = this.#waiting.indexOf(entry);
            if (index >= 0) this.#waiting.splice(index, 1);
            reject(signal.reason);
          };
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        });
      }
      if (signal.aborted) {
        release();
        throw signal.reason;
      }
      return release;
    };
    return { wait, cancel };
  }
}
