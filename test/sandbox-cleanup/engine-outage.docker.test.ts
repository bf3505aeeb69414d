import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import {
  containerLabels,
  createDockerBackend,
  createSandboxWithBackend,
  runnerImageTag,
  type SandboxBackend,
  type SandboxSession,
} from '../../src/sandbox/index.ts';

/**
 * The engine going away mid-session: a SECOND Docker engine of its own (own
 * socket, data root, exec root, a bridge of its own, no iptables), so that
 * stopping it disturbs nobody else on the machine. Not `--bridge none`: with
 * it dockerd deletes the interface named docker0 at start, the other engine's
 * bridge included (measured: the main engine's image builds then failed). The session on it must fail with a
 * clear SandboxFailureError (no hang), a new session must fail fast with
 * SandboxUnavailableError while it is down, and work must resume when it is
 * back. Needs root and the dockerd binary (as the test command's setup has).
 */

// Paths of this run only: two test runs at once (a CI run and a developer's)
// must not share a daemon's socket, pid file or data root.
const runId = String(process.pid);
const socketPath = `/tmp/datalyst-outage-${runId}.sock`;
const dataRoot = `/var/tmp/datalyst-outage-${runId}`;
const execRoot = `/tmp/datalyst-outage-${runId}-exec`;
const pidFile = `/tmp/datalyst-outage-${runId}.pid`;
const logFile = `/tmp/datalyst-outage-${runId}-dockerd.log`;
/** A bridge for the test engine only (interface names have at most 15 characters). */
const bridge = `dlo${runId.slice(-7)}`;
const bridgeAddress = `10.213.${Number(runId) % 250}.1/24`;

const engine = new Docker({ socketPath });
let daemon: ChildProcess | undefined;
let image: string;

async function linkExists(name: string): Promise<boolean> {
  return (await execa('ip', ['link', 'show', name], { reject: false })).exitCode === 0;
}

async function createBridge(): Promise<void> {
  if (await linkExists(bridge)) return;
  await execa('ip', ['link', 'add', 'name', bridge, 'type', 'bridge']);
  await execa('ip', ['addr', 'add', bridgeAddress, 'dev', bridge]);
  await execa('ip', ['link', 'set', bridge, 'up']);
}

async function startEngine(): Promise<void> {
  await mkdir(dataRoot, { recursive: true });
  const log = await open(logFile, 'a');
  daemon = spawn(
    'dockerd',
    [
      '-H',
      `unix://${socketPath}`,
      '--data-root',
      dataRoot,
      '--exec-root',
      execRoot,
      '--pidfile',
      pidFile,
      '--bridge',
      bridge,
      '--iptables=false',
      '--ip-masq=false',
      '--ip-forward=false',
    ],
    { stdio: ['ignore', log.fd, log.fd] },
  );
  daemon.once('exit', () => void log.close());
  for (let attempt = 0; attempt < 300; attempt++) {
    if (
      existsSync(socketPath) &&
      (await engine.ping().then(
        () => true,
        () => false,
      ))
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the test engine did not answer within 30 s; see ${logFile}`);
}

/** Stops the test engine the way a service manager does (SIGTERM) and waits for it to exit. */
async function stopEngine(): Promise<void> {
  const running = daemon;
  if (!running || running.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
  running.kill('SIGTERM');
  await exited;
  daemon = undefined;
}

let mainBridgeExisted = false;

beforeAll(async () => {
  image = process.env['DATALYST_IMAGE'] ?? (await runnerImageTag());
  mainBridgeExisted = await linkExists('docker0');
  await createBridge();
  await startEngine();
  const present = await engine
    .getImage(image)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (!present) {
    // The test engine has no registry either: copy the runner image over, from a
    // saved copy kept between runs (saving 1 GB takes longer than loading it).
    const archive = `/var/tmp/datalyst-outage-image-${image.replace(/[^A-Za-z0-9_.-]/g, '_')}.tar`;
    if (!existsSync(archive)) {
      // One archive at a time: the copies of older images go.
      for (const name of await readdir('/var/tmp')) {
        if (/^datalyst-outage-image-.*\.tar$/.test(name)) await rm(`/var/tmp/${name}`, { force: true });
      }
      await execa('docker', ['save', '-o', `${archive}.${runId}`, image]);
      await rename(`${archive}.${runId}`, archive);
    }
    await execa('docker', ['-H', `unix://${socketPath}`, 'load', '-q', '-i', archive]);
  }
}, 600_000);

afterAll(async () => {
  await stopEngine();
  if (await linkExists(bridge)) await execa('ip', ['link', 'del', bridge]);
  // dockerd leaves its data root bind-mounted on itself.
  await execa('umount', [dataRoot], { reject: false });
  await rm(dataRoot, { recursive: true, force: true });
  await rm(execRoot, { recursive: true, force: true });
  // The test engine must not have touched the main engine's bridge.
  expect(await linkExists('docker0')).toBe(mainBridgeExisted);
});

describe('the engine going away mid-session', () => {
  it('fails the session clearly, fails new sessions fast while down, and works again when it is back', async () => {
    const backend: SandboxBackend = createDockerBackend({ docker: engine, reapOrphans: false });
    const session: SandboxSession = await createSandboxWithBackend(backend, { image });
    try {
      expect((await session.execute('1 + 1')).value).toBe('2');
      const running = session.execute('import time\ntime.sleep(60)').then(
        () => null,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      await stopEngine();
      // The cell in flight ends with a clear error, not a hang (a hang fails by the test's timeout).
      const failure = await running;
      expect(DatalystError.isInstance(failure)).toBe(true);
      expect((failure as DatalystError).code).toBe('SANDBOX_FAILURE');
      expect((failure as DatalystError).message).toContain('kernel');
      // Later cells of that session fail at once with the same kind of error.
      const later = await session.execute('1 + 1').catch((error: unknown) => error);
      expect((later as DatalystError).code).toBe('SANDBOX_FAILURE');
      // A new session while the engine is down: SandboxUnavailableError with a fix, after the ping timeout.
      const down = await createSandboxWithBackend(
        createDockerBackend({ docker: engine, pingTimeoutMs: 2_000 }),
        {
          image,
        },
      ).catch((error: unknown) => error);
      expect((down as DatalystError).code).toBe('SANDBOX_UNAVAILABLE');
      expect((down as DatalystError).fix).toMatch(/Docker/);
    } finally {
      await session.close().catch(() => {});
    }

    await startEngine();
    await using resumed = await createSandboxWithBackend(backend, { image });
    expect((await resumed.execute('1 + 1')).value).toBe('2');
    // Nothing of the failed session is left on the engine once it is back.
    const left = await engine.listContainers({
      all: true,
      filters: { label: [`${containerLabels.session}=${session.id}`] },
    });
    expect(left.map((container) => `${container.Id.slice(0, 12)} ${container.State}`)).toEqual([]);
  });
});
