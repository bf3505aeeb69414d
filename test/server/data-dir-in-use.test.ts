import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { rawRequest } from './support/raw-http.ts';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

/**
 * Two `datalyst serve` on one --data-dir (different ports): the second
 * marked the first one's running turns interrupted (its crash recovery), and
 * then both wrote the same thread folders. Now the second refuses to start,
 * naming the first; a killed server's lock is taken over at once.
 */

const dirs: string[] = [];
const servers: TestServer[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-data-dir-lock-'));
  dirs.push(dir);
  return dir;
}

async function serve(dir: string): Promise<TestServer> {
  const server = await startTestServer({ dataDir: dir });
  servers.push(server);
  return server;
}

/** Every file under `dir` but the lock, with its bytes. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: Record<string, string> = {};
  for (const entry of entries) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || path.relative(dir, file).startsWith('server.lock')) continue;
    files[path.relative(dir, file)] = await readFile(file, 'utf8');
  }
  return files;
}

/** The folder's snapshot once a turn log holds an `execution-start` and nothing has changed for 200 ms. */
async function settledSnapshot(dir: string): Promise<Record<string, string>> {
  let last: Record<string, string> | null = null;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const now = await snapshot(dir);
    const cellRunning = Object.entries(now).some(
      ([file, text]) => file.endsWith('events.jsonl') && text.includes('"execution-start"'),
    );
    if (cellRunning && last !== null && JSON.stringify(now) === JSON.stringify(last)) return now;
    last = cellRunning ? now : null;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the folder ${dir} never settled with a cell running`);
}

/** A pid that was alive a moment ago and is gone now (its process exited and was reaped). */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  if (pid === undefined) throw new Error('no pid');
  return pid;
}

/** A lock as a server on this machine writes it. */
async function writeLock(dir: string, generation: number, fields: Record<string, unknown>): Promise<void> {
  await mkdir(path.join(dir, 'server.lock'), { recursive: true });
  const stat = await readFile('/proc/self/stat', 'utf8');
  await writeFile(
    path.join(dir, 'server.lock', `${generation}.json`),
    JSON.stringify({
      pid: process.pid,
      host: os.hostname(),
      boot_id: (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim(),
      pid_namespace: await readlink('/proc/self/ns/pid'),
      process_start: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19],
      since: '2026-01-02T03:04:05.000Z',
      url: 'http://127.0.0.1:8200',
      released_at: null,
      token: 'an-earlier-server',
      ...fields,
    }),
  );
}

function serveProcess(dir: string): {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
} {
  const child = spawn(
    process.execPath,
    [
      'bin/datalyst.js',
      'serve',
      '--offline',
      '--sandbox',
      'local',
      '--warm',
      '0',
      '--port',
      '0',
      '--data-dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  children.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output, exited };
}

async function serving(run: ReturnType<typeof serveProcess>): Promise<string> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const match = /serving on (http:\/\/\S+)/.exec(run.output.stdout);
    if (match?.[1] !== undefined) return match[1];
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`serve did not start:\n${run.output.stdout}${run.output.stderr}`);
}

describe('`datalyst serve` on a data folder another server uses', () => {
  it('the second exits 2 with DATA_DIR_IN_USE naming the first and the fix; the first’s records are untouched; after a SIGKILL the next starts at once', async () => {
    const dir = path.join(await dataDir(), 'data');
    const first = serveProcess(dir);
    const firstUrl = await serving(first);
    const thread = JSON.parse((await rawRequest(firstUrl, 'POST', '/v1/threads')).body) as { id: string };
    const before = await snapshot(dir);

    const second = serveProcess(dir);
    expect(await second.exited).toBe(2);
    expect(second.output.stdout).not.toContain('serving on');
    expect(second.output.stderr).toContain(`✗ DATA_DIR_IN_USE The data folder ${dir} is in use`);
    expect(second.output.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.output.stderr).toContain(firstUrl);
    expect(second.output.stderr).toContain('--data-dir');
    expect(second.output.stderr).not.toMatch(/^\s+at /m);
    expect(await snapshot(dir)).toEqual(before);
    expect((await rawRequest(firstUrl, 'GET', `/v1/threads/${thread.id}`)).status).toBe(200);

    first.child.kill('SIGKILL');
    await first.exited;
    const third = serveProcess(dir);
    const thirdUrl = await serving(third);
    expect((await rawRequest(thirdUrl, 'GET', `/v1/threads/${thread.id}`)).status).toBe(200);
    // Said in the log (JSON lines on stderr, level warn).
    await expect.poll(() => third.output.stderr).toContain('took over');
    expect(third.output.stderr).toContain(`pid ${first.child.pid} is gone`);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    // Released on a clean stop: the next one takes it without a word about a stale lock.
    const fourth = serveProcess(dir);
    await serving(fourth);
    expect(fourth.output.stderr).not.toContain('took over');
    fourth.child.kill('SIGTERM');
    await fourth.exited;
  });
});

describe('startServer on a data folder another server uses', () => {
  it('rejects with DATA_DIR_IN_USE and leaves the first one’s running turn running', async () => {
    const dir = await dataDir();
    const first = await serve(dir);
    const threadId = await askOnNewThread(first.url, 'a slow question');
    await waitForTurnStatus(first.url, threadId, 1, 'running');
    // Compared once the turn waits in its slow cell and has written all it will until then: 'running' comes
    // before the model's reply, and the turn log writes its lines up to 50 ms late (TURN_LOG_FLUSH_MS). On a
    // busy machine the folder was taken while they were still coming, and the comparison below failed.
    const before = await settledSnapshot(dir);

    const attempt = startTestServer({ dataDir: dir });
    await expect(attempt).rejects.toMatchObject({
      code: 'DATA_DIR_IN_USE',
      fault: 'user',
      owner: { pid: process.pid, host: os.hostname(), url: first.url },
    });
    expect(await snapshot(dir)).toEqual(before);
    const turn = JSON.parse((await rawRequest(first.url, 'GET', `/v1/threads/${threadId}/turns/1`)).body) as {
      status: string;
    };
    expect(turn.status).toBe('running');
    first.server.threads.cancel(threadId, 1);
  });

  it('two racing in one process: exactly one wins, on a fresh folder and over a stale lock', async () => {
    for (const stale of [false, true]) {
      const dir = await dataDir();
      if (stale) await writeLock(dir, 7, { pid: deadPid() });
      const results = await Promise.allSettled([
        startTestServer({ dataDir: dir }),
        startTestServer({ dataDir: dir }),
        startTestServer({ dataDir: dir }),
      ]);
      const won = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      servers.push(...won);
      expect(won).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') {
          expect(DatalystError.isInstance(result.reason) && result.reason.code).toBe('DATA_DIR_IN_USE');
        }
      }
    }
  });

  it('takes over a lock whose pid is alive but another process (another start time), and says so', async () => {
    const dir = await dataDir();
    // This test's parent process: alive, but not the server the lock names.
    await writeLock(dir, 3, { pid: process.ppid, process_start: '1' });
    const server = await serve(dir);
    expect(server.logLines.join('')).toContain(`pid ${process.ppid} is now another process`);
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['4.json']);
  });

  it('takes over a lock whose pid is gone', async () => {
    const dir = await dataDir();
    const pid = deadPid();
    await writeLock(dir, 1, { pid });
    const server = await serve(dir);
    expect(server.logLines.join('')).toContain(`pid ${pid} is gone`);
  });

  it('refuses a lock written on another host, with the lock folder to remove if that server is gone', async () => {
    const dir = await dataDir();
    await writeLock(dir, 1, { pid: deadPid(), host: 'another-machine' });
    const attempt = startTestServer({ dataDir: dir });
    await expect(attempt).rejects.toMatchObject({
      code: 'DATA_DIR_IN_USE',
      owner: { host: 'another-machine' },
      fix: expect.stringContaining(path.join(dir, 'server.lock')),
    });
    // Nothing else was made in the folder (the probe of the file system's clock is removed).
    expect(await readdir(dir)).toEqual(['server.lock']);
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['1.json']);
  });

  it('close() releases the folder: the next server starts without taking anything over', async () => {
    const dir = await dataDir();
    const first = await startTestServer({ dataDir: dir });
    await first.close();
    const second = await serve(dir);
    expect(second.logLines.join('')).not.toContain('took over');
  });
});

/**
 * A container restarted by its restart policy (same host name, a new PID
 * namespace) found its crashed predecessor's lock and refused to start for
 * ever: a lock from another host or PID namespace was never judged. Now its
 * holder beats, and a lock whose beats stopped is taken over.
 */
describe('a data folder locked from another PID namespace or host', () => {
  /** A lock as a crashed container's server left it: another PID namespace, its pid meaningless here. */
  async function writeForeignLock(dir: string, generation: number, heartbeatMs: number, ageMs: number) {
    await writeLock(dir, generation, {
      pid: 1,
      pid_namespace: 'pid:[4026599999]',
      heartbeat_ms: heartbeatMs,
      seen_at: '2026-01-02T03:04:05.000Z',
    });
    const file = path.join(dir, 'server.lock', `${generation}.json`);
    const { mtime } = await stat(file);
    const seen = new Date(mtime.getTime() - ageMs);
    await utimes(file, seen, seen);
  }

  it('refuses one whose heartbeat is fresh, saying when it was last seen and that it is given up by itself', async () => {
    const dir = await dataDir();
    await writeForeignLock(dir, 1, 60_000, 0);
    const attempt = startTestServer({ dataDir: dir });
    await expect(attempt).rejects.toMatchObject({
      code: 'DATA_DIR_IN_USE',
      owner: { pid: 1, host: os.hostname() },
      heartbeat: { staleAfterMs: 180_000 },
      message: expect.stringContaining('last seen'),
      fix: expect.stringMatching(
        /given up by itself 180 s after it was last seen: start again then, or remove .*server\.lock now/,
      ),
    });
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['1.json']);
  });

  it('takes over one whose heartbeat stopped, and says so', async () => {
    const dir = await dataDir();
    await writeForeignLock(dir, 1, 60_000, 3_600_000);
    const server = await serve(dir);
    expect(server.logLines.join('')).toContain('took over');
    expect(server.logLines.join('')).toContain('its heartbeat stopped');
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['2.json']);
  });

  it('two racing over one whose heartbeat stopped: exactly one wins', async () => {
    const dir = await dataDir();
    await writeForeignLock(dir, 5, 60_000, 3_600_000);
    const results = await Promise.allSettled([
      startTestServer({ dataDir: dir }),
      startTestServer({ dataDir: dir }),
      startTestServer({ dataDir: dir }),
    ]);
    const won = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    servers.push(...won);
    expect(won).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') {
        expect(DatalystError.isInstance(result.reason) && result.reason.code).toBe('DATA_DIR_IN_USE');
      }
    }
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['6.json']);
  });

  it('the holder’s heartbeat advances while it holds the folder and stops once it is released', async () => {
    const dir = await dataDir();
    const server = await startTestServer({ dataDir: dir, dataDirHeartbeatMs: 20 });
    const file = path.join(dir, 'server.lock', '1.json');
    const lock = async () =>
      JSON.parse(await readFile(file, 'utf8')) as {
        seen_at: string;
        heartbeat_ms: number;
        released_at: string | null;
      };
    const first = await lock();
    expect(first.heartbeat_ms).toBe(20);
    // Each beat rewrites the file: a new seen_at, a new mtime (what another host judges).
    await expect.poll(async () => (await lock()).seen_at, { interval: 5 }).not.toBe(first.seen_at);
    const mtime = (await stat(file)).mtimeMs;
    await expect.poll(async () => (await stat(file)).mtimeMs, { interval: 5 }).not.toBe(mtime);

    await server.close();
    const released = await lock();
    expect(released.released_at).not.toBeNull();
    const releasedMtime = (await stat(file)).mtimeMs;
    // Ten beats' worth of waiting: none comes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await lock()).toEqual(released);
    expect((await stat(file)).mtimeMs).toBe(releasedMtime);
    expect(await readdir(path.join(dir, 'server.lock'))).toEqual(['1.json']);
  });
});
