import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, readdir, readlink, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DatalystError } from '../errors/index.ts';
import { hasErrorCode, isMissingFile } from '../util/fs-errors.ts';

/**
 * One `datalyst serve` per data folder. A second server on the same folder
 * marked the first one's running turns interrupted (its crash recovery) and
 * then both wrote the same thread folders.
 *
 * The lock is `<data>/server.lock/<n>.json`, generation `n`; the highest one
 * is the lock. It is taken by creating generation n + 1 (a hard link of a
 * file already written, so it appears whole, and only once: `link` fails
 * when the name exists), either on a fresh folder (n = 0), or over a
 * generation whose owner released it (clean shutdown) or is gone (stale).
 * Two servers that both judged n stale race for the same name n + 1 and
 * exactly one wins; the loser reads the winner's and refuses. Generations
 * are never reused: release rewrites the file as released instead of
 * removing it, and a winner removes only generations below its own. (A
 * single file replaced by renaming a temporary file over it, then read back,
 * lets two servers win: each renames in turn, each reads its own back.)
 *
 * Stale, on this machine: the pid is not alive (or a zombie), or it is a
 * later process with that pid (its start time, field 22 of
 * /proc/<pid>/stat, is not the recorded one), or the machine has restarted
 * since (another boot id). A lock written by another host name or PID
 * namespace (another machine on a shared file system, another container) is
 * never judged: it is refused with the way out.
 */

const LOCK_FOLDER = 'server.lock';
const GENERATION_FILE = /^(\d+)\.json$/;

const lockRecordSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  /** /proc/sys/kernel/random/boot_id; null off Linux. */
  boot_id: z.string().nullable(),
  /** The target of /proc/self/ns/pid; null off Linux. */
  pid_namespace: z.string().nullable(),
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); null off Linux. */
  process_start: z.string().nullable(),
  /** ISO time the lock was taken. */
  since: z.string(),
  url: z.string().nullable(),
  /** Set on a clean shutdown: the folder is free. */
  released_at: z.string().nullable().optional(),
  /** Tells this holder's lock from any other with the same pid. */
  token: z.string(),
});
type LockRecord = z.infer<typeof lockRecordSchema>;

/** Who holds a data folder, as its lock file says. */
export interface DataDirOwner {
  pid: number;
  host: string;
  /** ISO time it took the folder. */
  since: string;
  /** Where it listens, once it does. */
  url: string | null;
}

/** Another `datalyst serve` holds the data folder: stop it, or use another folder. */
export class DataDirInUseError extends DatalystError {
  constructor(
    readonly dataDir: string,
    readonly lockPath: string,
    /** Null when the lock file could not be read. */
    readonly owner: DataDirOwner | null,
    readonly ownerHost: 'this' | 'other',
  ) {
    const who =
      owner === null
        ? `its lock ${lockPath} cannot be read`
        : `pid ${owner.pid} on ${ownerHost === 'this' ? 'this machine' : `host ${owner.host}`} (${owner.host}) holds it since ${owner.since}${owner.url === null ? '' : `, serving on ${owner.url}`}`;
    const fix =
      owner === null
        ? `Stop the server that uses it, or give this one another --data-dir (the \`dataDir\` option); if none runs, remove ${path.dirname(lockPath)}.`
        : ownerHost === 'this'
          ? `Stop that server (kill ${owner.pid}), or give this one another --data-dir (the \`dataDir\` option).`
          : `Stop that server, or give this one another --data-dir (the \`dataDir\` option); if that server is gone (its machine or container stopped), remove ${path.dirname(lockPath)} and start again.`;
    super('DATA_DIR_IN_USE', `The data folder ${dataDir} is in use by another datalyst serve: ${who}.`, {
      fault: 'user',
      fix,
    });
  }
}

/** The lock a server holds on its data folder for its life. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string;
  /** The owner whose stale lock was taken over (with why), or null. */
  readonly tookOverFrom: (DataDirOwner & { reason: string }) | null;
  /** Records where the server listens, for the message a second server prints. */
  setUrl(url: string): Promise<void>;
  /** Marks the lock released (idempotent). */
  release(): Promise<void>;
}

interface ThisProcess {
  host: string;
  bootId: string | null;
  pidNamespace: string | null;
}

async function thisProcess(): Promise<ThisProcess> {
  const [bootId, pidNamespace] = await Promise.all([
    readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
      (text) => text.trim(),
      () => null,
    ),
    readlink('/proc/self/ns/pid').catch(() => null),
  ]);
  return { host: os.hostname(), bootId, pidNamespace };
}

/** State and start time of a process on this machine; null when there is none (or /proc cannot tell). */
async function processStat(pid: number): Promise<{ state: string; start: string } | null | 'unknown'> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if (!isMissingFile(error)) throw error;
    // No /proc at all (macOS): ask the kernel whether the pid exists.
    if (
      await readdir('/proc').then(
        () => false,
        () => true,
      )
    )
      return pidExists(pid) ? 'unknown' : null;
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces and parentheses: fields 3 on follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  if (state === undefined || start === undefined) return 'unknown';
  return { state, start };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return hasErrorCode(error, 'EPERM');
  }
}

type Judgement =
  { kind: 'free' } | { kind: 'stale'; reason: string } | { kind: 'held'; ownerHost: 'this' | 'other' };

async function judge(record: LockRecord, self: ThisProcess): Promise<Judgement> {
  if (record.released_at !== null && record.released_at !== undefined) return { kind: 'free' };
  // Another machine, or another container's PID namespace: its pid means nothing here.
  if (record.host !== self.host || record.pid_namespace !== self.pidNamespace) {
    return { kind: 'held', ownerHost: 'other' };
  }
  if (record.boot_id !== null && self.bootId !== null && record.boot_id !== self.bootId) {
    return { kind: 'stale', reason: 'this machine has restarted since' };
  }
  const stat = await processStat(record.pid);
  if (stat === null) return { kind: 'stale', reason: `pid ${record.pid} is gone` };
  // Without /proc a live pid may be a later process: not guessed.
  if (stat === 'unknown') return { kind: 'held', ownerHost: 'this' };
  // A killed process its parent has not reaped yet.
  if (stat.state === 'Z' || stat.state === 'X') return { kind: 'stale', reason: `pid ${record.pid} is gone` };
  if (record.process_start !== null && stat.start !== record.process_start) {
    return { kind: 'stale', reason: `pid ${record.pid} is now another process` };
  }
  return { kind: 'held', ownerHost: 'this' };
}

function ownerOf(record: LockRecord): DataDirOwner {
  return { pid: record.pid, host: record.host, since: record.since, url: record.url };
}

/** The generations in the lock folder, highest first. */
async function generations(lockDir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(lockDir);
  } catch (error) {
    if (isMissingFile(error)) return [];
    throw error;
  }
  return names
    .map((name) => GENERATION_FILE.exec(name)?.[1])
    .filter((digits) => digits !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
}

async function readRecord(file: string): Promise<LockRecord | 'missing' | 'invalid'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isMissingFile(error)) return 'missing';
    throw error;
  }
  try {
    const parsed = lockRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'invalid';
  } catch {
    return 'invalid';
  }
}

type LockState =
  { kind: 'free'; next: number; stale: (DataDirOwner & { reason: string }) | null } | { kind: 'retry' };

/** What the lock folder says now; throws DataDirInUseError when a live server holds it. */
async function inspect(dataDir: string, self: ThisProcess): Promise<LockState> {
  const lockDir = path.join(dataDir, LOCK_FOLDER);
  const top = (await generations(lockDir))[0];
  if (top === undefined) return { kind: 'free', next: 1, stale: null };
  const file = path.join(lockDir, `${top}.json`);
  const record = await readRecord(file);
  // Removed by the winner of a newer generation between the listing and the read.
  if (record === 'missing') return { kind: 'retry' };
  if (record === 'invalid') throw new DataDirInUseError(dataDir, file, null, 'this');
  const judgement = await judge(record, self);
  if (judgement.kind === 'held') {
    throw new DataDirInUseError(dataDir, file, ownerOf(record), judgement.ownerHost);
  }
  return {
    kind: 'free',
    next: top + 1,
    stale: judgement.kind === 'stale' ? { ...ownerOf(record), reason: judgement.reason } : null,
  };
}

async function processStart(): Promise<string | null> {
  const stat = await processStat(process.pid);
  return stat === null || stat === 'unknown' ? null : stat.start;
}

/** Writes `record` to `file` whole: a temporary file renamed over it. */
async function replaceRecord(file: string, record: LockRecord): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record)}\n`);
  await rename(temporary, file);
}

/**
 * Throws DataDirInUseError when a live server holds `dataDir`; changes
 * nothing (the CLI says so before Docker is checked).
 */
export async function checkDataDirFree(dataDir: string): Promise<void> {
  const self = await thisProcess();
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if ((await inspect(dataDir, self)).kind === 'free') return;
  }
}

/**
 * Takes the data folder for this server (creating it if need be) before
 * anything in it is read or changed; throws DataDirInUseError when another
 * live server holds it. A stale lock (its owner gone) is taken over, and
 * said in `tookOverFrom`.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const lockDir = path.join(dataDir, LOCK_FOLDER);
  await mkdir(lockDir, { recursive: true });
  const self = await thisProcess();
  const record: LockRecord = {
    pid: process.pid,
    host: self.host,
    boot_id: self.bootId,
    pid_namespace: self.pidNamespace,
    process_start: await processStart(),
    since: new Date().toISOString(),
    url: null,
    released_at: null,
    token: randomBytes(12).toString('hex'),
  };
  const written = path.join(lockDir, `.${record.token}.tmp`);
  await writeFile(written, `${JSON.stringify(record)}\n`);
  try {
    // Bounded: each lost race means another server took a newer generation, which the next look judges.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const state = await inspect(dataDir, self);
      if (state.kind === 'retry') continue;
      const file = path.join(lockDir, `${state.next}.json`);
      try {
        await link(written, file);
      } catch (error) {
        if (hasErrorCode(error, 'EEXIST')) continue;
        throw error;
      }
      await removeOlderGenerations(lockDir, state.next);
      return heldLock(file, record, state.stale);
    }
  } finally {
    await rm(written, { force: true });
  }
  // Only a folder whose lock keeps changing under it gets here.
  throw new DataDirInUseError(dataDir, path.join(lockDir, '?.json'), null, 'this');
}

async function removeOlderGenerations(lockDir: string, own: number): Promise<void> {
  for (const generation of await generations(lockDir)) {
    if (generation < own) await rm(path.join(lockDir, `${generation}.json`), { force: true });
  }
}

function heldLock(
  file: string,
  taken: LockRecord,
  tookOverFrom: (DataDirOwner & { reason: string }) | null,
): DataDirLock {
  let record = taken;
  let released: Promise<void> | null = null;
  // One write at a time: a release is not overtaken by an earlier setUrl.
  let writes: Promise<void> = Promise.resolve();
  const write = (next: LockRecord) => (writes = writes.then(() => replaceRecord(file, next)));
  return {
    path: file,
    tookOverFrom,
    async setUrl(url) {
      if (released !== null) return;
      record = { ...record, url };
      await write(record);
    },
    release() {
      // Only this generation's file is touched, and it is never removed: generations are not reused.
      released ??= write({ ...record, released_at: new Date().toISOString() });
      return released;
    },
  };
}
