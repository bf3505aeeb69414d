import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, readlink, rename, rm, writeFile } from 'node:fs/promises';
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
 * since (another boot id).
 *
 * A lock written by another host name or PID namespace (another machine on a
 * shared file system; a container restarted by its restart policy, which gets
 * a new PID namespace) cannot be judged by its pid. Its holder beats instead:
 * every `heartbeatMs` it rewrites its generation (a new `seen_at`, and so a
 * new mtime), and such a lock is stale once its mtime is older than
 * MISSED_BEATS of the holder's beats (its `heartbeat_ms`, so servers with
 * other settings judge it alike). Ages are measured on the file system's
 * clock, not the hosts': the lock file's mtime against the mtime of a probe
 * file this server writes beside it, both stamped by the file system (the
 * kernel for a local disk or a Docker volume; the server for NFS). Only a
 * file system that takes the writing client's clock for mtimes (some SMB
 * setups) brings the hosts' clock skew back in; a holder whose clock runs
 * behind by more than the limit would then be taken over.
 */

/**
 * How often a holder rewrites its lock. Each beat is one small file written
 * and renamed: cheap enough that a crashed container's restart waits only
 * MISSED_BEATS × this before it takes the lock over.
 */
const HEARTBEAT_MS = 10_000;
/**
 * Beats a lock may miss before it is stale (30 s by default). More than one:
 * a beat is late when the event loop is busy or the file system slow, and a
 * live server's lock must not be taken over for that.
 */
const MISSED_BEATS = 3;

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
  /** ISO time of the holder's last heartbeat (for people; the file's mtime is what is judged). */
  seen_at: z.string().optional(),
  /** The holder's heartbeat period; absent (written before heartbeats): HEARTBEAT_MS. */
  heartbeat_ms: z.number().int().positive().optional(),
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

/** How long ago a lock that cannot be judged by its pid was last refreshed. */
export interface DataDirHeartbeat {
  /** Milliseconds since the lock file was last written, on the file system's clock. */
  ageMs: number;
  /** The age past which it is stale and taken over. */
  staleAfterMs: number;
}

/** Another `datalyst serve` holds the data folder: stop it, or use another folder. */
export class DataDirInUseError extends DatalystError {
  constructor(
    readonly dataDir: string,
    readonly lockPath: string,
    /** Null when the lock file could not be read. */
    readonly owner: DataDirOwner | null,
    readonly ownerHost: 'this' | 'other',
    /** Set when the owner is judged by its heartbeat (another host or PID namespace). */
    readonly heartbeat: DataDirHeartbeat | null = null,
  ) {
    const host = owner?.host ?? '';
    const where =
      ownerHost === 'this' ? `this machine (${host})` : `host ${host} (another machine or PID namespace)`;
    const seen = heartbeat === null ? '' : `, last seen ${seconds(heartbeat.ageMs)} ago`;
    const who =
      owner === null
        ? `its lock ${lockPath} cannot be read`
        : `pid ${owner.pid} on ${where} holds it since ${owner.since}${owner.url === null ? '' : `, serving on ${owner.url}`}${seen}`;
    const fix =
      owner === null
        ? `Stop the server that uses it, or give this one another --data-dir (the \`dataDir\` option); if none runs, remove ${path.dirname(lockPath)}.`
        : ownerHost === 'this'
          ? `Stop that server (kill ${owner.pid}), or give this one another --data-dir (the \`dataDir\` option).`
          : heartbeat === null
            ? `Stop that server, or give this one another --data-dir (the \`dataDir\` option); if that server is gone (its machine or container stopped), remove ${path.dirname(lockPath)} and start again.`
            : `Stop that server, or give this one another --data-dir (the \`dataDir\` option). If that server is gone (its machine or container stopped), its lock is given up by itself ${seconds(heartbeat.staleAfterMs)} after it was last seen: start again then, or remove ${path.dirname(lockPath)} now.`;
    super('DATA_DIR_IN_USE', `The data folder ${dataDir} is in use by another datalyst serve: ${who}.`, {
      fault: 'user',
      fix,
    });
  }
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.round(ms / 100) / 10)} s`;
}

/** Options of `lockDataDir`. */
export interface DataDirLockOptions {
  /** How often the holder refreshes its lock. Default 10 000 (HEARTBEAT_MS); tests shorten it. */
  heartbeatMs?: number;
}

/** Where a holder reports heartbeats that failed (the server's log). */
export interface DataDirLockLog {
  warn(fields: object, message: string): void;
}

/** The lock a server holds on its data folder for its life. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string;
  /** The owner whose stale lock was taken over (with why), or null. */
  readonly tookOverFrom: (DataDirOwner & { reason: string }) | null;
  /** Records where the server listens, for the message a second server prints. */
  setUrl(url: string): Promise<void>;
  /** Sends heartbeat failures to `log` (those before the call too); until then they are kept. */
  logTo(log: DataDirLockLog): void;
  /** Stops the heartbeat and marks the lock released (idempotent). */
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
  | { kind: 'free' }
  | { kind: 'stale'; reason: string }
  | { kind: 'held'; ownerHost: 'this' | 'other'; heartbeat: DataDirHeartbeat | null };

/** The mtime of a file written now in `lockDir`: the file system's clock, which also stamped the lock. */
async function fileSystemNow(lockDir: string): Promise<number> {
  const probe = path.join(lockDir, `.now-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(probe, 'wx');
  try {
    await handle.writeFile('\n');
    return (await handle.stat()).mtimeMs;
  } finally {
    await handle.close();
    await rm(probe, { force: true });
  }
}

async function judge(found: FoundRecord, self: ThisProcess, lockDir: string): Promise<Judgement> {
  const { record } = found;
  if (record.released_at !== null && record.released_at !== undefined) return { kind: 'free' };
  // Another machine, or another container's PID namespace: its pid means nothing here, its heartbeat does.
  if (record.host !== self.host || record.pid_namespace !== self.pidNamespace) {
    const staleAfterMs = MISSED_BEATS * (record.heartbeat_ms ?? HEARTBEAT_MS);
    const ageMs = Math.max(0, (await fileSystemNow(lockDir)) - found.mtimeMs);
    if (ageMs > staleAfterMs) {
      return {
        kind: 'stale',
        reason: `its heartbeat stopped ${seconds(ageMs)} ago (limit ${seconds(staleAfterMs)}; written on host ${record.host} in another PID namespace or on another machine, where its pid cannot be checked)`,
      };
    }
    return { kind: 'held', ownerHost: 'other', heartbeat: { ageMs, staleAfterMs } };
  }
  if (record.boot_id !== null && self.bootId !== null && record.boot_id !== self.bootId) {
    return { kind: 'stale', reason: 'this machine has restarted since' };
  }
  const stat = await processStat(record.pid);
  if (stat === null) return { kind: 'stale', reason: `pid ${record.pid} is gone` };
  // Without /proc a live pid may be a later process: not guessed.
  if (stat === 'unknown') return { kind: 'held', ownerHost: 'this', heartbeat: null };
  // A killed process its parent has not reaped yet.
  if (stat.state === 'Z' || stat.state === 'X') return { kind: 'stale', reason: `pid ${record.pid} is gone` };
  if (record.process_start !== null && stat.start !== record.process_start) {
    return { kind: 'stale', reason: `pid ${record.pid} is now another process` };
  }
  return { kind: 'held', ownerHost: 'this', heartbeat: null };
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

interface FoundRecord {
  record: LockRecord;
  /** When the file was last written, on the file system's clock. */
  mtimeMs: number;
}

async function readRecord(file: string): Promise<FoundRecord | 'missing' | 'invalid'> {
  let text: string;
  let mtimeMs: number;
  try {
    // Contents and mtime from one open file (a heartbeat renames a new one over the name);
    // opening also revalidates an NFS client's cached attributes (close-to-open).
    const handle = await open(file, 'r');
    try {
      mtimeMs = (await handle.stat()).mtimeMs;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isMissingFile(error)) return 'missing';
    throw error;
  }
  try {
    const parsed = lockRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? { record: parsed.data, mtimeMs } : 'invalid';
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
  const found = await readRecord(file);
  // Removed by the winner of a newer generation between the listing and the read.
  if (found === 'missing') return { kind: 'retry' };
  if (found === 'invalid') throw new DataDirInUseError(dataDir, file, null, 'this');
  const judgement = await judge(found, self, lockDir);
  if (judgement.kind === 'held') {
    throw new DataDirInUseError(
      dataDir,
      file,
      ownerOf(found.record),
      judgement.ownerHost,
      judgement.heartbeat,
    );
  }
  return {
    kind: 'free',
    next: top + 1,
    stale: judgement.kind === 'stale' ? { ...ownerOf(found.record), reason: judgement.reason } : null,
  };
}

async function processStart(): Promise<string | null> {
  const stat = await processStat(process.pid);
  return stat === null || stat === 'unknown' ? null : stat.start;
}

/** Writes `record` to `file` whole: a temporary file renamed over it. */
async function replaceRecord(file: string, record: LockRecord): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(record)}\n`);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Throws DataDirInUseError when a live server holds `dataDir`; changes
 * nothing but a probe file it removes at once (the CLI says so before Docker
 * is checked).
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
export async function lockDataDir(dataDir: string, options: DataDirLockOptions = {}): Promise<DataDirLock> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
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
    seen_at: new Date().toISOString(),
    heartbeat_ms: heartbeatMs,
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
      return heldLock(file, record, state.stale, heartbeatMs);
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
  heartbeatMs: number,
): DataDirLock {
  const lockDir = path.dirname(file);
  const own = Number(GENERATION_FILE.exec(path.basename(file))?.[1]);
  let record = taken;
  let released: Promise<void> | null = null;
  let log: DataDirLockLog | null = null;
  const unreported: { fields: object; message: string }[] = [];
  const warn = (fields: object, message: string) => {
    if (log === null) unreported.push({ fields, message });
    else log.warn(fields, message);
  };
  // One write at a time, each deciding when its turn comes: a release is not overtaken by an earlier setUrl or beat.
  let writes: Promise<void> = Promise.resolve();
  const write = (next: () => Promise<void>) => (writes = writes.then(next));

  let timer: NodeJS.Timeout | null = null;
  const beat = async () => {
    if (released !== null) return;
    // Taken over (this server stalled past the limit): its beats would only confuse, and two servers now use the folder.
    const top = (await generations(lockDir))[0];
    if (top !== undefined && top > own) {
      warn(
        { lock: file, newer: path.join(lockDir, `${top}.json`) },
        `another server took over this data folder's lock (this one's heartbeat was late by more than ${MISSED_BEATS} beats); stop one of them`,
      );
      return 'lost';
    }
    record = { ...record, seen_at: new Date().toISOString() };
    await replaceRecord(file, record);
    return 'held';
  };
  // Re-armed after each beat, never overlapping: a slow file system delays beats, it does not pile them up.
  const schedule = () => {
    timer = setTimeout(() => {
      timer = null;
      void write(async () => {
        const outcome = await beat().catch((error: unknown) => {
          warn({ lock: file, err: error }, "could not refresh the data folder's lock (heartbeat)");
          return 'failed' as const;
        });
        if (outcome !== 'lost' && released === null) schedule();
      });
    }, heartbeatMs);
    timer.unref();
  };
  schedule();

  return {
    path: file,
    tookOverFrom,
    async setUrl(url) {
      await write(async () => {
        if (released !== null) return;
        record = { ...record, url };
        await replaceRecord(file, record);
      });
    },
    logTo(target) {
      log = target;
      for (const { fields, message } of unreported.splice(0)) target.warn(fields, message);
    },
    release() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      // Only this generation's file is touched, and it is never removed: generations are not reused.
      released ??= write(() => replaceRecord(file, { ...record, released_at: new Date().toISOString() }));
      return released;
    },
  };
}
