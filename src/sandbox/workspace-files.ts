import { constants } from 'node:fs';
import { access, open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { CancelledError, WorkspaceError } from '../errors/index.ts';
import type { KernelConnection } from './kernel-connection.ts';
import type { SandboxLimits } from './sandbox.ts';
import { defaultSandboxLimits } from './sandbox-limits.ts';

/** A regular file of the host workspace, by its path relative to the workspace (always `/`). */
export interface WorkspaceFile {
  path: string;
  absolutePath: string;
  sizeBytes: number;
}

export interface WorkspaceListLimits {
  maxFiles: number;
  maxTotalBytes: number;
}

/** The listing limits of a session's limits (defaults filled in). */
export function workspaceListLimits(limits: SandboxLimits): WorkspaceListLimits {
  return {
    maxFiles: limits.maxWorkspaceFiles ?? defaultSandboxLimits.maxWorkspaceFiles,
    maxTotalBytes: (limits.maxWorkspaceMb ?? defaultSandboxLimits.maxWorkspaceMb) * 1024 * 1024,
  };
}

/**
 * Where the workspace is copied through the protocol (the local backend), each
 * file is written by the kernel under its file-size limit: refuse a file above
 * it before anything is copied, rather than fail in the middle of the copy.
 */
export function checkCopyLimits(files: readonly WorkspaceFile[], limits: SandboxLimits): void {
  const largest = files.reduce<WorkspaceFile | undefined>(
    (found, file) => (found === undefined || file.sizeBytes > found.sizeBytes ? file : found),
    undefined,
  );
  if (largest !== undefined && largest.sizeBytes > limits.maxFileBytes) {
    const neededMb = Math.ceil(largest.sizeBytes / 1024 / 1024);
    throw new WorkspaceError(
      `The workspace file ${largest.path} (${neededMb} MiB) is larger than the sandbox's file-size limit of ${Math.floor(limits.maxFileBytes / 1024 / 1024)} MiB (maxFileBytes), which applies where the workspace is copied (the local backend). Nothing was copied.`,
      `Use the Docker backend (it mounts inputs without copying them), or raise limits.maxFileBytes to at least ${largest.sizeBytes}.`,
    );
  }
}

const UPLOAD_CHUNK_BYTES = 1024 * 1024;
const UPLOAD_REQUESTS_IN_FLIGHT = 8;
/** The supervisor stores a chunk at once; one that does not answer has stopped reading. */
const WRITE_ANSWER_WITHIN_MS = 60_000;

/**
 * True for a path the kernel may be asked about: relative, `/`-separated, no
 * empty, `.` or `..` part, no NUL or backslash. The supervisor checks the same
 * rules again on its side.
 */
export function isSafeWorkspacePath(path: string): boolean {
  if (
    path === '' ||
    path.length > 4096 ||
    path.includes('\0') ||
    path.includes('\\') ||
    path.startsWith('/')
  ) {
    return false;
  }
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

async function isReadable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Lists the regular files of a workspace folder. Symbolic links and special
 * files are left out (a link could point anywhere on the host), and so are
 * files this user cannot read: the others are still analysed (the CLI names
 * the skipped ones).
 */
export async function listWorkspaceFiles(dir: string, limits: WorkspaceListLimits): Promise<WorkspaceFile[]> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new WorkspaceError(
      `The workspace ${dir} does not exist.`,
      'Pass a folder that holds your data files.',
      error,
    );
  }
  if (!info.isDirectory()) {
    throw new WorkspaceError(
      `The workspace ${dir} is not a folder.`,
      'Pass the folder that holds the file, not the file.',
    );
  }
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const candidates: { path: string; absolutePath: string }[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const absolutePath = join(entry.parentPath, entry.name);
    const path = relative(dir, absolutePath).split(sep).join('/');
    if (!isSafeWorkspacePath(path)) continue;
    candidates.push({ path, absolutePath });
    if (candidates.length > limits.maxFiles) {
      throw new WorkspaceError(
        `The workspace ${dir} holds more than ${limits.maxFiles} files, the sandbox's limit (maxWorkspaceFiles).`,
        `Point Datalyst at a folder with only the data to analyse, or raise the limit (DATALYST_MAX_WORKSPACE_FILES, or limits.maxWorkspaceFiles).`,
      );
    }
  }
  // In parallel: thousands of small files must not take thousands of round trips in a row.
  const sizes = await Promise.all(
    candidates.map(async ({ absolutePath }) =>
      (await isReadable(absolutePath)) ? (await stat(absolutePath)).size : undefined,
    ),
  );
  const files: WorkspaceFile[] = [];
  let totalBytes = 0;
  candidates.forEach((candidate, index) => {
    const sizeBytes = sizes[index];
    if (sizeBytes === undefined) return;
    totalBytes += sizeBytes;
    files.push({ ...candidate, sizeBytes });
  });
  if (totalBytes > limits.maxTotalBytes) {
    const limitMb = Math.floor(limits.maxTotalBytes / 1024 / 1024);
    const neededMb = Math.ceil(totalBytes / 1024 / 1024);
    throw new WorkspaceError(
      `The workspace ${dir} holds ${neededMb} MiB, more than the sandbox's limit of ${limitMb} MiB (maxWorkspaceMb). Nothing was copied.`,
      `Analyse a smaller folder, or raise the limit: --max-workspace-mb ${neededMb} (CLI), DATALYST_MAX_WORKSPACE_MB=${neededMb}, or limits.maxWorkspaceMb.`,
    );
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return files;
}

/**
 * Copies the files into the kernel's working directory through the protocol
 * (base64 chunks). No `docker cp` and no bind mount: the working directory is
 * a tmpfs on a read-only root, and the engine may be remote.
 */
export async function uploadWorkspaceFiles(
  connection: KernelConnection,
  files: readonly WorkspaceFile[],
  signal?: AbortSignal,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  const send = (path: string, data: Buffer, append: boolean) => {
    const request = connection
      .request(
        { type: 'write-file', path, dataBase64: data.toString('base64'), append },
        { ...(signal ? { signal } : {}), answerWithinMs: WRITE_ANSWER_WITHIN_MS },
      )
      .then((response) => {
        if (response.type !== 'ok') {
          throw new WorkspaceError(
            `The sandbox could not store ${path}: ${response.type === 'error' ? response.message : response.type}`,
            'Check that the workspace fits the working directory (limits.workdirMb) and each file the file-size limit (limits.maxFileBytes).',
          );
        }
      })
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  const waitForRoom = async () => {
    while (inFlight.size >= UPLOAD_REQUESTS_IN_FLIGHT) await Promise.race(inFlight);
    if (failure !== undefined) throw failure;
    if (signal?.aborted) throw new CancelledError(signal.reason);
  };
  for (const file of files) {
    let append = false;
    const handle = await openListedFile(file);
    try {
      for (;;) {
        const chunk = await readChunk(handle, file);
        if (chunk.byteLength === 0) break;
        await waitForRoom();
        send(file.path, chunk, append);
        append = true;
      }
    } finally {
      await handle.close();
    }
    if (!append) {
      await waitForRoom();
      send(file.path, Buffer.alloc(0), false);
    }
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
}

function unreadable(file: WorkspaceFile, error: unknown): WorkspaceError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'ELOOP'
      ? 'it was replaced by a symbolic link'
      : code === 'ENOENT'
        ? 'it was deleted'
        : `${code ?? (error instanceof Error ? error.message : String(error))}`;
  return new WorkspaceError(
    `The workspace file ${file.path} could not be read while it was copied into the sandbox: ${why}.`,
    'Leave the workspace folder unchanged while Datalyst starts, then run again.',
    error,
  );
}

/**
 * Opens a file found by `listWorkspaceFiles` without following a link: it
 * may have been swapped for one (pointing anywhere on the host) since it was
 * listed. Non-blocking, so that a FIFO put in its place cannot hang the open.
 */
export async function openListedFile(file: WorkspaceFile): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file.absolutePath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw unreadable(file, error);
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new WorkspaceError(
        `The workspace file ${file.path} was replaced by something that is not a regular file while it was copied into the sandbox.`,
        'Leave the workspace folder unchanged while Datalyst starts, then run again.',
      );
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error instanceof WorkspaceError ? error : unreadable(file, error);
  }
}

async function readChunk(handle: FileHandle, file: WorkspaceFile): Promise<Buffer> {
  try {
    const buffer = Buffer.allocUnsafe(UPLOAD_CHUNK_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, UPLOAD_CHUNK_BYTES, null);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    throw unreadable(file, error);
  }
}

const LINK_PATHS_PER_REQUEST = 1_000;

/**
 * Makes mounted inputs appear by their names in the kernel's working
 * directory (links into the read-only inputs folder; see datalyst_inputs.py).
 */
export async function linkWorkspaceFiles(
  connection: KernelConnection,
  files: readonly WorkspaceFile[],
  transfer: 'bind' | 'volume',
  signal?: AbortSignal,
): Promise<void> {
  for (let start = 0; start < files.length; start += LINK_PATHS_PER_REQUEST) {
    const paths = files.slice(start, start + LINK_PATHS_PER_REQUEST).map((file) => file.path);
    const response = await connection.request(
      { type: 'link-inputs', paths },
      { ...(signal ? { signal } : {}), answerWithinMs: WRITE_ANSWER_WITHIN_MS },
    );
    if (response.type === 'ok') continue;
    const detail = response.type === 'error' ? response.message : `an answer of type ${response.type}`;
    throw new WorkspaceError(
      `The sandbox does not see the workspace's files where they were mounted (${transfer}): ${detail}`,
      transfer === 'bind'
        ? 'The Docker engine may not see this folder as this process does (an engine in another machine, VM or container, or file permissions). Set DATALYST_INPUT_TRANSFER=volume to copy the files into a volume instead.'
        : 'Run again; if it keeps failing, check the Docker engine (docker volume ls, its disk space).',
    );
  }
}
