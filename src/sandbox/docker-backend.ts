import { randomBytes } from 'node:crypto';
import { PassThrough, type Duplex } from 'node:stream';
import Docker from 'dockerode';
import { z } from 'zod';
import { CancelledError, SandboxUnavailableError } from '../errors/index.ts';
import { containerCreateBody, sessionLabels, type ContainerConfigInput } from './container-config.ts';
import { containerLabels } from './container-labels.ts';
import { dockerStatusCode, dockerUnreachableError, mapDockerError } from './docker-errors.ts';
import { chooseInputTransfer } from './input-transfer.ts';
import { createInputVolume, type InputVolume } from './input-volume.ts';
import type { InputDelivery, KernelProcess, KernelStartRequest, SandboxBackend } from './kernel-process.ts';
import { ensureReaperRunning } from './reaper.ts';
import { sandboxEnvironment, type InputTransfer } from './sandbox-limits.ts';
import { unlessAborted } from '../util/unless-aborted.ts';

export interface DockerBackendOptions {
  /** A client to use; default `new Docker()` (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, or the local socket). */
  docker?: Docker;
  /** How long the engine may take to answer a ping before the sandbox counts as unavailable. Default 3 000. */
  pingTimeoutMs?: number;
  /** Remove orphaned session containers of this engine at the first start and every few minutes. Default true. */
  reapOrphans?: boolean;
  /**
   * How long closing a session waits for the engine to remove its container.
   * Past it, close() returns and the container is left to the reaper (its
   * labels name the owner and a deadline). Default 15 000.
   */
  removeTimeoutMs?: number;
  /** Where a container left behind is reported. Default: a line on stderr. */
  warn?: (message: string) => void;
  /**
   * How the workspace reaches the session, read-only and outside its memory:
   * `bind` mounts the host folder (a local engine), `volume` copies it into a
   * Docker volume over the Engine API (any engine), `auto` binds where the
   * engine is local and the sandbox user can read every file. Default `auto`
   * (`DATALYST_INPUT_TRANSFER`).
   */
  inputTransfer?: InputTransfer;
}

const DEFAULT_REMOVE_TIMEOUT_MS = 15_000;

/** Resolves true when `promise` settles within `timeoutMs`, false when it does not (it keeps running). */
async function settlesWithin(promise: Promise<void>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (at most `timeoutMs`) for a container that the engine is already removing. */
async function waitUntilRemoved(container: Docker.Container, timeoutMs = 10_000): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    await container.wait({ condition: 'removed', abortSignal: controller.signal });
  } catch {
    // 404: gone already; aborted: it takes longer than a close should wait.
  } finally {
    clearTimeout(timer);
  }
}

const createResponseSchema = z.object({
  Id: z.string().min(1),
  Warnings: z.array(z.string()).nullable().optional(),
});

/** Answers the engine's ping within `timeoutMs`, or throws SandboxUnavailableError (never hangs). */
export async function pingDocker(docker: Docker, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      dial(docker, {
        path: '/_ping',
        method: 'GET',
        statusCodes: { 200: true, 500: 'server error' },
        abortSignal: controller.signal,
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(dockerUnreachableError(undefined, timeoutMs)), timeoutMs);
      }),
    ]);
  } catch (error) {
    if (signal?.aborted) throw new CancelledError(signal.reason);
    if (error instanceof SandboxUnavailableError) throw error;
    throw dockerUnreachableError(error);
  } finally {
    if (timer) clearTimeout(timer);
    controller.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

function dial(docker: Docker, options: Parameters<Docker['modem']['dial']>[0]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * One container per session, started from the runner image with every limit
 * of `containerCreateBody`. The protocol runs over the container's attached
 * stdio, so no port, network or bind mount is needed: it works the same with a
 * remote engine (DOCKER_HOST).
 */
export function createDockerBackend(options: DockerBackendOptions = {}): SandboxBackend {
  const pingTimeoutMs = options.pingTimeoutMs ?? 3_000;
  const removeTimeoutMs = options.removeTimeoutMs ?? DEFAULT_REMOVE_TIMEOUT_MS;
  const warn = options.warn ?? ((message: string) => process.stderr.write(message + '\n'));
  return {
    name: 'docker',
    async start(request: KernelStartRequest): Promise<KernelProcess> {
      const { signal } = request;
      const docker = options.docker ?? new Docker();
      await pingDocker(docker, pingTimeoutMs, signal);
      if (options.reapOrphans ?? true) ensureReaperRunning(options.docker);
      const config: ContainerConfigInput = {
        sessionId: request.sessionId,
        image: request.image,
        limits: request.limits,
        nowMs: Date.now(),
      };
      // The workspace: a read-only bind of the host folder, or a volume filled
      // while the container starts (and, for the warm pool, at acquire).
      const { workspace } = request;
      let volume: InputVolume | undefined;
      let filling: Promise<void> | undefined;
      let delivery: InputDelivery | undefined;
      if (workspace !== undefined) {
        const wanted = options.inputTransfer ?? sandboxEnvironment().inputTransfer ?? 'auto';
        const chosen = await chooseInputTransfer(docker, workspace, wanted).catch((error: unknown) => {
          throw mapDockerError(error, { action: 'choose how the workspace reaches the sandbox' });
        });
        if (chosen.type === 'bind') {
          config.inputs = chosen;
          delivery = { transfer: 'bind', deliver: () => Promise.resolve() };
        } else {
          const created = await createInputVolume(docker, {
            sessionId: request.sessionId,
            image: request.image,
            labels: sessionLabels(config),
          });
          volume = created;
          config.inputs = { type: 'volume', volume: created.name };
          if (workspace !== 'later') {
            filling = created.fill(workspace.files, signal);
            filling.catch(() => {}); // awaited by deliver()
          }
          delivery = {
            transfer: 'volume',
            deliver: (files, deliverSignal) => {
              if (!filling) {
                if (!files) return Promise.reject(new Error('deliver() needs the files of a pooled start.'));
                filling = created.fill(files, deliverSignal);
              }
              return filling;
            },
          };
        }
      }
      const removeVolume = async () => {
        // After the container: a volume in use cannot be removed.
        await volume?.remove();
      };
      const body = containerCreateBody(config);
      const name = `datalyst-${request.sessionId}-${randomBytes(3).toString('hex')}`;
      let created: z.infer<typeof createResponseSchema>;
      // Not aborted mid-request: an engine that got the request may create the
      // container after the client gave up, and nobody would ever remove it.
      const creating = dial(docker, {
        path: '/containers/create?',
        method: 'POST',
        options: { _query: { name }, _body: body },
        statusCodes: {
          200: true,
          201: true,
          400: 'bad parameter',
          404: 'no such image',
          409: 'conflict',
          500: 'server error',
        },
      }).then((response) => createResponseSchema.parse(response));
      try {
        created = await unlessAborted(creating, signal, (reason) => new CancelledError(reason));
      } catch (error) {
        if (signal?.aborted) {
          creating
            .then(({ Id }) => docker.getContainer(Id).remove({ force: true }))
            .catch(() => {})
            .finally(() => void removeVolume());
          throw new CancelledError(signal.reason);
        }
        await removeVolume();
        throw mapDockerError(error, { action: 'create the session container', image: request.image });
      }
      const container = docker.getContainer(created.Id);
      let stream: Duplex | undefined;
      let removal: Promise<void> | undefined;
      const remove = async (): Promise<void> => {
        try {
          await container.remove({ force: true });
        } catch (error) {
          // 404: already gone; 409: AutoRemove is removing it right now (the
          // supervisor exited when stdin closed): close() returns once it is gone.
          const status = dockerStatusCode(error);
          if (status === 409) await waitUntilRemoved(container);
          else if (status !== 404) throw mapDockerError(error, { action: 'remove the session container' });
        }
      };
      const dispose = (): Promise<void> => {
        removal ??= (async () => {
          stream?.destroy();
          const removing = remove().finally(removeVolume);
          // A stalled engine must not stall close() (and the end of a run) for ever.
          if (!(await settlesWithin(removing, removeTimeoutMs))) {
            removing.catch(() => {});
            warn(
              `datalyst: the Docker engine did not remove container ${created.Id.slice(0, 12)} within ${removeTimeoutMs} ms; it is left to the reaper (label ${containerLabels.session}=${request.sessionId}).`,
            );
          }
        })();
        return removal;
      };
      try {
        const warnings = created.Warnings ?? [];
        if (warnings.length > 0) {
          throw new SandboxUnavailableError(
            `The Docker engine would not enforce every limit of the session: ${warnings.join(' ')}`,
            {
              fix: 'Use an engine whose kernel supports the memory, swap, CPU and pids cgroups (cgroup v2, or cgroup v1 with swap accounting: boot with swapaccount=1).',
            },
          );
        }
        if (signal?.aborted) throw new CancelledError(signal.reason);
        // Attach before start, so that not one byte of the supervisor's output is missed.
        stream = (await container.attach({
          stream: true,
          stdin: true,
          stdout: true,
          stderr: true,
          hijack: true,
          ...(signal ? { abortSignal: signal } : {}),
        })) as Duplex;
        const stdout = new PassThrough();
        const stderr = new PassThrough();
        docker.modem.demuxStream(stream, stdout, stderr);
        const attached = stream;
        const endBoth = () => {
          stdout.end();
          stderr.end();
        };
        attached.on('end', endBoth);
        attached.on('close', endBoth);
        attached.on('error', (error) => stdout.destroy(error));
        if (signal?.aborted) throw new CancelledError(signal.reason);
        await container.start(signal ? { abortSignal: signal } : {});
        return {
          stdin: attached,
          stdout,
          stderr,
          description: `container ${created.Id.slice(0, 12)}`,
          image: request.image,
          ...(delivery ? { inputs: delivery } : {}),
          dispose,
        };
      } catch (error) {
        await dispose().catch(() => {});
        if (signal?.aborted) throw new CancelledError(signal.reason);
        throw mapDockerError(error, { action: 'start the session container', image: request.image });
      }
    },
  };
}
