import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { open, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { turnEventSchema, type TurnEvent } from './api-schemas.ts';
import { isMissingFile } from '../util/fs-errors.ts';

/** A turn event before the log numbers it. */
export type UnnumberedTurnEvent = TurnEvent extends infer Event
  ? Event extends { seq: number }
    ? Omit<Event, 'seq'>
    : never
  : never;

/**
 * How long the log holds its lines back so that they go to the file in one
 * write. While a turn runs its readers follow it from memory, so the file
 * only needs the events for later (a finished turn, a restart); a server
 * killed mid-turn loses at most this much of the turn it interrupts (which
 * `recover` ends with turn-done). One write per burst of events (the SSE
 * writer's window) cost ~1.7 ms of the server's CPU per turn in bench:server,
 * as much as the socket writes to the turn's readers.
 */
export const TURN_LOG_FLUSH_MS = 50;

/** Each live event's JSON, made once when it was logged: readers send the same text over SSE. */
const serialized = new WeakMap<TurnEvent, string>();

/** An event's JSON (the log's own text for an event it numbered). */
export function turnEventJson(event: TurnEvent): string {
  return serialized.get(event) ?? JSON.stringify(event);
}

/**
 * The events of one turn, numbered from 1 and appended to `events.jsonl` as
 * they happen. While the turn runs they are also kept in memory, so any
 * number of readers can follow from any point (`Last-Event-ID`); after it
 * ends, and after a restart, the file is the source.
 */
export class TurnLog {
  readonly #events: TurnEvent[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #file: WriteStream;
  readonly #firstSeq: number;
  #ended = false;
  /** Set while lines wait in the corked stream for the next write (TURN_LOG_FLUSH_MS). */
  #flushTimer: NodeJS.Timeout | null = null;

  /** `lastSeq`: the last number already in the file (a log continued after a restart). */
  constructor(
    readonly path: string,
    lastSeq = 0,
  ) {
    this.#file = createWriteStream(path, { flags: 'a' });
    this.#firstSeq = lastSeq + 1;
  }

  get ended(): boolean {
    return this.#ended;
  }

  append(event: UnnumberedTurnEvent): TurnEvent {
    if (this.#ended) throw new Error('append after the turn log ended');
    const numbered = { ...event, seq: this.#firstSeq + this.#events.length } as TurnEvent;
    this.#events.push(numbered);
    if (this.#flushTimer === null) {
      this.#file.cork();
      this.#flushTimer = setTimeout(() => this.#flush(), TURN_LOG_FLUSH_MS);
    }
    const json = JSON.stringify(numbered);
    serialized.set(numbered, json);
    this.#file.write(`${json}\n`);
    this.#wake();
    return numbered;
  }

  /** The events appended so far. */
  recorded(): readonly TurnEvent[] {
    return [...this.#events];
  }

  /** No more events; resolves when the file has them all. */
  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#wake();
    this.#flush();
    this.#file.end();
    await once(this.#file, 'close');
  }

  /** The lines held back go to the file now. */
  #flush(): void {
    if (this.#flushTimer === null) return;
    clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    this.#file.uncork();
  }

  /** Events after `afterSeq`, then each new one as it comes, until the turn ends or `signal` aborts. */
  async *follow(afterSeq: number, signal: AbortSignal): AsyncGenerator<TurnEvent, void, undefined> {
    let next = Math.max(0, afterSeq - this.#firstSeq + 1);
    // One waker and one abort listener for the whole follow, not one of each per wait (EventTarget work at
    // every burst of events, for every reader).
    let resume: (() => void) | null = null;
    const wake = (): void => {
      const resolve = resume;
      resume = null;
      resolve?.();
    };
    this.#waiters.add(wake);
    signal.addEventListener('abort', wake, { once: true });
    try {
      while (!signal.aborted) {
        while (next < this.#events.length) {
          yield this.#events[next] as TurnEvent;
          next += 1;
        }
        if (this.#ended) return;
        await new Promise<void>((resolve) => (resume = resolve));
      }
    } finally {
      this.#waiters.delete(wake);
      signal.removeEventListener('abort', wake);
    }
  }

  #wake(): void {
    for (const wake of this.#waiters) wake();
  }
}

/** The events of a finished turn after `afterSeq`, read from its file. */
export async function* readTurnLog(
  path: string,
  afterSeq: number,
): AsyncGenerator<TurnEvent, void, undefined> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const event = turnEventOfLine(line);
      if (event !== null && event.seq > afterSeq) yield event;
    }
  } catch (error) {
    if (!isMissingFile(error)) throw error;
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * A line of a turn's log as its event, or null for a line that is not one
 * (empty, or the last line of a turn killed mid-write: everything before it
 * stands).
 */
function turnEventOfLine(line: string): TurnEvent | null {
  if (line.length === 0) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  const event = turnEventSchema.safeParse(parsed);
  return event.success ? event.data : null;
}

/** How much of a log's end `lastTurnEvent` reads first: a turn-done line and then some. */
const TAIL_BYTES = 64 * 1024;

/** The last whole event of a turn's log, or null when it has none. Reads the log's end only, unless its last event is longer. */
export async function lastTurnEvent(path: string): Promise<TurnEvent | null> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if (isMissingFile(error)) return null;
    throw error;
  }
  let size: number;
  try {
    size = (await file.stat()).size;
    const length = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(length);
    await file.read(tail, 0, length, size - length);
    // The first line may be cut by where the read began, the last by a kill mid-write: neither parses.
    const lines = tail.toString('utf8').split('\n');
    for (let index = lines.length - 1; index >= 0; index -= 1) {
      const event = turnEventOfLine(lines[index] ?? '');
      if (event !== null) return event;
    }
  } finally {
    await file.close();
  }
  if (size <= TAIL_BYTES) return null;
  // The last event is longer than the tail (a cell's large output): the whole log.
  let last: TurnEvent | null = null;
  for await (const event of readTurnLog(path, 0)) last = event;
  return last;
}

/**
 * A log cut inside a line (the process killed mid-write) gets its line
 * ended, so that what is appended next is a line of its own and not glued to
 * the broken one (which readers skip).
 */
export async function endPartialLine(path: string): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(path, 'r+');
  } catch (error) {
    if (isMissingFile(error)) return;
    throw error;
  }
  try {
    const { size } = await file.stat();
    if (size === 0) return;
    const last = Buffer.alloc(1);
    await file.read(last, 0, 1, size - 1);
    if (last[0] !== 0x0a) await file.write('\n', size);
  } finally {
    await file.close();
  }
}
