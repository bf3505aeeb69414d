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
 * streaming are added too. What frees or writes room the server cannot count
 * (a deletion, a turn that ended) calls `invalidate`, so that the next check
 * walks again.
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

  constructor(root: string, limitBytes: number, options: DataQuotaOptions = {}) {
    this.#root = root;
    this.limitBytes = limitBytes;
    this.#reuseMs = options.reuseMs ?? DATA_QUOTA_REUSE_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Bytes the data folder holds now (hard links once), from a walk at most `reuseMs` old plus the uploads stored since. */
  async usedBytes(): Promise<number> {
    const last = this.#last;
    if (last !== null && last.epoch === this.#epoch && this.#now() - last.startedAt < this.#reuseMs)
      return this.#measured + this.#written;
    if (this.#walk === null || this.#walk.epoch !== this.#epoch) {
      const epoch = this.#epoch;
      const startedAt = this.#now();
      const writtenBefore = this.#written;
      const walk = {
        epoch,
        bytes: measure(this.#root)
          .then((bytes) => {
            // A newer walk may have finished first: the older result is dropped.
            if (this.#last === null || this.#last.startedAt <= startedAt) {
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

  /** The folder changed in a way not counted here (files removed, a turn's run folder written): the next check walks it. */
  invalidate(): void {
    this.#epoch += 1;
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
 * Bytes under `root`, each inode once; entries that vanish during the walk
 * are skipped. At most MEASURE_CONCURRENCY readdir/lstat calls run at once
 * (only the calls are limited, not the recursion, which would deadlock).
 */
async function measure(root: string): Promise<number> {
  const limit = pLimit(MEASURE_CONCURRENCY);
  const seen = new Set<string>();
  let total = 0;
  const visit = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await limit(() => readdir(dir, { withFileTypes: true }));
    } catch {
      return;
    }
    await Promise.all(
      entries.map(async (entry) => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return visit(full);
        try {
          const stats = await limit(() => lstat(full));
          const key = `${stats.dev}:${stats.ino}`;
          if (seen.has(key)) return;
          seen.add(key);
          total += stats.size;
        } catch {
          // Removed meanwhile.
        }
      }),
    );
  };
  await visit(root);
  return total;
}
