import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileChange } from '../sandbox/cell-result.ts';
import { escapeControlCharacters, hasControlCharacters, isSafeWorkspacePath } from '../sandbox/index.ts';
import type { SandboxSession } from '../sandbox/sandbox.ts';
import { isSameOrInside } from '../util/path-inside.ts';

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
  /** Files not copied, with why (over the run's caps, unsafe path, gone); control characters in a path escaped. */
  skipped: { path: string; why: string }[];
}

/**
 * Where a file from the sandbox goes under `artifactsDir`, or null. The path
 * must pass the sandbox's own rule (relative, forward slashes, no empty, `.`
 * or `..` part), and the target must stay inside the folder on this host too.
 */
function artifactTarget(artifactsDir: string, sandboxPath: string): string | null {
  if (!isSafeWorkspacePath(sandboxPath)) return null;
  const target = path.resolve(artifactsDir, ...sandboxPath.split('/'));
  if (target === path.resolve(artifactsDir) || !isSameOrInside(target, artifactsDir)) return null;
  return target;
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
  const artifactsDir = path.resolve(runDir, 'artifacts');
  const wanted: string[] = [];
  let plannedBytes = 0;
  for (const file of files) {
    if (hasControlCharacters(file.path)) {
      // Refused, not renamed: `a\nb.csv` must not reach the run folder (nor a terminal) as it is.
      skipped.push({
        path: escapeControlCharacters(file.path),
        why: 'the name holds control characters (shown escaped)',
      });
    } else if (artifactTarget(artifactsDir, file.path) === null) {
      skipped.push({ path: file.path, why: 'the path leaves the working directory' });
    } else if (wanted.length >= budget.remainingFiles) {
      skipped.push({ path: file.path, why: 'the run already copied as many files as it may' });
    } else if (plannedBytes + file.sizeBytes > budget.remainingBytes) {
      skipped.push({
        path: file.path,
        why: `copying ${file.sizeBytes} bytes would pass the run's artifact size cap`,
      });
    } else {
      wanted.push(file.path);
      plannedBytes += file.sizeBytes;
    }
  }
  if (wanted.length === 0) return { saved: [], skipped };

  const collected = await session.readFiles(wanted, {
    maxTotalBytes: budget.remainingBytes,
    ...(signal === undefined ? {} : { signal }),
  });
  const saved: SavedArtifact[] = [];
  const wantedPaths = new Set(wanted);
  for (const file of collected) {
    // Only what was asked for: the sandbox's answer is untrusted too.
    const target = wantedPaths.has(file.path) ? artifactTarget(artifactsDir, file.path) : null;
    if (
      target === null ||
      hasControlCharacters(file.path) ||
      file.bytes.byteLength > budget.remainingBytes ||
      budget.remainingFiles <= 0
    ) {
      skipped.push({ path: escapeControlCharacters(file.path), why: "over the run's artifact caps" });
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.bytes);
    budget.remainingBytes -= file.bytes.byteLength;
    budget.remainingFiles -= 1;
    saved.push({
      path: file.path,
      sizeBytes: file.bytes.byteLength,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
    });
  }
  const read = new Set(collected.map((file) => file.path));
  for (const relative of wanted) {
    if (!read.has(relative))
      skipped.push({ path: relative, why: 'the sandbox did not return it (gone, or not a regular file)' });
  }
  return { saved, skipped };
}
