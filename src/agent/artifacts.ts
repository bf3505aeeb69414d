import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileChange } from '../sandbox/cell-result.ts';
import type { SandboxSession } from '../sandbox/sandbox.ts';

export interface ArtifactBudget {
  /** Bytes left to copy in this run. */
  remainingBytes: number;
  /** Files left to copy in this run. */
  remainingFiles: number;
}

export interface SavedArtifact {
  /** Relative to the run folder's `artifacts/`, with forward slashes. */
  path: string;
  sizeBytes: number;
  sha256: string;
}

export interface ArtifactCollection {
  saved: SavedArtifact[];
  /** Files not copied, with why (over the run's caps, unsafe path, gone). */
  skipped: { path: string; why: string }[];
}

/** A path from the sandbox as a safe relative path, or null (absolute, `..`, empty). */
export function safeRelativePath(candidate: string): string | null {
  const normalized = path.posix.normalize(candidate.replaceAll('\\', '/'));
  if (
    normalized === '.' ||
    normalized.startsWith('/') ||
    normalized === '..' ||
    normalized.startsWith('../')
  ) {
    return null;
  }
  if (/^[a-zA-Z]:/.test(normalized) || normalized.split('/').some((part) => part === '..')) return null;
  return normalized;
}

/**
 * Copies the files a cell wrote out of the sandbox into `<runDir>/artifacts/`,
 * within the run's byte and file caps (the budget is spent as files are
 * copied). A file written again by a later cell is copied again.
 */
export async function collectArtifacts(
  session: SandboxSession,
  files: readonly FileChange[],
  runDir: string,
  budget: ArtifactBudget,
  signal?: AbortSignal,
): Promise<ArtifactCollection> {
  const skipped: ArtifactCollection['skipped'] = [];
  const wanted: string[] = [];
  let plannedBytes = 0;
  for (const file of files) {
    const relative = safeRelativePath(file.path);
    if (relative === null) {
      skipped.push({ path: file.path, why: 'the path leaves the working directory' });
    } else if (wanted.length >= budget.remainingFiles) {
      skipped.push({ path: file.path, why: 'the run already copied as many files as it may' });
    } else if (plannedBytes + file.sizeBytes > budget.remainingBytes) {
      skipped.push({
        path: file.path,
        why: `copying ${file.sizeBytes} bytes would pass the run's artifact size cap`,
      });
    } else {
      wanted.push(relative);
      plannedBytes += file.sizeBytes;
    }
  }
  if (wanted.length === 0) return { saved: [], skipped };

  const collected = await session.readFiles(wanted, {
    maxTotalBytes: budget.remainingBytes,
    ...(signal === undefined ? {} : { signal }),
  });
  const saved: SavedArtifact[] = [];
  const artifactsDir = path.join(runDir, 'artifacts');
  for (const file of collected) {
    const relative = safeRelativePath(file.path);
    if (relative === null || file.bytes.byteLength > budget.remainingBytes || budget.remainingFiles <= 0) {
      skipped.push({ path: file.path, why: "over the run's artifact caps" });
      continue;
    }
    const target = path.join(artifactsDir, ...relative.split('/'));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.bytes);
    budget.remainingBytes -= file.bytes.byteLength;
    budget.remainingFiles -= 1;
    saved.push({
      path: relative,
      sizeBytes: file.bytes.byteLength,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
    });
  }
  const read = new Set(collected.map((file) => safeRelativePath(file.path)));
  for (const relative of wanted) {
    if (!read.has(relative))
      skipped.push({ path: relative, why: 'the sandbox did not return it (gone, or not a regular file)' });
  }
  return { saved, skipped };
}
