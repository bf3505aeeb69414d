import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { CancelledError } from '../errors/index.ts';
import { listWorkspaceFiles } from '../sandbox/index.ts';
import type { InputFile } from '../trace/schema.ts';

/** SHA-256 of a file, streamed. */
export async function sha256File(filePath: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const stream = createReadStream(filePath, signal === undefined ? {} : { signal });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The files the sandbox copies in (the same listing: regular, readable, no
 * links), with size and SHA-256, sorted by path: the provenance a report shows.
 * Throws WorkspaceError when the folder is missing or not a folder.
 */
export async function hashWorkspaceFiles(
  workspaceDir: string,
  signal?: AbortSignal,
  excludeDirs: readonly string[] = [],
): Promise<InputFile[]> {
  const files = await listWorkspaceFiles(workspaceDir, {
    maxFiles: Number.POSITIVE_INFINITY,
    maxTotalBytes: Number.POSITIVE_INFINITY,
    excludeDirs,
  });
  const hashed: InputFile[] = [];
  for (const file of files) {
    if (signal?.aborted) throw new CancelledError(signal.reason);
    hashed.push({
      path: file.path,
      sizeBytes: file.sizeBytes,
      sha256: await sha256File(file.absolutePath, signal),
    });
  }
  return hashed;
}
