import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAIChatModel } from '../../src/index.ts';
import { listenErrorOf, startServer } from '../../src/server/index.ts';

/**
 * `datalyst serve` where it cannot listen: a port another program holds, an
 * address that is not this machine's. It printed `✗ INTERNAL listen
 * EADDRINUSE …`, "a bug in Datalyst", a stack, and exited 1.
 */

const dataDirs: string[] = [];
const blockers: net.Server[] = [];
afterEach(async () => {
  for (const blocker of blockers.splice(0)) await new Promise((resolve) => blocker.close(resolve));
  for (const dir of dataDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A plain TCP server on a free loopback port: the port `serve` is then asked for. */
async function occupiedPort(): Promise<number> {
  const blocker = net.createServer();
  blockers.push(blocker);
  await new Promise<void>((resolve) => blocker.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const address = blocker.address();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

async function serve(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ exitCode: number | null; stdout: string; stderr: string; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-listen-'));
  dataDirs.push(dataDir);
  // A folder not made yet: a server that cannot listen must not create or change its data folder.
  const data = path.join(dataDir, 'data');
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
      '--data-dir',
      data,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { exitCode, stdout, stderr, dataDir };
}

describe('`datalyst serve` where it cannot listen', () => {
  it('on a port in use: exit 2 (usage), PORT_IN_USE with the fix, no stack, and its data folder untouched', async () => {
    const port = await occupiedPort();
    const run = await serve(['--port', String(port)]);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).not.toContain('serving on');
    expect(run.stderr).toContain(`✗ PORT_IN_USE Port ${port} on 127.0.0.1 is in use`);
    expect(run.stderr).toContain('--port 0');
    expect(run.stderr).not.toContain('INTERNAL');
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(await readdir(run.dataDir)).toEqual([]);
  });

  it('on an address that is not this machine’s: exit 2, ADDRESS_UNAVAILABLE naming it and the fix', async () => {
    // 10.255.255.1 is on no interface here (EADDRNOTAVAIL); off loopback a key is needed, so one is given.
    const run = await serve(['--host', '10.255.255.1', '--port', '8200'], {
      DATALYST_SERVER_API_KEY: 'a-long-random-secret-0123456789abcdef',
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('✗ ADDRESS_UNAVAILABLE');
    expect(run.stderr).toContain('10.255.255.1');
    expect(run.stderr).toContain('--host');
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('startServer', () => {
  it('on a port in use rejects with PORT_IN_USE before it opens (or creates) its data folder', async () => {
    const port = await occupiedPort();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-listen-'));
    dataDirs.push(dataDir);
    await expect(
      startServer({
        dataDir: path.join(dataDir, 'data'),
        port,
        modelId: 'gpt-test',
        engine: {
          createModel: () => createOpenAIChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-test' }),
        },
      }),
    ).rejects.toMatchObject({ code: 'PORT_IN_USE', fault: 'user' });
    expect(await readdir(dataDir)).toEqual([]);
  });
});

describe('listenErrorOf', () => {
  it('names a privileged port and the fix (EACCES; not reproducible here when the tests run as root)', () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 127.0.0.1:80'), {
      code: 'EACCES',
    });
    expect(listenErrorOf(denied, '127.0.0.1', 80)).toMatchObject({
      code: 'PORT_PRIVILEGED',
      fault: 'user',
      cause: denied,
    });
  });

  it('leaves any other error as it is', () => {
    const other = new Error('something else');
    expect(listenErrorOf(other, '127.0.0.1', 8200)).toBe(other);
  });
});
