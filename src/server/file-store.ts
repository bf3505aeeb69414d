import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, readFile, readdir, rename, rm, stat, writeFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { DataQuota } from './data-quota.ts';
import { fileTooLarge } from './http-error.ts';
import { fileObjectSchema, type FileObject } from './openai-schemas.ts';
import { hasErrorCode, isMissingFile } from '../util/fs-errors.ts';

/** The file object on disk, with the upload time in milliseconds (the object has only seconds). */
const storedFileSchema = fileObjectSchema.extend({ created_ms: z.number() });
type StoredFile = z.infer<typeof storedFileSchema>;

/**
 * Uploaded files, stored by content: `files/blobs/<sha256>` holds the bytes
 * once however often they are uploaded, `files/meta/<id>.json` the file
 * object. A blob is written to a temporary name and renamed into place, so a
 * crash never leaves a half blob under a hash.
 */
export class FileStore {
  readonly #blobsDir: string;
  readonly #metaDir: string;
  readonly #tmpDir: string;
  readonly #maxFileBytes: number;
  /** Orders uploads within one millisecond. */
  #sequence = 0;
  /** Per blob: an upload's rename and file object, and a delete's "is the blob still named?" check, one at a time. */
  readonly #blobLocks = new Map<string, Promise<unknown>>();

  readonly #quota: DataQuota | null;

  /** `quota`: the data folder's limit, which an upload must also fit in. */
  constructor(dataDir: string, maxFileBytes: number, quota: DataQuota | null = null) {
    this.#quota = quota;
    this.#blobsDir = path.join(dataDir, 'files', 'blobs');
    this.#metaDir = path.join(dataDir, 'files', 'meta');
    this.#tmpDir = path.join(dataDir, 'files', 'tmp');
    this.#maxFileBytes = maxFileBytes;
  }

  async init(): Promise<void> {
    await Promise.all(
      [this.#blobsDir, this.#metaDir, this.#tmpDir].map((dir) => mkdir(dir, { recursive: true })),
    );
    // Uploads cut by a crash.
    for (const name of await readdir(this.#tmpDir)) await rm(path.join(this.#tmpDir, name), { force: true });
  }

  /** Streams an upload to disk, hashing it; over the limit it stops reading and answers 413. */
  async put(
    source: Readable,
    filename: string,
    purpose: string,
    isTruncated: () => boolean,
  ): Promise<FileObject> {
    const tmpPath = path.join(this.#tmpDir, randomBytes(12).toString('hex'));
    const hash = createHash('sha256');
    let bytes = 0;
    const limit = this.#maxFileBytes;
    // 507 before a byte is read when the data folder is already full.
    const quota = await this.#quota?.meterUpload();
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes > limit) {
          callback(fileTooLarge(limit));
          return;
        }
        try {
          quota?.add(chunk.length);
        } catch (error) {
          callback(error as Error);
          return;
        }
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    let stored = false;
    try {
      await pipeline(source, meter, createWriteStream(tmpPath, { flags: 'wx' }));
      if (isTruncated()) throw fileTooLarge(limit);
      stored = true;
    } catch (error) {
      await rm(tmpPath, { force: true });
      throw error;
    } finally {
      quota?.done(stored);
    }
    const sha256 = hash.digest('hex');
    const file: FileObject = {
      id: `file-${randomBytes(12).toString('hex')}`,
      object: 'file',
      bytes,
      created_at: Math.floor(Date.now() / 1000),
      filename,
      purpose,
      status: 'processed',
      sha256,
    };
    const createdMs = Date.now() + this.#sequence++ / 1000;
    // A delete of another file with these bytes must not see the blob before this file object names it.
    await this.#withBlobLock(sha256, async () => {
      await rename(tmpPath, this.blobPath(sha256));
      await this.#write(file, createdMs);
    });
    return file;
  }

  async setPurpose(file: FileObject, purpose: string): Promise<FileObject> {
    const record = await this.#read(file.id);
    const next = { ...file, purpose };
    await this.#write(next, record?.created_ms ?? Date.now());
    return next;
  }

  async get(id: string): Promise<FileObject | null> {
    const record = await this.#read(id);
    if (record === null) return null;
    const { created_ms: _createdMs, ...file } = record;
    return file;
  }

  async #read(id: string): Promise<StoredFile | null> {
    if (!/^file-[0-9a-f]{24}$/.test(id)) return null;
    try {
      return storedFileSchema.parse(JSON.parse(await readFile(this.#metaPath(id), 'utf8')));
    } catch (error) {
      if (isMissingFile(error)) return null;
      throw error;
    }
  }

  async #write(file: FileObject, createdMs: number): Promise<void> {
    const record: StoredFile = { ...file, created_ms: createdMs };
    const tmp = `${this.#metaPath(file.id)}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(record));
    await rename(tmp, this.#metaPath(file.id));
  }

  async list(): Promise<FileObject[]> {
    const names = await readdir(this.#metaDir);
    const records = await Promise.all(
      names
        .filter((name) => name.endsWith('.json'))
        .map((name) => this.#read(name.slice(0, -'.json'.length))),
    );
    // Newest first, as OpenAI's list calls answer by default (created_at has only seconds: created_ms orders).
    return records
      .filter((record) => record !== null)
      .sort((a, b) => b.created_ms - a.created_ms || a.id.localeCompare(b.id))
      .map(({ created_ms: _createdMs, ...file }) => file);
  }

  /** Removes the file object; the blob goes when no other file object names it. */
  async delete(id: string): Promise<boolean> {
    const file = await this.get(id);
    if (file === null) return false;
    await this.#withBlobLock(file.sha256, async () => {
      await rm(this.#metaPath(id), { force: true });
      const stillUsed = (await this.list()).some((other) => other.sha256 === file.sha256);
      if (!stillUsed) await rm(this.blobPath(file.sha256), { force: true });
    });
    this.#quota?.invalidate();
    return true;
  }

  async #withBlobLock<T>(sha256: string, action: () => Promise<T>): Promise<T> {
    const previous = this.#blobLocks.get(sha256) ?? Promise.resolve();
    const current = previous.then(action, action);
    const settled = current.catch(() => undefined);
    this.#blobLocks.set(sha256, settled);
    try {
      return await current;
    } finally {
      if (this.#blobLocks.get(sha256) === settled) this.#blobLocks.delete(sha256);
    }
  }

  blobPath(sha256: string): string {
    return path.join(
      this.#blobsDir,
      z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .parse(sha256),
    );
  }

  /** Puts a file's bytes into a workspace folder: a hard link when the filesystem allows, else a copy. */
  async placeInto(file: FileObject, destination: string): Promise<void> {
    await link(this.blobPath(file.sha256), destination).catch(async (error: unknown) => {
      if (hasErrorCode(error, 'EEXIST')) throw error;
      await copyFile(this.blobPath(file.sha256), destination);
    });
  }

  async exists(sha256: string): Promise<boolean> {
    return stat(this.blobPath(sha256)).then(
      () => true,
      () => false,
    );
  }

  #metaPath(id: string): string {
    return path.join(this.#metaDir, `${id}.json`);
  }
}
