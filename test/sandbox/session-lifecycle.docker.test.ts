import Docker from 'dockerode';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CancelledError,
  DatalystError,
  ImageMissingError,
  SandboxFailureError,
  SandboxUnavailableError,
} from '../../src/errors/index.ts';
import {
  containerLabels,
  createDockerBackend,
  createSandbox,
  createSandboxWithBackend,
} from '../../src/sandbox/index.ts';

/**
 * Starting and ending sessions: a clear error when Docker is missing, no
 * container left behind by close(), an abort, or a failed start.
 */

const docker = new Docker();

async function ourContainers(): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${process.pid}`] },
  });
}

/** AutoRemove and force-remove are asynchronous in the engine: wait until the list settles. */
async function expectNoContainersLeft(): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    if ((await ourContainers()).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(await ourContainers()).toEqual([]);
}

afterEach(async () => {
  await expectNoContainersLeft();
});

describe('when Docker cannot be used', () => {
  it('fails with SandboxUnavailableError and a fix when DOCKER_HOST points at a dead socket', async () => {
    const backend = createDockerBackend({
      docker: new Docker({ socketPath: '/tmp/datalyst-no-such-docker.sock' }),
    });
    const error = await createSandboxWithBackend(backend).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    const failure = error as SandboxUnavailableError;
    expect(failure.code).toBe('SANDBOX_UNAVAILABLE');
    expect(failure.fault).toBe('system');
    expect(failure.fix).toMatch(/Start the Docker engine/);
  });

  it('reads DOCKER_HOST when it creates its own client', async () => {
    const previous = process.env['DOCKER_HOST'];
    process.env['DOCKER_HOST'] = 'unix:///tmp/datalyst-no-such-docker.sock';
    try {
      const error = await createSandbox().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toContain('DOCKER_HOST=unix:///tmp/datalyst-no-such-docker.sock');
    } finally {
      if (previous === undefined) delete process.env['DOCKER_HOST'];
      else process.env['DOCKER_HOST'] = previous;
    }
  });

  it('does not hang on an engine that never answers: the ping times out', async () => {
    // A TCP port that accepts nothing and answers nothing within the ping timeout (a non-routable address).
    const backend = createDockerBackend({
      docker: new Docker({ host: '10.255.255.1', port: 2375, protocol: 'http' }),
      pingTimeoutMs: 1_000,
    });
    const error = await createSandboxWithBackend(backend).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(/did not answer within 1000 ms|cannot be reached/);
  }, 20_000);

  it('says the image is missing when it is', async () => {
    const error = await createSandbox({ image: 'datalyst/python-runner:no-such-tag' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ImageMissingError);
    expect((error as ImageMissingError).image).toBe('datalyst/python-runner:no-such-tag');
  });
});

describe('ending a session', () => {
  it('removes the container on close, and close can be called twice', async () => {
    const session = await createSandbox();
    const [container] = await ourContainers();
    expect(container?.Labels[containerLabels.session]).toBe(session.id);
    expect(session.image).toBe(container?.Image);
    expect(Number(container?.Labels[containerLabels.deadline])).toBeGreaterThan(Date.now());
    expect(container?.Labels[containerLabels.ownerHost]).toBeTruthy();
    await session.close();
    await session.close();
    await expectNoContainersLeft();
    const error = await session.execute('1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxFailureError);
  });

  it('returns from close() when the engine stalls on the removal, and leaves the container to the reaper with a log line', async () => {
    const stalling = new Docker();
    const getContainer = stalling.getContainer.bind(stalling);
    stalling.getContainer = (id: string) =>
      Object.assign(getContainer(id), { remove: () => new Promise<never>(() => {}) });
    const warnings: string[] = [];
    const backend = createDockerBackend({
      docker: stalling,
      reapOrphans: false,
      removeTimeoutMs: 300,
      warn: (message) => warnings.push(message),
    });
    const session = await createSandboxWithBackend(backend);
    await session.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('left to the reaper');
    expect(warnings[0]).toContain(session.id);
    // Its input was closed, so the supervisor exits and AutoRemove takes the container (afterEach checks).
  });

  it('removes the container when `await using` leaves its block', async () => {
    {
      await using session = await createSandbox();
      expect((await session.execute('6 * 7')).value).toBe('42');
    }
    await expectNoContainersLeft();
  });

  it('stops starting and leaves nothing behind when createSandbox is aborted', async () => {
    const controller = new AbortController();
    const starting = createSandbox({ signal: controller.signal });
    // Abort once the container exists, so the abort lands inside the start however fast it is.
    for (let attempt = 0; attempt < 500 && (await ourContainers()).length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    controller.abort();
    const error = await starting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CancelledError);
    await expectNoContainersLeft();
  });

  it('interrupts a running cell when execute is aborted, and the session stays usable', async () => {
    const session = await createSandbox();
    try {
      await session.execute('kept = 1');
      const controller = new AbortController();
      const running = session.execute('import time\ntime.sleep(60)', { signal: controller.signal });
      setTimeout(() => controller.abort(), 500);
      const error = await running.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CancelledError);
      expect(DatalystError.isInstance(error)).toBe(true);
      const after = await session.execute('kept + 1');
      expect(after.value).toBe('2');
    } finally {
      await session.close();
    }
  });

  it('tells the next cell that the state is gone when an aborted cell had to be killed', async () => {
    const session = await createSandbox({ limits: { interruptGraceMs: 500 } });
    try {
      await session.execute('kept = 1');
      const controller = new AbortController();
      const running = session
        .execute('import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass', {
          signal: controller.signal,
        })
        .catch((caught: unknown) => caught);
      setTimeout(() => controller.abort(), 300);
      expect(await running).toBeInstanceOf(CancelledError);
      const after = await session.execute('1 + 1');
      expect(after.value).toBe('2');
      expect(after.stateLost).toBe(true);
      expect((await session.execute('2 + 2')).stateLost).toBe(false);
    } finally {
      await session.close();
    }
  });

  it('reports the files a cancelled cell wrote with the next result (its own result is never read)', async () => {
    const session = await createSandbox();
    try {
      const controller = new AbortController();
      const running = session
        .execute('open("from-cancelled.txt", "w").write("x")\nimport time\ntime.sleep(60)', {
          signal: controller.signal,
        })
        .catch((caught: unknown) => caught);
      // Abort once the cell has written its file (reading files does not wait for the cell).
      while ((await session.readFiles(['from-cancelled.txt'])).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      controller.abort();
      expect(await running).toBeInstanceOf(CancelledError);
      const after = await session.execute('open("from-next.txt", "w").write("yy")');
      expect(after.files).toEqual([
        { path: 'from-cancelled.txt', change: 'created', sizeBytes: 1 },
        { path: 'from-next.txt', change: 'created', sizeBytes: 2 },
      ]);
      expect((await session.execute('1')).files).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it('fails every waiting request with SandboxFailureError when the container disappears', async () => {
    const session = await createSandbox();
    try {
      const running = session.execute('import time\ntime.sleep(60)').catch((caught: unknown) => caught);
      const [container] = await ourContainers();
      await docker.getContainer(container!.Id).kill();
      const error = await running;
      expect(error).toBeInstanceOf(SandboxFailureError);
    } finally {
      await session.close();
    }
  });
});
