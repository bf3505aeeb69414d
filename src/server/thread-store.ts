import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { fileIdSchema, threadIdSchema } from './openai-schemas.ts';
import { terminationSchema, turnStatusSchema } from './api-schemas.ts';
import { isMissingFile } from '../util/fs-errors.ts';

/**
 * Threads on disk, one folder each under `<data>/threads/<id>/`:
 * `thread.json`, `workspace/` (the thread's files; only these reach its
 * sandbox) `run/` (the library thread's run folder: trace.jsonl,
 * artifacts/, reports) and `turns/<n>/` with `turn.json` and `events.jsonl`. Records are written to a temporary name and renamed, so a
 * crash leaves the old record or the new one, never half of one.
 */

export const threadRecordSchema = z.object({
  id: threadIdSchema,
  created_at: z.number().int(),
  /** Milliseconds, to list threads made within one second in order (absent from records of older servers). */
  created_ms: z.number().int().optional(),
  model: z.string(),
  file_ids: z.array(fileIdSchema),
  /** Name each file has in the workspace, by file id. */
  workspace_names: z.record(z.string(), z.string()),
  /** Bytes of all files in the workspace. */
  workspace_bytes: z.number().int().nonnegative(),
});
export type ThreadRecord = z.infer<typeof threadRecordSchema>;

export const turnRecordSchema = z.object({
  index: z.number().int().positive(),
  question: z.string(),
  status: turnStatusSchema,
  created_at: z.number().int(),
  started_at: z.number().int().nullable(),
  ended_at: z.number().int().nullable(),
  termination: terminationSchema.nullable(),
  answer: z.string().nullable(),
  rounds: z.number().int().nonnegative(),
  artifacts: z.array(z.object({ path: z.string(), bytes: z.number().int().nonnegative() })),
});
export type TurnRecord = z.infer<typeof turnRecordSchema>;

export class ThreadStore {
  readonly #root: string;
  /**
   * The records this process has read or written, kept so that a turn does
   * not read and parse its thread's record and every earlier turn's from disk
   * (bench:server). Written through: the files stay the truth after a
   * restart. The server is the data folder's only writer.
   */
  readonly #threads = new RecentlyUsed<ThreadRecord>(MAX_CACHED_THREADS);
  readonly #turns = new RecentlyUsed<Map<number, TurnRecord>>(MAX_CACHED_THREADS);
  /** Saves per thread: a read from disk that a save overtook is not kept. */
  readonly #saves = new Map<string, number>();

  constructor(dataDir: string) {
    this.#root = path.join(dataDir, 'threads');
  }

  /** The folder holding one folder per thread. */
  get threadsDir(): string {
    return this.#root;
  }

  async init(): Promise<void> {
    await mkdir(this.#root, { recursive: true });
  }

  newId(): string {
    return `thread-${randomBytes(12).toString('hex')}`;
  }

  threadDir(id: string): string {
    return path.join(this.#root, threadIdSchema.parse(id));
  }

  workspaceDir(id: string): string {
    return path.join(this.threadDir(id), 'workspace');
  }

  turnDir(id: string, index: number): string {
    return path.join(this.threadDir(id), 'turns', String(index));
  }

  /** The thread's run folder (the library thread's trace.jsonl and artifacts/). */
  runDir(id: string): string {
    return path.join(this.threadDir(id), 'run');
  }

  eventsPath(id: string, index: number): string {
    return path.join(this.turnDir(id, index), 'events.jsonl');
  }

  async create(record: ThreadRecord): Promise<void> {
    await mkdir(this.workspaceDir(record.id), { recursive: true });
    await mkdir(path.join(this.threadDir(record.id), 'turns'), { recursive: true });
    await this.saveThread(record);
  }

  async saveThread(record: ThreadRecord): Promise<void> {
    await atomicWrite(path.join(this.threadDir(record.id), 'thread.json'), JSON.stringify(record));
    this.#saved(record.id);
    this.#threads.set(record.id, record);
  }

  #saved(id: string): void {
    this.#saves.set(id, (this.#saves.get(id) ?? 0) + 1);
  }

  async readThread(id: string): Promise<ThreadRecord | null> {
    if (!threadIdSchema.safeParse(id).success) return null;
    const kept = this.#threads.get(id);
    if (kept !== undefined) return kept;
    const saves = this.#saves.get(id);
    try {
      const record = threadRecordSchema.parse(
        JSON.parse(await readFile(path.join(this.threadDir(id), 'thread.json'), 'utf8')),
      );
      if (this.#saves.get(id) === saves) this.#threads.set(id, record);
      return this.#threads.get(id) ?? record;
    } catch (error) {
      if (isMissingFile(error)) return null;
      throw error;
    }
  }

  async listThreadIds(): Promise<string[]> {
    const names = await readdir(this.#root);
    return names.filter((name) => threadIdSchema.safeParse(name).success);
  }

  async delete(id: string): Promise<void> {
    this.#forget(id);
    try {
      await rm(this.threadDir(id), { recursive: true, force: true });
    } finally {
      // A read that began before the removal may have put the records back.
      this.#forget(id);
    }
  }

  #forget(id: string): void {
    this.#threads.delete(id);
    this.#turns.delete(id);
    this.#saved(id);
  }

  async saveTurn(id: string, turn: TurnRecord): Promise<void> {
    // The turn's folder is made with its first record (queued); its later records only replace turn.json.
    if (turn.status === 'queued') await mkdir(this.turnDir(id, turn.index), { recursive: true });
    await atomicWrite(path.join(this.turnDir(id, turn.index), 'turn.json'), JSON.stringify(turn));
    this.#saved(id);
    this.#turns.get(id)?.set(turn.index, turn);
  }

  async readTurns(id: string): Promise<TurnRecord[]> {
    const kept = this.#turns.get(id);
    if (kept !== undefined) return [...kept.values()].sort((a, b) => a.index - b.index);
    const saves = this.#saves.get(id);
    const turns = await this.#readTurnFiles(id);
    // A save while the files were read may be missing from them: kept only when none came.
    if (this.#saves.get(id) === saves && !this.#turns.has(id))
      this.#turns.set(id, new Map(turns.map((turn) => [turn.index, turn])));
    return turns;
  }

  async #readTurnFiles(id: string): Promise<TurnRecord[]> {
    let names: string[];
    try {
      names = await readdir(path.join(this.threadDir(id), 'turns'));
    } catch (error) {
      if (isMissingFile(error)) return [];
      throw error;
    }
    const turns: TurnRecord[] = [];
    for (const name of names) {
      if (!/^[1-9][0-9]*$/.test(name)) continue;
      try {
        turns.push(
          turnRecordSchema.parse(
            JSON.parse(await readFile(path.join(this.turnDir(id, Number(name)), 'turn.json'), 'utf8')),
          ),
        );
      } catch (error) {
        if (!isMissingFile(error)) throw error;
      }
    }
    return turns.sort((a, b) => a.index - b.index);
  }
}

/** Threads whose records are kept in memory at most (the least recently used are dropped first). */
const MAX_CACHED_THREADS = 1000;

/** A map of at most `max` entries; reading or writing an entry makes it the most recent, the least recent go first. */
class RecentlyUsed<Value> {
  readonly #entries = new Map<string, Value>();
  constructor(readonly max: number) {}

  get(key: string): Value | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  set(key: string, value: Value): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}

/**
 * Written synchronously: a record is a few hundred bytes and its two
 * syscalls take well under a millisecond, while each thread-pool round trip
 * (open, write, close, rename) waited for a time slice on a busy machine —
 * ~3 ms at the end of every turn under load, before turn-done could go out.
 */
function atomicWrite(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
