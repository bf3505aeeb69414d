import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CancelledError, DatalystError } from '../../src/errors/index.ts';
import {
  containerLabels,
  createDockerBackend,
  createSandboxWithBackend,
  runnerImageTag,
  type SandboxSession,
} from '../../src/sandbox/index.ts';
import { withExitCleanup } from '../../src/sandbox/exit-cleanup.ts';
import { reapOrphanedContainers } from '../../src/sandbox/reaper.ts';

/**
 * No container outlives its owner: a SIGKILLed owner's containers are reaped
 * by the next process, SIGINT/SIGTERM remove them before exit, sessions
 * cancelled while starting leave nothing.
 */

const docker = new Docker();
const holdSessions = fileURLToPath(new URL('./fixtures/hold-sessions.ts', import.meta.url));
const reapOnStart = fileURLToPath(new URL('./fixtures/reap-on-start.ts', import.meta.url));
/** Kills what a test started, whatever happened to it. */
const stopChildren: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const stop of stopChildren.splice(0)) await stop();
});

async function containersOwnedBy(pid: number, host = hostname()): Promise<string[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${pid}`, `${containerLabels.ownerHost}=${host}`] },
  });
  return containers.map((container) => `${container.Id.slice(0, 12)} ${container.State}`);
}

const heldSchema = z.object({ pid: z.number(), sessions: z.array(z.string()), created: z.string() });

/** Starts a Node process holding `count` sessions (plus one never-started container). */
async function startHolder(count: number, ...extra: string[]) {
  return startHolderWith({}, count, ...extra);
}

/** startHolder with environment variables for the holder (HOLDER_CREATED_HOST). */
async function startHolderWith(env: Record<string, string>, count: number, ...extra: string[]) {
  // node --import tsx, not the tsx CLI: the CLI runs the script in a child, and a
  // SIGKILL of the CLI would leave that child (and its sessions) alive.
  const child = execa(process.execPath, ['--import', 'tsx', holdSessions, String(count), ...extra], {
    buffer: false,
    reject: false,
    stderr: 'pipe',
    env,
  });
  stopChildren.push(() => {
    child.kill('SIGKILL');
    return child;
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let stdout = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const newline = stdout.indexOf('\n');
      if (newline >= 0) resolve(stdout.slice(0, newline));
    });
    void child.then(() => reject(new Error(`the holder exited before it was ready:\n${stderr}`)));
  });
  return { child, held: heldSchema.parse(JSON.parse(line)), stderr: () => stderr, stdout: () => stdout };
}

describe('the reaper', () => {
  it('removes containers whose owner is gone or whose deadline passed, and keeps the others', async () => {
    const image = process.env['DATALYST_IMAGE'] ?? (await runnerImageTag());
    // A PID that no process has: the largest possible one.
    const gonePid = 4_194_304;
    // The containers name a host of their own and this pass reaps as that host, two minutes ahead: every other
    // reaper (the periodic ones earlier test files started in this process, other processes' at start) sees
    // another machine's containers with their deadlines to come and keeps them. It had removed one between its
    // creation and this pass now and then, which then did not report it. (Sandboxes' deadlines are hours away.)
    const host = `reaper-test-${process.pid}-${Date.now()}`;
    const now = Date.now();
    const passAtMs = now + 120_000;
    const later = now + 3_600_000;
    const variants = {
      ownerGoneRunning: { pid: gonePid, host, deadline: later, start: true },
      ownerGoneCreated: { pid: gonePid, host, deadline: later, start: false },
      deadlinePassed: { pid: process.pid, host, deadline: passAtMs - 1, start: true },
      pidReused: {
        pid: process.pid,
        host,
        deadline: later,
        start: false,
        startedMs: 1,
      },
      liveOwner: { pid: process.pid, host, deadline: later, start: true },
      otherHost: { pid: gonePid, host: 'another-machine', deadline: later, start: false },
    };
    const ids = new Map<string, string>();
    try {
      for (const [name, variant] of Object.entries(variants)) {
        const container = await docker.createContainer({
          Image: image,
          Cmd: ['sleep', '600'],
          Labels: {
            [containerLabels.session]: `reaper-test-${name}`,
            [containerLabels.ownerPid]: String(variant.pid),
            [containerLabels.ownerHost]: variant.host,
            [containerLabels.deadline]: String(variant.deadline),
            ...('startedMs' in variant ? { [containerLabels.ownerStarted]: String(variant.startedMs) } : {}),
          },
          HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'none', Config: {} } },
        });
        if (variant.start) await container.start();
        ids.set(name, container.id);
      }
      const report = await reapOrphanedContainers({ hostName: host, nowMs: passAtMs });
      const removed = new Map(report.removed.map((entry) => [entry.containerId, entry.reason]));
      expect(report.failed).toEqual([]);
      expect(removed.get(ids.get('ownerGoneRunning') ?? '')).toBe('owner-gone');
      expect(removed.get(ids.get('ownerGoneCreated') ?? '')).toBe('owner-gone');
      expect(removed.get(ids.get('deadlinePassed') ?? '')).toBe('deadline-passed');
      expect(removed.get(ids.get('pidReused') ?? '')).toBe('owner-gone');
      expect(removed.has(ids.get('liveOwner') ?? '')).toBe(false);
      expect(removed.has(ids.get('otherHost') ?? '')).toBe(false);
      const left = await docker.listContainers({ all: true, filters: { id: [...ids.values()] } });
      expect(left.map((container) => container.Labels[containerLabels.session]).sort()).toEqual([
        'reaper-test-liveOwner',
        'reaper-test-otherHost',
      ]);
    } finally {
      for (const id of ids.values())
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => {});
    }
  });

  it('after a SIGKILLed owner, a new process finds and removes every leftover: 0 remain', async () => {
    // The never-started container names a machine of this test's own, so the periodic reapers that run in this
    // process and others (each reaps its own machine's owner-gone containers) cannot take it before the next
    // process does: they had now and then, and the test then failed. The sessions name this machine.
    const host = `reaper-test-${process.pid}-${Date.now()}`;
    const { child, held } = await startHolderWith({ HOLDER_CREATED_HOST: host }, 3);
    expect(await containersOwnedBy(held.pid)).toHaveLength(3);
    expect(await containersOwnedBy(held.pid, host)).toHaveLength(1);
    child.kill('SIGKILL');
    await child;
    // The next Datalyst process reaps on start (here, then also as the machine the never-started one names).
    const next = await execa(process.execPath, ['--import', 'tsx', reapOnStart, host]);
    const { report } = z
      .object({
        report: z.object({ removed: z.array(z.object({ containerId: z.string(), reason: z.string() })) }),
      })
      .parse(JSON.parse(next.stdout));
    // Started sessions may already have removed themselves (their stdin closed with
    // the owner); the never-started one can only go through the reaper.
    expect(report.removed.map((entry) => entry.containerId)).toContain(held.created);
    expect(await containersOwnedBy(held.pid)).toEqual([]);
    expect(await containersOwnedBy(held.pid, host)).toEqual([]);
  });
});

describe('signals', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} removes the process's sandboxes before it exits, and the exit still says ${signal}`, async () => {
      const { child, held, stderr } = await startHolder(2);
      // The never-started container is not a session of this process's backend; remove it here.
      await docker.getContainer(held.created).remove({ force: true });
      expect(await containersOwnedBy(held.pid)).toHaveLength(2);
      child.kill(signal);
      const result = await child;
      // Checked the moment the process is gone: no time for the engine to clean up on its own.
      expect(await containersOwnedBy(held.pid)).toEqual([]);
      expect(result.signal).toBe(signal);
      expect(stderr()).toContain(`datalyst: ${signal}: removing 2 sandbox(es) before exiting`);
    });
  }
});

describe('an application with its own signal handler', () => {
  it('keeps control: its sessions still run in its handler, it closes them itself', async () => {
    const { child, held, stdout } = await startHolder(2, 'own-handler');
    await docker.getContainer(held.created).remove({ force: true });
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(stdout()).toContain('{"runningAtSignal":2}');
    expect(await containersOwnedBy(held.pid)).toEqual([]);
  });
});

describe('an application whose handler is process.once', () => {
  // Regression: a `once` listener removes itself before it runs, so the library
  // counted no other listener, removed the sandboxes and killed the process
  // (the README's streaming example never wrote its report on Ctrl-C).
  for (const mode of ['once-before', 'once-after', 'prepend-once-after']) {
    it(`${mode}: the first SIGINT is the application's; the second removes the sandboxes and exits`, async () => {
      const { child, held, stdout, stderr } = await startHolder(2, mode);
      await docker.getContainer(held.created).remove({ force: true });
      child.kill('SIGINT');
      await expect.poll(stdout, { timeout: 30_000 }).toContain('{"onceHandled":2}');
      expect(child.exitCode).toBeNull();
      expect(stderr()).not.toContain('removing');
      expect(await containersOwnedBy(held.pid)).toHaveLength(2);
      child.kill('SIGINT');
      const result = await child;
      expect(await containersOwnedBy(held.pid)).toEqual([]);
      expect(result.signal).toBe('SIGINT');
      expect(stderr()).toContain('datalyst: SIGINT: removing 2 sandbox(es) before exiting');
    });
  }
});

describe('a process where signal-exit listens too (execa running a child, many CLIs)', () => {
  // Regression: each took the other's listener for the application's handler and
  // left the exit to it; Ctrl-C did nothing while a sandbox was open.
  it("SIGINT removes the sandboxes, runs signal-exit's callbacks and ends the process by SIGINT", async () => {
    const { child, held, stdout, stderr } = await startHolder(2, 'signal-exit');
    await docker.getContainer(held.created).remove({ force: true });
    child.kill('SIGINT');
    const result = await child;
    expect(await containersOwnedBy(held.pid)).toEqual([]);
    expect(result.signal).toBe('SIGINT');
    expect(stderr()).toContain('datalyst: SIGINT: removing 2 sandbox(es) before exiting');
    expect(stdout()).toContain('{"signalExit":"SIGINT"}');
  });
});

describe('cancellation', () => {
  it('20 sessions started and cancelled in parallel leave 0 containers', async () => {
    const backend = withExitCleanup(createDockerBackend());
    expect(await containersOwnedBy(process.pid)).toEqual([]);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        const controller = new AbortController();
        // Spread the aborts over the whole start (ping, create, attach, start, ready,
        // upload) and past it: 20 starts in parallel take a few seconds on 2 cores.
        setTimeout(() => controller.abort(new Error('cancelled by the test')), index * 150);
        let session: SandboxSession | undefined;
        try {
          session = await createSandboxWithBackend(backend, { signal: controller.signal });
          // A session that was up before its cancel came is closed by its owner, as a caller does.
          return 'started';
        } catch (error) {
          expect(error).toBeInstanceOf(CancelledError);
          expect(DatalystError.isInstance(error)).toBe(true);
          return 'cancelled';
        } finally {
          await session?.close();
        }
      }),
    );
    console.info(
      `cancelled while starting: ${outcomes.filter((outcome) => outcome === 'cancelled').length} of 20`,
    );
    expect(outcomes.filter((outcome) => outcome === 'cancelled').length).toBeGreaterThan(0);
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });
});
