import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { ServerRequestError } from './http-error.ts';

/**
 * One limit on the bytes of the whole data folder: uploads, thread
 * workspaces, run folders (traces, artifacts, reports), event logs. A file
 * with several hard links (an upload placed in threads' workspaces) counts
 * once. Checked before an upload (and while it streams) and before a turn is
 * queued; a turn already running may go past it by what its cells write,
 * which the sandbox's own limits bound.
 *
 * The folder is measured by walking it (no counter can see what the sandbox
 * writes into a run folder); walks that overlap share one, and bytes of
 * uploads still streaming are added to the last measure.
 */
export class DataQuota {
  readonly #root: string;
  readonly limitBytes: number;
  #walk: Promise<number> | null = null;
  /** Bytes of uploads being written now (not yet in a finished walk). */
  #streaming = 0;
  /** What the last finished walk measured. */
  #measured = 0;

  constructor(root: string, limitBytes: number) {
    this.#root = root;
    this.limitBytes = limitBytes;
  }

  /** Bytes the data folder holds now (hard links once). */
  async usedBytes(): Promise<number> {
    this.#walk ??= measure(this.#root)
      .then((bytes) => {
        this.#measured = bytes;
        return bytes;
      })
      .finally(() => {
        this.#walk = null;
      });
    return this.#walk;
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
  async meterUpload(): Promise<{ add(bytes: number): void; done(): void }> {
    await this.checkRoom('this upload');
    let counted = 0;
    let finished = false;
    return {
      add: (bytes) => {
        counted += bytes;
        this.#streaming += bytes;
        // Against the folder and every upload streaming now: uploads started together do not each get the whole room.
        const used = this.#measured + this.#streaming;
        if (used > this.limitBytes) throw this.full('this upload', used);
      },
      done: () => {
        if (finished) return;
        finished = true;
        this.#streaming -= counted;
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

/** Bytes under `root`, each inode once; entries that vanish during the walk are skipped. */
async function measure(root: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const visit = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    await Promise.all(
      entries.map(async (entry) => {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) return visit(full);
        try {
          const stats = await lstat(full);
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
