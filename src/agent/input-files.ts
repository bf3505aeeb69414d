import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { CancelledError } from '../errors/index.ts';
import { listWorkspaceFiles, type WorkspaceFile } from '../sandbox/index.ts';
import type { InputFile } from '../trace/schema.ts';

/** Files hashed at once: enough to keep the disk busy with many small files, few enough for one core. */
const HASHES_IN_FLIGHT = 4;

/** SHA-256 of a file, streamed. */
export async function sha256File(filePath: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const stream = createReadStream(filePath, {
    highWaterMark: 1024 * 1024,
    ...(signal === undefined ? {} : { signal }),
  });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The files the sandbox gets (the same listing: regular, readable, no links),
 * sorted by path. No limit here: the sandbox checks its own. Throws
 * WorkspaceError when the folder is missing or not a folder.
 */
export function listInputFiles(workspaceDir: string): Promise<WorkspaceFile[]> {
  return listWorkspaceFiles(workspaceDir, {
    maxFiles: Number.POSITIVE_INFINITY,
    maxTotalBytes: Number.POSITIVE_INFINITY,
  });
}

/**
 * Size and SHA-256 of listed files, a few at a time, in the listing's order:
 * the provenance a report shows. Meant to run while the sandbox starts.
 */
export async function hashInputFiles(
  files: readonly WorkspaceFile[],
  signal?: AbortSignal,
): Promise<InputFile[]> {
  const hashed: InputFile[] = new Array<InputFile>(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const index = next++;
      const file = files[index] as WorkspaceFile;
      if (signal?.aborted) throw new CancelledError(signal.reason);
      hashed[index] = {
        path: file.path,
        sizeBytes: file.sizeBytes,
        sha256: await sha256File(file.absolutePath, signal),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASHES_IN_FLIGHT, files.length) }, worker));
  return hashed;
}

/** `listInputFiles` then `hashInputFiles`. */
export async function hashWorkspaceFiles(workspaceDir: string, signal?: AbortSignal): Promise<InputFile[]> {
  return hashInputFiles(await listInputFiles(workspaceDir), signal);
}
