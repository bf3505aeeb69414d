import { randomBytes } from 'node:crypto';
import { CancelledError } from '../errors/index.ts';
import { createDockerBackend } from './docker-backend.ts';
import { withExitCleanup } from './exit-cleanup.ts';
import { deliverWorkspace } from './create-sandbox.ts';
import { KernelConnection } from './kernel-connection.ts';
import type { KernelProcess, SandboxBackend } from './kernel-process.ts';
import { KernelSession } from './kernel-session.ts';
import { runnerImageTag } from './runner-image.ts';
import type { SandboxLimits, SandboxRuntimeName, SandboxSession } from './sandbox.ts';
import { resolveSandboxLimits, sandboxEnvironment } from './sandbox-limits.ts';
import { listWorkspaceFiles, workspaceListLimits } from './workspace-files.ts';

/**
 * Sessions started ahead of time, with the kernel up and pandas imported, so
 * that taking one costs only the workspace's delivery. A pooled session is
 * handed out once and never comes back: closing it removes its container, and
 * the pool starts a fresh one in its place.
 *
 * A mount must exist when a container is created, before its workspace is
 * known: a pooled Docker session is started with an empty volume of its own,
 * mounted read-only, which `acquire` fills over the Engine API (through a
 * helper container created with it) before linking the files into the
 * working directory. `createSandbox` binds the host folder instead where it
 * can, which copies nothing: for a workspace of gigabytes on a local engine
 * it is the faster of the two.
 */

const READY_TIMEOUT_MS = 30_000;

export interface WarmPoolOptions {
  /** Ready sessions to keep. Default 2. */
  size?: number;
  /** Default: the Docker backend, its containers removed on SIGINT/SIGTERM. */
  backend?: SandboxBackend;
  /** Runner image; default as `createSandbox`. */
  image?: string;
  /** OCI runtime of every pooled session; default as `createSandbox` (`DATALYST_RUNTIME`, else `runc`). */
  runtime?: SandboxRuntimeName;
  /** Limits of every pooled session (fixed when it starts). */
  limits?: Partial<SandboxLimits>;
}

export interface AcquireOptions {
  /** Host folder whose files appear by name in the session's working directory (filled into its inputs volume). */
  workspaceDir?: string;
  /** Workspace-relative folders (`/`-separated) left out with everything in them (a run folder inside it). */
  excludeDirs?: readonly string[];
  signal?: AbortSignal;
}

export interface WarmPoolStats {
  /** Sessions started and ready now. */
  ready: number;
  /** Sessions being started now. */
  starting: number;
  /** Sessions handed out so far that came from the pool ready. */
  warmHits: number;
  /** Sessions handed out that had to wait for a start (the pool was empty). */
  coldMisses: number;
  /** Why the last pooled start failed, if it did. */
  lastStartError: unknown;
}

export interface WarmPool {
  /** A ready session with the workspace copied in; never one another caller had. */
  acquire(options?: AcquireOptions): Promise<SandboxSession>;
  readonly stats: WarmPoolStats;
  /** Removes the sessions nobody took. Sessions already handed out stay theirs to close. */
  close(): Promise<void>;
}

interface PooledSession {
  kernel: KernelProcess;
  session: KernelSession;
  connection: KernelConnection;
  /** Resolves when the kernel has imported the usual stack; rejects when the start failed. */
  ready: Promise<void>;
  isReady: boolean;
  /** Handed out to a caller: it must never go back to the pool. */
  claimed: boolean;
}

export function createWarmPool(options: WarmPoolOptions = {}): WarmPool {
  const size = Math.max(0, Math.floor(options.size ?? 2));
  const backend = options.backend ?? withExitCleanup(createDockerBackend());
  const limits = resolveSandboxLimits(options.limits);
  const runtime = options.runtime ?? sandboxEnvironment().runtime;
  const image: Promise<string> = options.image
    ? Promise.resolve(options.image)
    : sandboxEnvironment().image
      ? Promise.resolve(sandboxEnvironment().image as string)
      : runnerImageTag();
  // Never more than one background start at a time: a burst of acquires on a
  // small machine must not turn into a burst of container starts.
  const idle: PooledSession[] = [];
  let starting: PooledSession | undefined;
  let closed = false;
  const stats: WarmPoolStats = {
    ready: 0,
    starting: 0,
    warmHits: 0,
    coldMisses: 0,
    lastStartError: undefined,
  };

  const startOne = (): PooledSession => {
    const sessionId = randomBytes(6).toString('hex');
    const pooled = { isReady: false, claimed: false } as PooledSession;
    pooled.ready = (async () => {
      const kernel = await backend.start({
        sessionId,
        image: await image,
        limits,
        workspace: 'later',
        ...(runtime === undefined ? {} : { runtime }),
      });
      const connection = new KernelConnection(kernel);
      pooled.kernel = kernel;
      const session = new KernelSession(
        sessionId,
        backend.name,
        limits,
        kernel,
        connection,
        kernel.image ?? (backend.name === 'docker' ? await image : null),
        kernel.runtime ?? (backend.name === 'docker' ? (runtime ?? 'runc') : null),
      );
      pooled.session = session;
      pooled.connection = connection;
      const timer = setTimeout(
        () =>
          connection.fail(`The kernel did not start within ${READY_TIMEOUT_MS} ms (${kernel.description}).`),
        READY_TIMEOUT_MS,
      );
      try {
        await connection.ready;
        // The supervisor is ready before its worker has imported pandas; an empty
        // cell returns only once the worker is up, so the caller's first cell is fast.
        const warmUp = await session.execute('', { timeoutMs: READY_TIMEOUT_MS });
        if (warmUp.status !== 'ok') throw new Error(`the warm-up cell ended with ${warmUp.status}`);
      } catch (error) {
        await session.close().catch(() => {});
        throw error;
      } finally {
        clearTimeout(timer);
      }
      pooled.isReady = true;
    })();
    return pooled;
  };

  /** Waits for a start; an abort leaves the start to finish and then removes its container. */
  const waitUntilReady = (pooled: PooledSession, signal: AbortSignal | undefined): Promise<void> => {
    if (!signal) return pooled.ready;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        reject(new CancelledError(signal.reason));
        pooled.ready.then(() => pooled.session.close()).catch(() => {});
      };
      signal.addEventListener('abort', onAbort, { once: true });
      pooled.ready.then(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  };

  const refresh = () => {
    stats.ready = idle.filter((pooled) => pooled.isReady).length;
    stats.starting = (starting ? 1 : 0) + idle.filter((pooled) => !pooled.isReady).length;
  };

  const fill = () => {
    if (closed || starting || idle.length >= size) return;
    const pooled = startOne();
    starting = pooled;
    refresh();
    pooled.ready.then(
      () => {
        if (starting === pooled) starting = undefined;
        if (pooled.claimed) {
          // A caller took this start over while it ran; it is theirs.
        } else if (closed) void pooled.session.close();
        else idle.push(pooled);
        refresh();
        fill();
      },
      (error: unknown) => {
        if (starting === pooled) starting = undefined;
        stats.lastStartError = error;
        refresh();
        // No retry loop: the next acquire tries again (the engine may be back by then).
      },
    );
  };

  const takeReady = (): PooledSession | undefined => {
    while (idle.length > 0) {
      const pooled = idle.shift() as PooledSession;
      // A pooled container can die while it waits (engine restart, reaper): skip it.
      if (!pooled.connection.failed) return pooled;
      void pooled.session.close().catch(() => {});
    }
    return undefined;
  };

  fill();

  return {
    get stats() {
      refresh();
      return { ...stats };
    },

    async acquire(acquireOptions: AcquireOptions = {}): Promise<SandboxSession> {
      const { signal } = acquireOptions;
      if (signal?.aborted) throw new CancelledError(signal.reason);
      if (closed) throw new CancelledError(new Error('The warm pool is closed.'));
      const files =
        acquireOptions.workspaceDir === undefined
          ? []
          : await listWorkspaceFiles(acquireOptions.workspaceDir, {
              ...workspaceListLimits(limits),
              ...(acquireOptions.excludeDirs === undefined
                ? {}
                : { excludeDirs: acquireOptions.excludeDirs }),
            });
      let pooled = takeReady();
      if (pooled) {
        stats.warmHits += 1;
      } else {
        stats.coldMisses += 1;
        // Take over the start in flight if there is one, else start one for this caller.
        pooled = starting ?? startOne();
        if (pooled === starting) starting = undefined;
        pooled.claimed = true;
        await waitUntilReady(pooled, signal);
      }
      pooled.claimed = true;
      fill();
      try {
        await deliverWorkspace(pooled.kernel, pooled.connection, files, limits, signal);
        if (signal?.aborted) throw new CancelledError(signal.reason);
        return pooled.session;
      } catch (error) {
        await pooled.session.close().catch(() => {});
        if (signal?.aborted) throw new CancelledError(signal.reason);
        throw error;
      }
    },

    async close(): Promise<void> {
      closed = true;
      const waiting = idle.splice(0);
      await Promise.allSettled(waiting.map((pooled) => pooled.session.close()));
      const inFlight = starting;
      if (inFlight) await inFlight.ready.then(() => inFlight.session.close()).catch(() => {});
    },
  };
}
