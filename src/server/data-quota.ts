import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { ServerRequestError } from './http-error.ts';

/** How long a walk of the data folder is reused (the server's own writes added to it). */
export const DATA_QUOTA_REUSE_MS = 3000;
/** At most this many readdir/lstat calls at once while measuring. */
const MEASURE_CONCURRENCY = 16;

export interface DataQuotaOptions {
  /** How long one walk is reused; 0 walks every time. */
  reuseMs?: number;
  /** The clock (tests). */
  now?: () => number;
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
  /** Folders measured apart (`remeasure`), with the files (inode → bytes) each holds; '' is the rest of the data folder. */
  #areas = new Map<string, Area>([['', newArea()]]);
  /** Folders named to `remeasure` since they were last walked. */
  #stale = new Set<string>();
  #areaWalk: Promise<void> | null = null;
  /** Which area counts each inode (a file hard-linked in several folders is counted by one). */
  #owner = new Map<string, string>();

  constructor(root: string, limitBytes: number, options: DataQuotaOptions = {}) {
    this.#root = root;
    this.limitBytes = limitBytes;
    this.#reuseMs = options.reuseMs ?? DATA_QUOTA_REUSE_MS;
    this.#now = options.now ?? Date.now;
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
        bytes: measure(this.#root, new Set(this.#areas.keys()))
          .then((areas) => {
            const bytes = [...areas.values()].reduce((sum, area) => sum + area.bytes, 0);
            // A newer walk may have finished first: the older result is dropped.
            if (this.#last === null || this.#last.startedAt <= startedAt) {
              this.#areas = areas;
              this.#owner = new Map(
                [...areas.entries()].flatMap(([name, area]) =>
                  [...area.files.keys()].map((inode) => [inode, name]),
                ),
              );
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

  /** `dir` (inside the data folder) changed, or is gone: the next check walks it again, and nothing else. */
  remeasure(dir: string): void {
    const folder = path.resolve(dir);
    if (!this.#areas.has(folder)) this.#areas.set(folder, newArea());
    this.#stale.add(folder);
  }

  /** Walks the folders named to `remeasure`; a file another folder already counts (a hard link) is not counted again. */
  async #walkStaleAreas(): Promise<void> {
    const folders = [...this.#stale];
    this.#stale.clear();
    const epoch = this.#epoch;
    const walked = await Promise.all(folders.map((folder) => measureFolder(folder)));
    // A full walk that began meanwhile counts these folders itself.
    if (epoch !== this.#epoch) return;
    const rest = this.#areas.get('') ?? newArea();
    folders.forEach((folder, index) => {
      const old = this.#areas.get(folder) ?? newArea();
      for (const inode of old.files.keys()) this.#owner.delete(inode);
      const area = newArea();
      for (const [inode, size] of walked[index] as Map<string, number>) {
        const owner = this.#owner.get(inode);
        if (owner === '' && inside(folder, rest.paths.get(inode) ?? '')) {
          // Counted with the rest of the data folder before this folder was measured apart: it moves here.
          rest.bytes -= rest.files.get(inode) ?? 0;
          this.#measured -= rest.files.get(inode) ?? 0;
          rest.files.delete(inode);
          rest.paths.delete(inode);
        } else if (owner !== undefined) continue;
        area.files.set(inode, size);
        area.bytes += size;
        this.#owner.set(inode, folder);
      }
      this.#measured += area.bytes - old.bytes;
      // A folder that is gone is no longer measured apart.
      if (area.files.size === 0) this.#areas.delete(folder);
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

/** The files of one measured folder: bytes by inode, and (for the rest of the data folder) where each was found. */
interface Area {
  files: Map<string, number>;
  paths: Map<string, string>;
  bytes: number;
}

const newArea = (): Area => ({ files: new Map(), paths: new Map(), bytes: 0 });

const inside = (folder: string, file: string): boolean => file.startsWith(`${folder}${path.sep}`);

/**
 * Walks `root`, calling `onFile` once per file (symbolic links included, never
 * followed) with its inode key, its size and the folder of `areaFolders` it is
 * in ('' for none); entries that vanish during the walk are skipped. At most
 * MEASURE_CONCURRENCY readdir/lstat calls run at once (only the calls are
 * limited, not the recursion, which would deadlock).
 */
async function walk(
  root: string,
  areaFolders: ReadonlySet<string>,
  onFile: (inode: string, size: number, file: string, area: string) => void,
): Promise<void> {
  const limit = pLimit(MEASURE_CONCURRENCY);
  const visit = async (dir: string, area: string): Promise<void> => {
    let entries;
    try {
      entries = await limit(() => readdir(dir, { withFileTypes: true }));
    } catch {
      return;
    }
    await Promise.all(
      entries.map(async (entry) => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return visit(full, areaFolders.has(full) ? full : area);
        try {
          const stats = await limit(() => lstat(full));
          onFile(`${stats.dev}:${stats.ino}`, stats.size, full, area);
        } catch {
          // Removed meanwhile.
        }
      }),
    );
  };
  await visit(path.resolve(root), '');
}

/** The whole data folder by area (the folders measured apart, and the rest), each inode counted once. */
async function measure(root: string, areaFolders: ReadonlySet<string>): Promise<Map<string, Area>> {
  const areas = new Map<string, Area>([['', newArea()]]);
  const seenIn = new Map<string, string>();
  await walk(root, areaFolders, (inode, size, file, name) => {
    const seen = seenIn.get(inode);
    // A file also linked outside the folders measured apart (an upload placed in a thread's workspace) is
    // the rest's: a thread's folder, walked again alone or gone, never takes it with it.
    if (seen !== undefined && (name !== '' || seen === '')) return;
    if (seen !== undefined) {
      const owner = areas.get(seen) as Area;
      owner.files.delete(inode);
      owner.bytes -= size;
    }
    seenIn.set(inode, name);
    let area = areas.get(name);
    if (area === undefined) areas.set(name, (area = newArea()));
    area.files.set(inode, size);
    if (name === '') area.paths.set(inode, file);
    area.bytes += size;
  });
  return areas;
}

/** One folder's files: bytes by inode. */
async function measureFolder(folder: string): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  await walk(folder, new Set(), (inode, size) => files.set(inode, size));
  return files;
}
