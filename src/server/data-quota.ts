import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pLimit from 'p-limit';
import { ServerRequestError } from './http-error.ts';

/** How long a walk of the data folder is reused (the server's own writes added to it). */
export const DATA_QUOTA_REUSE_MS = 3000;
/** At most this many readdir/lstat calls at once while measuring. */
const MEASURE_CONCURRENCY = 16;
/**
 * A walk's calls are synchronous for its first this many milliseconds, then go through the thread pool. A
 * thread's folder (a few dozen entries, walked after each of its turns) is then a few dozen syscalls of a
 * few microseconds each: through the thread pool each entry was a promise, a pool thread's wake-up and an
 * event-loop wake-up, and such a walk cost 0.3–0.8 ms of CPU, now ~0.1 ms (a follow-up turn ~1 ms less of
 * the server's CPU in bench:server-cpu). A large folder blocks the event loop no longer than this (and one call).
 */
const SYNC_WALK_MS = 2;

export interface DataQuotaOptions {
  /** How long one walk is reused; 0 walks every time. */
  reuseMs?: number;
  /** The clock (tests). */
  now?: () => number;
  /** How long each walk's calls are synchronous (SYNC_WALK_MS; tests: 0, every call through the thread pool). */
  syncWalkMs?: number;
  /**
   * A folder inside the data folder whose every child folder (a thread's) is
   * measured apart: `remeasure(child)` walks that folder alone.
   */
  areasUnder?: string;
}

/**
 * One limit on the bytes of the whole data folder: uploads, thread
 * workspaces, run folders (traces, artifacts, reports), event logs. A file
 * with several hard links (an upload placed in threads' workspaces) counts
 * once. Checked before an upload (and while it streams) and before a turn is
 * queued; a turn already running may go past it by what its cells write,
 * which the sandbox's own limits bound.
 *
 * The folder is measured by walking it (no counter can see what the sandbox
 * writes into a run folder). A walk is reused for `reuseMs` (uploads and new
 * turns do not each walk the folder), with the bytes of uploads stored since
 * it began added to it; walks that overlap share one; bytes of uploads still
 * streaming are added too. A folder that changed in a way the server cannot
 * count (a turn wrote its thread's folder, a thread was deleted) is named to
 * `remeasure`: the next check walks that folder only, not the whole data
 * folder (with many threads, a walk of everything at every turn was most of
 * the server's own work per follow-up). What changed elsewhere (a file
 * deleted) calls `invalidate`, so that the next check walks everything.
 */
export class DataQuota {
  readonly #root: string;
  readonly limitBytes: number;
  readonly #reuseMs: number;
  readonly #now: () => number;
  readonly #syncWalkMs: number;
  #walk: { epoch: number; bytes: Promise<number> } | null = null;
  /** Bumped by `invalidate`: a walk of an older epoch is neither joined nor reused. */
  #epoch = 0;
  /** The last finished walk: its epoch and when it began. */
  #last: { epoch: number; startedAt: number } | null = null;
  /** Bytes of uploads being written now (not yet in a finished walk). */
  #streaming = 0;
  /** Bytes of uploads stored since the last finished walk began (some may be in it: counted twice, never missed). */
  #written = 0;
  /** What the last finished walk measured. */
  #measured = 0;
  /** Bytes by area: each folder under `areasUnder`, and '' for the rest of the data folder. */
  #areas = new Map<string, Area>([['', newArea()]]);
  /** Areas named to `remeasure` since they were last walked. */
  #stale = new Set<string>();
  #areaWalk: Promise<void> | null = null;
  /** Which area counts each file with several hard links (an upload placed in threads' workspaces): one. */
  #owner = new Map<string, string>();
  readonly #areasUnder: string | null;

  constructor(root: string, limitBytes: number, options: DataQuotaOptions = {}) {
    this.#root = root;
    this.limitBytes = limitBytes;
    this.#reuseMs = options.reuseMs ?? DATA_QUOTA_REUSE_MS;
    this.#now = options.now ?? Date.now;
    this.#syncWalkMs = options.syncWalkMs ?? SYNC_WALK_MS;
    this.#areasUnder = options.areasUnder === undefined ? null : path.resolve(options.areasUnder);
  }

  /** Bytes the data folder holds now (hard links once), from a walk at most `reuseMs` old plus the uploads stored since. */
  async usedBytes(): Promise<number> {
    const last = this.#last;
    if (last !== null && last.epoch === this.#epoch && this.#now() - last.startedAt < this.#reuseMs) {
      // Walks of changed folders that overlap share one; a folder named meanwhile waits for the next.
      while (this.#stale.size > 0) {
        this.#areaWalk ??= this.#walkStaleAreas().finally(() => (this.#areaWalk = null));
        await this.#areaWalk;
      }
      return this.#measured + this.#written;
    }
    if (this.#walk === null || this.#walk.epoch !== this.#epoch) {
      const epoch = this.#epoch;
      const startedAt = this.#now();
      const writtenBefore = this.#written;
      const walk = {
        epoch,
        bytes: measure(this.#root, this.#areasUnder, this.#syncWalkMs)
          .then(({ areas, owner }) => {
            const bytes = [...areas.values()].reduce((sum, area) => sum + area.bytes, 0);
            // A newer walk may have finished first: the older result is dropped.
            if (this.#last === null || this.#last.startedAt <= startedAt) {
              this.#areas = areas;
              this.#owner = owner;
              this.#measured = bytes;
              this.#written -= writtenBefore;
              this.#last = { epoch, startedAt };
            }
            return bytes;
          })
          .finally(() => {
            if (this.#walk === walk) this.#walk = null;
          }),
      };
      this.#walk = walk;
    }
    await this.#walk.bytes;
    return this.#measured + this.#written;
  }

  /** The folder changed in a way not counted here (files removed): the next check walks all of it. */
  invalidate(): void {
    this.#epoch += 1;
  }

  /**
   * `dir`, a folder under `areasUnder`, changed or is gone: the next check
   * walks it again, and nothing else. Any other folder: the next check walks
   * everything.
   */
  remeasure(dir: string): void {
    const folder = path.resolve(dir);
    if (this.#areasUnder === null || path.dirname(folder) !== this.#areasUnder) this.invalidate();
    else this.#stale.add(folder);
  }

  /** Walks the areas named to `remeasure`; a hard-linked file another area counts is not counted again. */
  async #walkStaleAreas(): Promise<void> {
    const folders = [...this.#stale];
    this.#stale.clear();
    const epoch = this.#epoch;
    const walked = await Promise.all(folders.map((folder) => measure(folder, null, this.#syncWalkMs)));
    // A full walk that began meanwhile counts these folders itself.
    if (epoch !== this.#epoch) return;
    folders.forEach((folder, index) => {
      const old = this.#areas.get(folder) ?? newArea();
      for (const inode of old.linked.keys()) if (this.#owner.get(inode) === folder) this.#owner.delete(inode);
      const found = (walked[index] as Awaited<ReturnType<typeof measure>>).areas.get('') ?? newArea();
      const area: Area = { bytes: found.bytes, linked: new Map() };
      for (const [inode, size] of found.linked) {
        if (this.#owner.has(inode)) {
          area.bytes -= size;
          continue;
        }
        area.linked.set(inode, size);
        this.#owner.set(inode, folder);
      }
      this.#measured += area.bytes - old.bytes;
      // A folder that is gone is no longer measured apart.
      if (area.bytes === 0 && area.linked.size === 0) this.#areas.delete(folder);
      else this.#areas.set(folder, area);
    });
  }

  /** Throws 507 when the folder is at or past its limit (no new turn, no new upload). */
  async checkRoom(what: string): Promise<number> {
    const used = (await this.usedBytes()) + this.#streaming;
    if (used >= this.limitBytes) throw this.full(what, used);
    return this.limitBytes - used;
  }

  /**
   * Counts an upload's bytes as they arrive; the returned `add` throws 507
   * once the folder would pass its limit. Call `done` when the upload is
   * stored or refused.
   */
  async meterUpload(): Promise<{ add(bytes: number): void; done(stored?: boolean): void }> {
    await this.checkRoom('this upload');
    let counted = 0;
    let finished = false;
    return {
      add: (bytes) => {
        counted += bytes;
        this.#streaming += bytes;
        // Against the folder and every upload streaming now: uploads started together do not each get the whole room.
        const used = this.#measured + this.#written + this.#streaming;
        if (used > this.limitBytes) throw this.full('this upload', used);
      },
      /** `stored`: the upload's bytes stay in the folder (counted until a walk sees them). */
      done: (stored = false) => {
        if (finished) return;
        finished = true;
        this.#streaming -= counted;
        if (stored) this.#written += counted;
      },
    };
  }

  full(what: string, usedBytes: number): ServerRequestError {
    return new ServerRequestError(
      507,
      'DATA_DIR_FULL',
      `The server's data folder is full: with ${what} it would hold ${usedBytes} bytes (limit ${this.limitBytes} bytes).`,
      {
        fix: 'Delete threads or files you no longer need (DELETE /v1/threads/{id}, DELETE /v1/files/{id}), or start the server with a larger --max-data-gb.',
        fault: 'system',
      },
    );
  }
}

/**
 * One area's bytes, every file counted, and its files with several hard links
 * (inode → bytes): only those can be in another area too, so only those are
 * kept (a data folder of many small files costs no memory per file).
 */
interface Area {
  bytes: number;
  linked: Map<string, number>;
}

const newArea = (): Area => ({ bytes: 0, linked: new Map() });

/**
 * The bytes under `root` by area (each child folder of `areasUnder`, and ''
 * for the rest), a file with several links counted once: by the rest when it
 * is linked there (an upload), else by the first area in name order. Entries
 * that vanish during the walk are skipped. The calls are synchronous for
 * the walk's first `syncWalkMs`, then through the thread pool, at most
 * MEASURE_CONCURRENCY at once (only the calls are limited, not the
 * recursion, which would deadlock).
 */
async function measure(
  root: string,
  areasUnder: string | null,
  syncWalkMs: number,
): Promise<{ areas: Map<string, Area>; owner: Map<string, string> }> {
  const limit = pLimit(MEASURE_CONCURRENCY);
  const syncUntil = performance.now() + syncWalkMs;
  const areas = new Map<string, Area>([['', newArea()]]);
  const areaOf = (name: string): Area => {
    let area = areas.get(name);
    if (area === undefined) areas.set(name, (area = newArea()));
    return area;
  };
  const count = (name: string, stats: Stats | undefined): void => {
    if (stats === undefined) return; // removed meanwhile
    const area = areaOf(name);
    if (stats.nlink > 1) area.linked.set(`${stats.dev}:${stats.ino}`, stats.size);
    else area.bytes += stats.size;
  };
  // A small folder is measured before the first await.
  const visit = async (dir: string, name: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries =
        performance.now() < syncUntil
          ? readdirSync(dir, { withFileTypes: true })
          : await limit(() => readdir(dir, { withFileTypes: true }));
    } catch {
      return;
    }
    const pending: Promise<void>[] = [];
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        pending.push(visit(full, dir === areasUnder ? full : name));
      } else if (performance.now() < syncUntil) {
        try {
          count(name, lstatSync(full, { throwIfNoEntry: false }));
        } catch {
          // Unreadable: not counted, as below.
        }
      } else {
        pending.push(
          limit(() => lstat(full)).then(
            (stats) => count(name, stats),
            () => undefined,
          ),
        );
      }
    }
    await Promise.all(pending);
  };
  await visit(path.resolve(root), '');
  // Each linked file to one area; the others do not count it.
  const owner = new Map<string, string>();
  for (const name of [...areas.keys()].sort()) {
    for (const [inode, size] of (areas.get(name) as Area).linked) {
      if (owner.has(inode)) continue;
      owner.set(inode, name);
      (areas.get(name) as Area).bytes += size;
    }
  }
  for (const [name, area] of areas)
    for (const inode of [...area.linked.keys()]) if (owner.get(inode) !== name) area.linked.delete(inode);
  return { areas, owner };
}
