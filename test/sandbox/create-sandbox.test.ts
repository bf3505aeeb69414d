import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors/index.ts';
import { createSandboxWithBackend } from '../../src/sandbox/create-sandbox.ts';
import type { KernelProcess, SandboxBackend } from '../../src/sandbox/kernel-process.ts';
import { fakeKernel, readyMessage } from './support/fake-kernel.ts';

/** createSandbox's own logic over a scripted backend (the Docker tests cover the real one). */

function backendOf(start: SandboxBackend['start']): SandboxBackend {
  return { name: 'docker', start };
}

describe('createSandboxWithBackend', () => {
  it('stops at once when the signal aborted while the backend was starting (not after the ready timeout)', async () => {
    const controller = new AbortController();
    let disposed = false;
    const backend = backendOf(async () => {
      const { kernel } = fakeKernel();
      // The abort lands after start() began and before createSandbox listens for it;
      // this kernel never says it is ready.
      controller.abort();
      return { ...kernel, dispose: async () => void (disposed = true) };
    });
    const error = await createSandboxWithBackend(backend, { image: 'test', signal: controller.signal }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect(disposed).toBe(true);
  });

  it('names the image a Docker session runs, and null for the local backend', async () => {
    const started = (name: SandboxBackend['name'], image?: string) => ({
      name,
      start: async (): Promise<KernelProcess> => {
        const { kernel, reply } = fakeKernel();
        reply(readyMessage);
        return image === undefined ? kernel : { ...kernel, image };
      },
    });
    const reported = await createSandboxWithBackend(started('docker', 'datalyst/python-runner:abc'), {
      image: 'requested',
    });
    expect(reported.image).toBe('datalyst/python-runner:abc');
    await reported.close();
    // A handle that does not carry it (wrapped for exit cleanup): the image asked for.
    const wrapped = await createSandboxWithBackend(started('docker'), {
      image: 'datalyst/python-runner:def',
    });
    expect(wrapped.image).toBe('datalyst/python-runner:def');
    await wrapped.close();
    const local = await createSandboxWithBackend(started('local'), { image: 'unused' });
    expect(local.image).toBeNull();
    await local.close();
  });
});
