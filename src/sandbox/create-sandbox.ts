import { randomBytes } from 'node:crypto';
import { CancelledError, ConfigError } from '../errors/index.ts';
import { createDockerBackend } from './docker-backend.ts';
import { withExitCleanup } from './exit-cleanup.ts';
import { KernelConnection } from './kernel-connection.ts';
import type { KernelProcess, SandboxBackend } from './kernel-process.ts';
import { KernelSession } from './kernel-session.ts';
import { createLocalBackend } from './local-backend.ts';
import { runnerImageTag } from './runner-image.ts';
import type { SandboxBackendName, SandboxLimits, SandboxOptions, SandboxSession } from './sandbox.ts';
import { resolveSandboxLimits, sandboxEnvironment } from './sandbox-limits.ts';
import {
  checkCopyLimits,
  linkWorkspaceFiles,
  listWorkspaceFiles,
  uploadWorkspaceFiles,
  workspaceListLimits,
  type WorkspaceFile,
} from './workspace-files.ts';

/** How long a started kernel may take to say it is ready. */
const READY_TIMEOUT_MS = 30_000;

// Both backends remove their sandboxes when the process gets SIGINT, SIGTERM or SIGHUP.
function backendNamed(name: SandboxBackendName): SandboxBackend {
  switch (name) {
    case 'docker':
      return withExitCleanup(createDockerBackend());
    case 'local':
      return withExitCleanup(createLocalBackend());
  }
}

/**
 * Starts a session: a container (or process) with a persistent Python kernel,
 * the workspace copied into its working directory.
 *
 * @example
 * await using session = await createSandbox({ workspaceDir: 'data' });
 * const result = await session.execute("import pandas as pd\npd.read_csv('sales.csv').shape");
 * result.value; // '(120, 5)'
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<SandboxSession> {
  const name: unknown = options.backend ?? sandboxEnvironment().backend ?? 'docker';
  // Checked here: 'podman' was a TypeError from inside backendNamed.
  if (name !== 'docker' && name !== 'local') {
    throw new ConfigError(
      `The option backend of createSandbox() must be 'docker' or 'local'; got ${JSON.stringify(name)}.`,
      "Pass backend: 'docker' (the default, a hardened container) or 'local' (a process on this machine, no isolation).",
      new Error(`unknown sandbox backend ${JSON.stringify(name)}`),
    );
  }
  const backend = backendNamed(name);
  return createSandboxWithBackend(backend, options);
}

/** `createSandbox` with a backend of the caller's (a Docker client of its own, a test double). */
export async function createSandboxWithBackend(
  backend: SandboxBackend,
  options: SandboxOptions = {},
): Promise<SandboxSession> {
  const { signal } = options;
  if (signal?.aborted) throw new CancelledError(signal.reason);
  const limits = resolveSandboxLimits(options.limits);
  // The user's mistakes first, before any container exists: every limit is checked before anything is copied.
  const files: WorkspaceFile[] =
    options.workspaceDir === undefined
      ? []
      : await listWorkspaceFiles(options.workspaceDir, {
          ...workspaceListLimits(limits),
          ...(options.excludeDirs === undefined ? {} : { excludeDirs: options.excludeDirs }),
        });
  if (backend.name === 'local') checkCopyLimits(files, limits);
  const image = options.image ?? sandboxEnvironment().image ?? (await runnerImageTag());
  const runtime = options.runtime ?? sandboxEnvironment().runtime;
  const sessionId = randomBytes(6).toString('hex');
  const kernel: KernelProcess = await backend.start({
    sessionId,
    image,
    limits,
    ...(options.workspaceDir === undefined
      ? {}
      : {
          workspace: {
            dir: options.workspaceDir,
            files,
            ...(options.excludeDirs === undefined ? {} : { excludeDirs: options.excludeDirs }),
          },
        }),
    ...(runtime === undefined ? {} : { runtime }),
    ...(signal ? { signal } : {}),
  });
  const connection = new KernelConnection(kernel);
  // The Docker backend runs exactly the image it was asked for; the local one runs none.
  const startedImage = kernel.image ?? (backend.name === 'docker' ? image : null);
  const startedRuntime = kernel.runtime ?? (backend.name === 'docker' ? (runtime ?? 'runc') : null);
  const session = new KernelSession(
    sessionId,
    backend.name,
    limits,
    kernel,
    connection,
    startedImage,
    startedRuntime,
  );
  const onAbort = () => {
    connection.fail('Starting the session was cancelled.');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  // Aborted while the backend was starting: the listener came too late to hear it.
  if (signal?.aborted) onAbort();
  try {
    const readyTimer = setTimeout(
      () =>
        connection.fail(`The kernel did not start within ${READY_TIMEOUT_MS} ms (${kernel.description}).`),
      READY_TIMEOUT_MS,
    );
    try {
      await connection.ready;
    } finally {
      clearTimeout(readyTimer);
    }
    await deliverWorkspace(kernel, connection, files, limits, signal);
    if (signal?.aborted) throw new CancelledError(signal.reason);
    return session;
  } catch (error) {
    await session.close().catch(() => {});
    if (signal?.aborted) throw new CancelledError(signal.reason);
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Gives the kernel its workspace: mounted read-only by the backend (the files
 * linked by name into the working directory), or else copied through the
 * protocol (the local backend).
 */
export async function deliverWorkspace(
  kernel: KernelProcess,
  connection: KernelConnection,
  files: readonly WorkspaceFile[],
  limits: SandboxLimits,
  signal?: AbortSignal,
): Promise<void> {
  if (kernel.inputs) {
    await kernel.inputs.deliver(files, signal);
    await linkWorkspaceFiles(connection, files, kernel.inputs.transfer, signal);
    return;
  }
  checkCopyLimits(files, limits);
  await uploadWorkspaceFiles(connection, files, signal);
}
