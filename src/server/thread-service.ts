import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CancelledError, DatalystError } from '../errors/index.ts';
import type { AgentEvent } from '../agent/index.ts';
import type { TurnEvent } from './api-schemas.ts';
import type { DataQuota } from './data-quota.ts';
import type { FileStore } from './file-store.ts';
import type { ServerLog } from './server-log.ts';
import { notFound, ServerRequestError, tooLarge } from './http-error.ts';
import type { FileObject } from './openai-schemas.ts';
import { openEngineThread, type EngineOptions, type EngineThread } from './thread-engine.ts';
import type { ThreadRecord, ThreadStore, TurnRecord } from './thread-store.ts';
import { TextDeltaBatch } from './text-delta-batch.ts';
import { endPartialLine, lastTurnEvent, readTurnLog, TurnLog, type UnnumberedTurnEvent } from './turn-log.ts';
import type { TurnQueue } from './turn-queue.ts';
import { SpareTime } from './spare-time.ts';

export interface ThreadServiceOptions {
  /** Where failed turns and sandbox failures are logged. */
  log: ServerLog;
  store: ThreadStore;
  files: FileStore;
  /** The data folder's byte limit: a full folder takes no new turn (507). */
  quota: DataQuota | null;
  queue: TurnQueue;
  engine: EngineOptions;
  /** The model's id, recorded on each thread. */
  modelId: string;
  /** Bytes of files one thread may hold. */
  maxThreadBytes: number;
  /** A thread with no turn for this long gives its sandbox back. */
  idleTimeoutMs: number;
  /** Sandboxes idle threads keep at most: past it, the least recently used give theirs back (each is a container with its memory). */
  maxOpenSandboxes: number;
}

/** A turn that is queued or running in this process. */
export interface LiveTurn {
  threadId: string;
  record: TurnRecord;
  log: TurnLog;
  controller: AbortController;
  /** Resolves with the final record when the turn has ended and its log is on disk. */
  done: Promise<TurnRecord>;
  /** Set when turn-done has been sent: the turn is over, its log is being closed. */
  finishing: boolean;
}

interface LiveThread {
  engine: EngineThread | null;
  idleTimer: NodeJS.Timeout | null;
  turn: LiveTurn | null;
  /** When its last turn ended (ms), to give back the least recently used sandbox first. */
  lastUsedMs: number;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Terminations the operator should hear about: something broke (not the model's or the person's choice). */
const failedReasons = new Set<string>(['sandbox-failure', 'model-unavailable']);

/** The detail a turn gets when the server stopped under it. */
export const INTERRUPTED_DETAIL =
  'The server stopped while this turn was queued or running; ask again to continue.';

/**
 * Threads and their turns: creating them over uploaded files, running each
 * question through the engine behind the turn queue, recording every event,
 * and marking what a dead server left running as interrupted.
 */
export class ThreadService {
  readonly #options: ThreadServiceOptions;
  readonly #live = new Map<string, LiveThread>();
  /** Ids of threads whose record is being changed; a second change waits. */
  readonly #locks = new Map<string, Promise<unknown>>();
  /** Work ahead of need (charts drawn before a view asks), done while a turn slot is free. */
  readonly #spare: SpareTime;

  constructor(options: ThreadServiceOptions) {
    this.#options = options;
    const { queue } = options;
    this.#spare = new SpareTime(() => queue.hasFreeSlot);
    queue.onSlotFreed(() => this.#spare.slotFreed());
  }

  get store(): ThreadStore {
    return this.#options.store;
  }

  /** Tasks of work ahead of need (charts to draw) waiting for a free turn slot. */
  get spareTasksWaiting(): number {
    return this.#spare.waiting;
  }

  /**
   * After a restart: turns that were queued or running are recorded as
   * interrupted, and a thread's last turn, ended but with a log that lost its
   * last events (the process killed between saving the record and writing
   * them), gets its turn-done, so that its readers are not left waiting. An
   * earlier turn's log was closed before the next turn began.
   */
  async recover(): Promise<number> {
    let interrupted = 0;
    for (const id of await this.#options.store.listThreadIds()) {
      const turns = await this.#options.store.readTurns(id);
      for (const turn of turns) {
        if (turn.status !== 'queued' && turn.status !== 'running') {
          if (turn === turns.at(-1)) await this.#endLog(id, turn, false);
          continue;
        }
        const startedAt = turn.started_at ?? (await this.#startedAt(id, turn.index));
        const record: TurnRecord = {
          ...turn,
          // Running is not saved (see #runTurn): when it began is in its log.
          started_at: startedAt,
          status: 'interrupted',
          ended_at: await this.#lastHeardOf(id, turn.index, startedAt ?? turn.created_at),
          termination: { reason: 'interrupted', detail: INTERRUPTED_DETAIL },
        };
        await this.#endLog(id, record, true);
        await this.#options.store.saveTurn(id, record);
        interrupted += 1;
      }
    }
    return interrupted;
  }

  /**
   * When an interrupted turn was last heard of: its log's last write (the
   * server stopped soon after), not the restart, which may come days later.
   * The restart's time when the log is gone, or older than the turn.
   */
  async #lastHeardOf(id: string, index: number, notBefore: number): Promise<number> {
    const written = await stat(this.#options.store.eventsPath(id, index)).catch(() => null);
    const seconds = written === null ? null : Math.floor(written.mtimeMs / 1000);
    return seconds !== null && seconds >= notBefore ? seconds : nowSeconds();
  }

  /** When a turn began running, from its log's turn-running event (its second line); null when it never ran. */
  async #startedAt(id: string, index: number): Promise<number | null> {
    for await (const event of readTurnLog(this.#options.store.eventsPath(id, index), 0)) {
      if (event.type === 'turn-running') return event.started_at ?? null;
      // The events of a turn that ran begin with turn-queued and turn-running: anything else means it did not.
      if (event.type !== 'turn-queued') return null;
    }
    return null;
  }

  /** Appends the turn's turn-done, after its last whole event; `always`: even when the log already ends with one. */
  async #endLog(id: string, turn: TurnRecord, always: boolean): Promise<void> {
    const path = this.#options.store.eventsPath(id, turn.index);
    const last = await lastTurnEvent(path);
    if (!always && (last === null || last.type === 'turn-done')) return;
    await endPartialLine(path);
    const log = new TurnLog(path, last?.seq ?? 0);
    log.append({ type: 'turn-done', status: turn.status, termination: turn.termination });
    await log.end();
  }

  async create(fileIds: readonly string[]): Promise<ThreadRecord> {
    const files = await this.#resolveFiles(fileIds);
    const createdMs = Date.now();
    const record: ThreadRecord = {
      id: this.#options.store.newId(),
      created_at: Math.floor(createdMs / 1000),
      created_ms: createdMs,
      model: this.#options.modelId,
      file_ids: [],
      workspace_names: {},
      workspace_bytes: 0,
    };
    await this.#options.store.create(record);
    try {
      return await this.#addFiles(record, files);
    } catch (error) {
      // Refused (413) or failed: no empty thread stays behind.
      await this.#options.store.delete(record.id);
      throw error;
    }
  }

  async get(id: string): Promise<{ record: ThreadRecord; turns: TurnRecord[] }> {
    const record = await this.#options.store.readThread(id);
    if (record === null) throw notFound('thread', id);
    const turns = await this.#options.store.readTurns(id);
    // The live record is newer than the file while a turn runs.
    const live = this.#live.get(id)?.turn;
    return {
      record,
      turns: turns.map((turn) =>
        live !== null && live !== undefined && live.record.index === turn.index ? live.record : turn,
      ),
    };
  }

  async list(): Promise<{ record: ThreadRecord; turns: TurnRecord[] }[]> {
    const threads = await Promise.all(
      (await this.#options.store.listThreadIds()).map((id) =>
        // A folder without its record (deleted meanwhile, or a kill while it was created) is no thread.
        this.get(id).catch((error: unknown) => {
          if (error instanceof ServerRequestError && error.status === 404) return null;
          throw error;
        }),
      ),
    );
    // Newest first, as the file list and OpenAI's list calls.
    return threads
      .filter((thread) => thread !== null)
      .sort((a, b) => createdMs(b.record) - createdMs(a.record) || a.record.id.localeCompare(b.record.id));
  }

  sandboxOpen(id: string): boolean {
    return this.#live.get(id)?.engine?.sandboxOpen ?? false;
  }

  async delete(id: string): Promise<void> {
    // Under the thread's lock: a question being queued meanwhile would write its turn into a removed folder.
    await this.#withLock(id, async () => {
      const record = await this.#options.store.readThread(id);
      if (record === null) throw notFound('thread', id);
      const live = this.#live.get(id);
      if (live?.turn) {
        live.turn.controller.abort(new CancelledError());
        await live.turn.done;
      }
      await this.#release(id);
      // A chart being drawn into the run folder would make it again after the folder is removed.
      await this.#spare.drop(id);
      await this.#options.store.delete(id);
      this.#options.quota?.invalidate();
    });
  }

  /**
   * Queues a question on a thread. Refuses at once (before anything is
   * written) when the queue is full (429) or the thread already has a turn
   * in progress (409).
   */
  async startTurn(id: string, question: string, fileIds: readonly string[]): Promise<LiveTurn> {
    return this.#withLock(id, async () => {
      const record = await this.#options.store.readThread(id);
      if (record === null) throw notFound('thread', id);
      const live = this.#liveThread(id);
      // A turn that has sent turn-done is only closing its log: a client that asks again at once waits for that.
      if (live.turn?.finishing === true) await live.turn.done;
      if (live.turn !== null) {
        throw new ServerRequestError(
          409,
          'THREAD_BUSY',
          `Thread ${id} is still answering turn ${live.turn.record.index}.`,
          {
            fix: 'Wait for that turn to end (or cancel it), then ask again.',
          },
        );
      }
      const files = await this.#resolveFiles(fileIds);
      // A turn writes (its trace, artifacts, reports): none starts in a full data folder.
      await this.#options.quota?.checkRoom('a new turn');
      const slot = this.#options.queue.reserve();
      try {
        return await this.#queueTurn(id, record, live, question, files, slot);
      } catch (error) {
        // Refused after all (its files over the thread's limit, a record not written): the place goes back.
        slot.cancel();
        throw error;
      }
    });
  }

  /** The reserved turn's files placed, its record and log written, and its run begun (waiting for its place). */
  async #queueTurn(
    id: string,
    threadRecord: ThreadRecord,
    live: LiveThread,
    question: string,
    files: readonly FileObject[],
    slot: ReturnType<TurnQueue['reserve']>,
  ): Promise<LiveTurn> {
    let record = threadRecord;
    if (files.length > 0) {
      const before = record.file_ids.length;
      record = await this.#addFiles(record, files);
      // A live sandbox holds the old copy of the workspace: the next question reopens it (replaying the cells)
      // with the new files, which the library finds, hashes, profiles and tells the model about first.
      if (record.file_ids.length > before) await live.engine?.releaseSandbox();
    }
    const turns = await this.#options.store.readTurns(id);
    const index = (turns.at(-1)?.index ?? 0) + 1;
    const turn: TurnRecord = {
      index,
      question,
      status: 'queued',
      created_at: nowSeconds(),
      started_at: null,
      ended_at: null,
      termination: null,
      answer: null,
      rounds: 0,
      artifacts: [],
    };
    await this.#options.store.saveTurn(id, turn);
    const log = new TurnLog(this.#options.store.eventsPath(id, index));
    log.append({ type: 'turn-queued', position: slot.position });
    const controller = new AbortController();
    const liveTurn: LiveTurn = {
      threadId: id,
      record: turn,
      log,
      controller,
      done: Promise.resolve(turn),
      finishing: false,
    };
    liveTurn.done = this.#runTurn(record, liveTurn, slot.whenStarted);
    live.turn = liveTurn;
    if (live.idleTimer !== null) clearTimeout(live.idleTimer);
    live.idleTimer = null;
    return liveTurn;
  }

  liveTurn(id: string, index: number): LiveTurn | null {
    const turn = this.#live.get(id)?.turn ?? null;
    return turn !== null && turn.record.index === index ? turn : null;
  }

  /** A turn's events after `afterSeq`: live ones as they come, a finished turn's from disk. */
  async *events(id: string, index: number, afterSeq: number, signal: AbortSignal): AsyncGenerator<TurnEvent> {
    const live = this.liveTurn(id, index);
    if (live !== null) {
      yield* live.log.follow(afterSeq, signal);
      return;
    }
    const { turns } = await this.get(id);
    if (!turns.some((turn) => turn.index === index)) throw notFound('turn', `${id}/${index}`);
    yield* readTurnLog(this.#options.store.eventsPath(id, index), afterSeq);
  }

  /** A turn's events recorded until now, without waiting for more (a live turn's from memory, an ended one's from disk). */
  async *eventsSoFar(id: string, index: number): AsyncGenerator<TurnEvent> {
    const live = this.liveTurn(id, index);
    if (live !== null) {
      yield* live.log.recorded();
      return;
    }
    const { turns } = await this.get(id);
    if (!turns.some((turn) => turn.index === index)) throw notFound('turn', `${id}/${index}`);
    yield* readTurnLog(this.#options.store.eventsPath(id, index), 0);
  }

  /**
   * Cancels a queued or running turn; false when it had already ended. The
   * thread stays usable with its kernel; `releaseSandbox` also gives the
   * sandbox back once the turn has ended (a client that went away).
   */
  cancel(id: string, index: number, options: { releaseSandbox?: boolean } = {}): boolean {
    const live = this.liveTurn(id, index);
    if (live === null) return false;
    live.controller.abort(new CancelledError());
    if (options.releaseSandbox === true) {
      void live.done.then(async () => {
        const thread = this.#live.get(id);
        if (thread?.turn === null) await this.#releaseSandbox(thread.engine);
      });
    }
    return true;
  }

  /**
   * Server shutdown: cancels every turn and gives every sandbox back. The
   * threads stay open in their traces, so the next server resumes them.
   */
  async shutdown(): Promise<void> {
    this.#spare.clear();
    const live = [...this.#live.values()];
    const turns = live.flatMap((entry) => (entry.turn === null ? [] : [entry.turn]));
    for (const turn of turns) turn.controller.abort(new CancelledError());
    await Promise.allSettled(turns.map((turn) => turn.done));
    for (const entry of live) if (entry.idleTimer !== null) clearTimeout(entry.idleTimer);
    await Promise.allSettled(live.map((entry) => entry.engine?.releaseSandbox()));
  }

  async #runTurn(
    thread: ThreadRecord,
    turn: LiveTurn,
    whenStarted: (signal: AbortSignal) => Promise<() => void>,
  ): Promise<TurnRecord> {
    const { store } = this.#options;
    const signal = turn.controller.signal;
    let release: (() => void) | null = null;
    let record = turn.record;
    const deltas = new TextDeltaBatch((event) => turn.log.append(toTurnEvent(event)));
    try {
      release = await whenStarted(signal);
      // Running is not saved: readers see the live record, and after a crash a queued or running turn is
      // interrupted alike. One write fewer per turn.
      const startedAt = nowSeconds();
      record = { ...record, status: 'running', started_at: startedAt };
      turn.record = record;
      const live = this.#liveThread(thread.id);
      // No engine in this process yet, but earlier turns: the thread resumes from its run folder by replay.
      const resumed =
        (live.engine === null && record.index > 1) || (live.engine !== null && !live.engine.sandboxOpen);
      live.engine ??= await openEngineThread(
        {
          workspaceDir: store.workspaceDir(thread.id),
          runDir: store.runDir(thread.id),
          whenSpare: (task) => this.#spare.add(thread.id, task),
        },
        this.#options.engine,
      );
      turn.log.append({ type: 'turn-running', resumed, started_at: startedAt });
      for await (const event of live.engine.ask(record.question, signal)) {
        if (event.type === 'text-delta') {
          deltas.add(event);
          continue;
        }
        deltas.flush();
        turn.log.append(toTurnEvent(event));
        // A failure the turn survives or ends with (the sandbox, the model, a bug): the operator sees it too.
        if (event.type === 'error')
          this.#options.log.error(
            { threadId: thread.id, turn: record.index, err: event.error },
            'turn error',
          );
        if (event.type === 'round-start') record = { ...record, rounds: record.rounds + 1 };
        if (event.type === 'turn-end') {
          const { termination, answer, rounds, artifacts } = event.result;
          record = {
            ...record,
            status: termination.reason === 'cancelled' ? 'cancelled' : 'finished',
            termination,
            answer,
            rounds,
            artifacts: artifacts.map((artifact) => ({ path: artifact.path, bytes: artifact.sizeBytes })),
          };
        }
        turn.record = record;
      }
      if (record.termination === null) {
        if (signal.aborted) throw signal.reason;
        throw new Error('the turn ended without turn-end');
      }
    } catch (error) {
      deltas.flush();
      const cancelled = signal.aborted;
      if (!cancelled) {
        turn.log.append(toTurnEvent({ type: 'error', error: asDatalystError(error) }));
        this.#options.log.error({ threadId: thread.id, turn: record.index, err: error }, 'turn failed');
      }
      record = {
        ...record,
        status: cancelled ? 'cancelled' : 'failed',
        termination: record.termination ?? {
          reason: cancelled ? 'cancelled' : 'failed',
          detail: cancelled ? 'Cancelled before the analysis started.' : describe(error),
        },
      };
    } finally {
      deltas.flush();
      release?.();
    }
    record = { ...record, ended_at: nowSeconds() };
    turn.record = record;
    try {
      await store.saveTurn(thread.id, record);
    } catch (error) {
      // A full disk must not leave the thread busy for ever, nor its readers waiting: the turn still ends.
      this.#options.log.error(
        { threadId: thread.id, turn: record.index, err: error },
        'turn record not saved',
      );
    }
    // The turn's run folder and logs were written past the quota's count: the next check walks this thread's folder.
    this.#options.quota?.remeasure(store.threadDir(thread.id));
    if (record.termination !== null && failedReasons.has(record.termination.reason)) {
      this.#options.log.error(
        { threadId: thread.id, turn: record.index, termination: record.termination },
        'turn ended by a failure',
      );
    }
    turn.finishing = true;
    turn.log.append({ type: 'turn-done', status: record.status, termination: record.termination });
    await turn.log.end();
    const live = this.#liveThread(thread.id);
    live.turn = null;
    live.lastUsedMs = Date.now();
    this.#scheduleIdle(thread.id);
    this.#trimOpenSandboxes();
    return record;
  }

  /** Past `maxOpenSandboxes` open sandboxes, the idle threads used least recently give theirs back. */
  #trimOpenSandboxes(): void {
    const open = [...this.#live.values()].filter((entry) => entry.engine?.sandboxOpen === true);
    let excess = open.length - this.#options.maxOpenSandboxes;
    const idle = open.filter((entry) => entry.turn === null).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    for (const entry of idle) {
      if (excess <= 0) break;
      excess -= 1;
      if (entry.idleTimer !== null) clearTimeout(entry.idleTimer);
      entry.idleTimer = null;
      void this.#releaseSandbox(entry.engine);
    }
  }

  /** Gives a sandbox back in the background; a failure is logged (never an unhandled rejection). */
  async #releaseSandbox(engine: EngineThread | null | undefined): Promise<void> {
    try {
      await engine?.releaseSandbox();
    } catch (error) {
      this.#options.log.error({ err: error }, 'sandbox release failed');
    }
  }

  #scheduleIdle(id: string): void {
    const live = this.#live.get(id);
    if (live === undefined || live.engine === null) return;
    live.idleTimer = setTimeout(() => {
      live.idleTimer = null;
      if (live.turn === null) void this.#releaseSandbox(live.engine);
    }, this.#options.idleTimeoutMs);
    live.idleTimer.unref();
  }

  /** Ends a thread's library thread (its sandbox goes back); a later turn resumes it from the run folder. */
  async #release(id: string): Promise<void> {
    const live = this.#live.get(id);
    if (live === undefined) return;
    if (live.idleTimer !== null) clearTimeout(live.idleTimer);
    const engine = live.engine;
    live.engine = null;
    if (live.turn === null) this.#live.delete(id);
    await engine?.close();
  }

  #liveThread(id: string): LiveThread {
    let live = this.#live.get(id);
    if (live === undefined) {
      live = { engine: null, idleTimer: null, turn: null, lastUsedMs: Date.now() };
      this.#live.set(id, live);
    }
    return live;
  }

  async #resolveFiles(fileIds: readonly string[]): Promise<FileObject[]> {
    const files: FileObject[] = [];
    for (const fileId of new Set(fileIds)) {
      const file = await this.#options.files.get(fileId);
      if (file === null) throw notFound('file', fileId);
      files.push(file);
    }
    return files;
  }

  /** Places files in the thread's workspace under unique names, within the thread's byte limit. */
  async #addFiles(record: ThreadRecord, files: readonly FileObject[]): Promise<ThreadRecord> {
    const added = files.filter((file) => !record.file_ids.includes(file.id));
    const bytes = record.workspace_bytes + added.reduce((sum, file) => sum + file.bytes, 0);
    if (bytes > this.#options.maxThreadBytes) {
      throw tooLarge(
        `The thread's files would take ${bytes} bytes`,
        this.#options.maxThreadBytes,
        'Start a new thread for these files, or leave out some of them: one thread holds at most this many bytes of files.',
      );
    }
    const names = { ...record.workspace_names };
    const taken = new Set(Object.values(names).map((name) => name.toLowerCase()));
    for (const file of added) {
      const name = uniqueName(file.filename, taken);
      taken.add(name.toLowerCase());
      await this.#options.files.placeInto(file, path.join(this.#options.store.workspaceDir(record.id), name));
      names[file.id] = name;
    }
    const next: ThreadRecord = {
      ...record,
      file_ids: [...record.file_ids, ...added.map((file) => file.id)],
      workspace_names: names,
      workspace_bytes: bytes,
    };
    await this.#options.store.saveThread(next);
    return next;
  }

  async #withLock<T>(id: string, action: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(id) ?? Promise.resolve();
    const current = previous.then(action, action);
    const settled = current.catch(() => undefined);
    this.#locks.set(id, settled);
    try {
      return await current;
    } finally {
      if (this.#locks.get(id) === settled) this.#locks.delete(id);
    }
  }
}

/** `data.csv`, then `data (2).csv`, … (compared without case: the sandbox may run on a case-insensitive disk). */
function uniqueName(filename: string, taken: ReadonlySet<string>): string {
  if (!taken.has(filename.toLowerCase())) return filename;
  const extension = path.extname(filename);
  const stem = filename.slice(0, filename.length - extension.length);
  for (let counter = 2; ; counter += 1) {
    const candidate = `${stem} (${counter})${extension}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

/** The library's event as JSON: an error becomes plain data. */
function toTurnEvent(event: AgentEvent): UnnumberedTurnEvent {
  if (event.type === 'error') {
    const { code, message, fix, fault } = event.error;
    return { type: 'error', error: { code, message, fix, fault } };
  }
  // When the cell began, by the server's clock: a client that attaches mid-cell (a reload) counts from it.
  if (event.type === 'execution-start') return { ...event, started_ms: Date.now() };
  return event as UnnumberedTurnEvent;
}

function asDatalystError(error: unknown): DatalystError {
  if (DatalystError.isInstance(error)) return error;
  return new DatalystError('INTERNAL', describe(error), {
    fault: 'internal',
    fix: 'This is a bug in Datalyst; please report it with the server log.',
    cause: error,
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function createdMs(record: ThreadRecord): number {
  return record.created_ms ?? record.created_at * 1000;
}
