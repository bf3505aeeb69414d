import type Docker from 'dockerode';
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
import { SecondDockerEngine } from '../support/second-docker-engine.ts';

/**
 * The engine going away mid-session: a SECOND Docker engine of its own (see
 * SecondDockerEngine), so that stopping it disturbs nobody else on the
 * machine. The session on it must fail with a clear SandboxFailureError (no
 * hang), a new session must fail fast with SandboxUnavailableError while it
 * is down, and work must resume when it is back.
 */

const testEngine = new SecondDockerEngine({ name: 'outage', interfacePrefix: 'dlo', subnetOctet: 213 });
const engine: Docker = testEngine.client();
const startEngine = () => testEngine.start();
const stopEngine = () => testEngine.stop();
let image: string;

beforeAll(async () => {
  image = process.env['DATALYST_IMAGE'] ?? (await runnerImageTag());
  await startEngine();
  await testEngine.loadImage(image);
}, 600_000);

afterAll(async () => {
  await testEngine.dispose();
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
