import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { pack as tarPack, type Pack } from 'tar-stream';
import { WorkspaceError } from '../errors/index.ts';
import { dockerStatusCode, mapDockerError } from './docker-errors.ts';
import { openListedFile, type WorkspaceFile } from './workspace-files.ts';

/**
 * The workspace in a Docker volume, for engines that cannot bind-mount a host
 * folder (a remote engine) and for pooled sessions (created before their
 * workspace is known). The volume is filled over the Engine API through a
 * helper container that mounts it read-write and is never started (the
 * archive endpoint works on a created container); the session container
 * mounts it read-only. Files are streamed as a tar built on the fly: nothing
 * is held in memory, nothing is written on this host.
 */

/** Where the helper container mounts the volume. */
const FILLER_MOUNT = '/inputs';

export interface InputVolume {
  readonly name: string;
  /** Copies the files into the volume (once). */
  fill(files: readonly WorkspaceFile[], signal?: AbortSignal): Promise<void>;
  /** Removes the helper container and the volume (the session container must be gone first). Never throws. */
  remove(): Promise<void>;
}

/** Creates an empty, labelled volume and its helper container. */
export async function createInputVolume(
  docker: Docker,
  options: { sessionId: string; image: string; labels: Record<string, string> },
): Promise<InputVolume> {
  const name = `datalyst-inputs-${options.sessionId}-${randomBytes(3).toString('hex')}`;
  try {
    await docker.createVolume({ Name: name, Labels: options.labels });
  } catch (error) {
    throw mapDockerError(error, { action: 'create the inputs volume' });
  }
  let filler: Docker.Container | undefined;
  let filled = false;
  const removeFiller = async (): Promise<void> => {
    const container = filler;
    filler = undefined;
    if (!container) return;
    await container.remove({ force: true }).catch((error: unknown) => {
      if (dockerStatusCode(error) !== 404) throw error;
    });
  };
  const volume: InputVolume = {
    name,
    async fill(files, signal) {
      if (filled) throw new Error('The inputs volume was filled already.');
      filled = true;
      if (!filler) throw new Error('The inputs volume has no helper container.');
      try {
        await filler.putArchive(workspaceTar(files), {
          path: FILLER_MOUNT,
          ...(signal ? { abortSignal: signal } : {}),
        });
      } catch (error) {
        if (error instanceof WorkspaceError) throw error;
        throw mapDockerError(error, { action: 'copy the workspace into its volume' });
      } finally {
        // Its job is done; the volume must be in use by the session container only.
        await removeFiller().catch(() => {});
      }
    },
    async remove() {
      await removeFiller().catch(() => {});
      await docker
        .getVolume(name)
        .remove()
        .catch(() => {
          // 404: gone; 409: still in use (a container the engine has not removed yet): the reaper takes it.
        });
    },
  };
  try {
    // Built as a plain body: @types/dockerode wants every field of VolumeOptions.
    const body: Record<string, unknown> = {
      name: `${name}-filler`,
      Image: options.image,
      Cmd: ['true'],
      Labels: options.labels,
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        LogConfig: { Type: 'none', Config: {} },
        Mounts: [{ Type: 'volume', Source: name, Target: FILLER_MOUNT, VolumeOptions: { NoCopy: true } }],
      },
    };
    filler = await docker.createContainer(body as Docker.ContainerCreateOptions);
  } catch (error) {
    await volume.remove();
    throw mapDockerError(error, {
      action: 'create the helper container of the inputs volume',
      image: options.image,
    });
  }
  return volume;
}

/**
 * A tar stream of the listed files, read as it is sent: each file opened
 * without following a link, owned by root and read-only for everybody else
 * (the sandbox user), exactly the size it was listed with.
 */
export function workspaceTar(files: readonly WorkspaceFile[]): Readable {
  const pack = tarPack();
  const mtime = new Date();
  const folders = new Set<string>();
  (async () => {
    for (const file of files) {
      const parts = file.path.split('/');
      for (let depth = 1; depth < parts.length; depth += 1) {
        const folder = parts.slice(0, depth).join('/');
        if (folders.has(folder)) continue;
        folders.add(folder);
        await addEntry(pack, { name: folder, type: 'directory', mode: 0o755, uid: 0, gid: 0, mtime });
      }
      await addFile(pack, file, mtime);
    }
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error instanceof Error ? error : new Error(String(error))));
  return pack;
}

function addEntry(pack: Pack, header: Parameters<Pack['entry']>[0], body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, body ?? Buffer.alloc(0), (error) => (error ? reject(error) : resolve()));
  });
}

async function addFile(pack: Pack, file: WorkspaceFile, mtime: Date): Promise<void> {
  const header = { name: file.path, size: file.sizeBytes, mode: 0o644, uid: 0, gid: 0, mtime };
  if (file.sizeBytes === 0) return addEntry(pack, header);
  const handle = await openListedFile(file);
  try {
    let finished!: Promise<void>;
    const entry = new Promise<void>((resolve, reject) => {
      const sink = pack.entry(header, (error) => (error ? reject(error) : resolve()));
      finished = pipeline(
        handle.createReadStream({ start: 0, end: file.sizeBytes - 1, autoClose: false }),
        sink,
      );
    });
    await Promise.all([finished, entry]).catch((error: unknown) => {
      throw new WorkspaceError(
        `The workspace file ${file.path} changed while it was copied into the sandbox (${error instanceof Error ? error.message : String(error)}).`,
        'Leave the workspace folder unchanged while Datalyst starts, then run again.',
        error,
      );
    });
  } finally {
    await handle.close();
  }
}
