/**
 * Work the server does ahead of need (drawing a thread's charts before the
 * web UI asks for them), run only while the turn queue has a free slot:
 * one task at a time, in the order given. While every slot is taken the
 * turns already keep every core busy (the slots default to the cores), and
 * work done for a view nobody has asked for yet only slows them (even at
 * niceness 10 it takes the moments a kernel waits, and its share of the
 * caches). A view of a chart not drawn yet draws it at once
 * (chart-drawings.ts), as it did before charts were drawn ahead.
 *
 * Tasks are kept by owner (a thread), so that a deleted thread's waiting
 * work is dropped rather than done for nobody.
 */
export class SpareTime {
  readonly #hasFreeSlot: () => boolean;
  readonly #waiting: { owner: string; task: () => Promise<unknown> }[] = [];
  #running: { owner: string; done: Promise<void> } | null = null;

  /** `hasFreeSlot`: true while fewer turns run than may (none waits then). */
  constructor(hasFreeSlot: () => boolean) {
    this.#hasFreeSlot = hasFreeSlot;
  }

  /** Tasks waiting for a free slot (the one running not counted). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` now when a slot is free and nothing else runs here, or later when one is. Never throws. */
  add(owner: string, task: () => Promise<unknown>): void {
    this.#waiting.push({ owner, task });
    this.#next();
  }

  /**
   * Drops `owner`'s tasks that have not begun; resolves once its task running now (if any) has ended, so
   * that a thread's folder is removed after the last chart written into it, not before.
   */
  async drop(owner: string): Promise<void> {
    for (let index = this.#waiting.length - 1; index >= 0; index -= 1)
      if (this.#waiting[index]?.owner === owner) this.#waiting.splice(index, 1);
    if (this.#running?.owner === owner) await this.#running.done;
  }

  /** Drops every task that has not begun (the server is closing). */
  clear(): void {
    this.#waiting.length = 0;
  }

  /** A turn slot was freed: the waiting work may go on. */
  slotFreed(): void {
    this.#next();
  }

  #next(): void {
    if (this.#running !== null || !this.#hasFreeSlot()) return;
    const next = this.#waiting.shift();
    if (next === undefined) return;
    const done = Promise.resolve()
      .then(next.task)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.#running = null;
        this.#next();
      });
    this.#running = { owner: next.owner, done };
  }
}
