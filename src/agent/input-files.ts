import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CancelledError, WorkspaceError } from '../errors/index.ts';
import type { InputFile } from '../trace/schema.ts';

/** SHA-256 of a file, streamed. */
export async function sha256File(filePath: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const stream = createReadStream(filePath, signal === undefined ? {} : { signal });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Every regular file of the workspace (recursively, symbolic links skipped),
 * with its size and SHA-256, sorted by path: the provenance a report shows.
 * Throws WorkspaceError when the folder is missing or not a folder.
 */
export async function hashWorkspaceFiles(workspaceDir: string, signal?: AbortSignal): Promise<InputFile[]> {
  const info = await stat(workspaceDir).catch((error: unknown) => {
    throw new WorkspaceError(
      `The workspace ${workspaceDir} does not exist.`,
      'Pass the folder that holds the data files.',
      error,
    );
  });
  if (!info.isDirectory()) {
    throw new WorkspaceError(
      `The workspace ${workspaceDir} is not a folder.`,
      'Pass the folder that holds the data files.',
    );
  }
  const entries = await readdir(workspaceDir, { recursive: true, withFileTypes: true });
  const files: InputFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    if (signal?.aborted) throw new CancelledError(signal.reason);
    const absolute = path.join(entry.parentPath, entry.name);
    const relative = path.relative(workspaceDir, absolute).split(path.sep).join('/');
    const { size } = await stat(absolute);
    files.push({ path: relative, sizeBytes: size, sha256: await sha256File(absolute, signal) });
  }
  return files.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
}
