import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { mkdir, realpath, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../errors/index.ts';
import type { SandboxOptions } from '../../sandbox/index.ts';
import { hasErrorCode, isMissingFile } from '../../util/fs-errors.ts';
import { isSameOrInside } from '../../util/path-inside.ts';

const RUN_FOLDER_FIX =
  'Pass a new or empty folder as outDir, or leave outDir out for a new runs/<id> folder.';

/**
 * Refuses a run folder that is a file or already holds anything, before
 * anything is written: Datalyst writes trace.jsonl, trace.json, artifacts/
 * and reports into it, and a user's own files there (an `outDir` that is the
 * data folder, a folder of earlier results) must never be replaced. The CLI
 * refuses a non-empty --out the same way (src/cli/output-dir.ts). Synchronous,
 * as the folder's creation and the trace's opening that follow it.
 */
export function assertRunFolderIsFree(outDir: string): void {
  const fix = RUN_FOLDER_FIX;
  let entries: string[];
  try {
    if (!statSync(outDir).isDirectory()) {
      throw new ConfigError(`The run folder (outDir) ${outDir} is a file.`, fix);
    }
    entries = readdirSync(outDir);
  } catch (error) {
    if (isMissingFile(error)) return;
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`The run folder (outDir) ${outDir} cannot be read.`, fix, error);
  }
  if (entries.length === 0) return;
  throw runFolderNotFree(outDir, entries);
}

function runFolderNotFree(outDir: string, entries: readonly string[]): ConfigError {
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? ', …' : '');
  return new ConfigError(
    `The run folder (outDir) ${outDir} already holds files; Datalyst writes only into a new or empty folder, so that no file of yours is replaced.`,
    RUN_FOLDER_FIX,
    new Error(`${outDir} holds ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${shown}`),
  );
}

/**
 * Claims a run folder for a run whose first file is `firstFile`: refused as
 * `assertRunFolderIsFree` refuses it, made when missing, then `firstFile`
 * is created exclusively (`wx`) with `content`. The check alone is not a
 * claim: two runs started at once on one folder both pass it; only one
 * creates the file, and the other gets the same refusal.
 */
export async function claimRunFolder(outDir: string, firstFile: string, content: string): Promise<void> {
  assertRunFolderIsFree(outDir);
  await mkdir(outDir, { recursive: true });
  try {
    await writeFile(path.join(outDir, firstFile), content, { flag: 'wx' });
  } catch (error) {
    if (!hasErrorCode(error, 'EEXIST')) throw error;
    throw runFolderNotFree(outDir, [firstFile]);
  }
}

/**
 * Creates a thread's run folder when it is missing and returns the outermost
 * folder created now (`runs/` for the first run under a new `runs/`), or null
 * when the folder was there: only what this returns may be taken back.
 */
export function createRunFolder(outDir: string): string | null {
  return mkdirSync(outDir, { recursive: true }) ?? null;
}

/**
 * Takes back the folders `createRunFolder` created, innermost first, while
 * they are empty: a thread closed before any question leaves nothing behind.
 * A folder that was there before is never touched, and one that holds
 * anything (written by the caller, or another run beside it in `runs/`) stops
 * the walk: rmdir refuses a folder that is not empty.
 */
export async function removeUnusedRunFolder(outDir: string, created: string | null): Promise<void> {
  if (created === null) return;
  const outermost = path.resolve(created);
  for (let dir = path.resolve(outDir); ; dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return; // not empty, or already gone
    }
    if (dir === outermost || path.dirname(dir) === dir) return;
  }
}

/** The real path of `target`: of its nearest existing folder, with the parts not made yet (a new run folder) after it. */
async function realPathSoFar(target: string): Promise<string> {
  const missing: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    try {
      return path.join(await realpath(dir), ...missing);
    } catch {
      // Missing (or not a folder, or unreadable): the folder above it decides.
      if (path.dirname(dir) === dir) return path.resolve(target);
      missing.unshift(path.basename(dir));
    }
  }
}

/**
 * The folders a run leaves out of its workspace: the caller's `excludeDirs`,
 * and the run folder itself when it lies inside the workspace (an `outDir`
 * of `data/run`), so that the run never lists its own trace, artifacts and
 * reports as data: never hashes them as inputs, copies them into the
 * sandbox or profiles them, and a resumed thread sees the same inputs.
 * Compared by real paths (a relative path, or a link to the workspace or to
 * a folder above the run folder, counts as what it points to); returned
 * workspace-relative and `/`-separated, as the listing compares them. The
 * CLI leaves its runs folder out the same way (`src/cli/own-output.ts`).
 */
export async function excludedDirsOfRun(
  workspaceDir: string,
  outDir: string,
  excludeDirs: readonly string[] = [],
): Promise<string[]> {
  const [workspace, runFolder] = await Promise.all([realPathSoFar(workspaceDir), realPathSoFar(outDir)]);
  const excluded = [...excludeDirs];
  if (runFolder === workspace || !isSameOrInside(runFolder, workspace)) return excluded;
  const relative = path.relative(workspace, runFolder).split(path.sep).join('/');
  const covered = excluded.some((folder) => relative === folder || relative.startsWith(`${folder}/`));
  if (!covered) excluded.push(relative);
  return excluded;
}

/**
 * Run options with the run folder added to `sandbox.excludeDirs` when it lies
 * inside the workspace (see `excludedDirsOfRun`); the same options otherwise.
 */
export async function withRunFolderLeftOut<
  T extends { workspaceDir: string; sandbox?: Omit<SandboxOptions, 'workspaceDir' | 'signal'> | undefined },
>(options: T, outDir: string): Promise<T> {
  const given = options.sandbox?.excludeDirs ?? [];
  const excludeDirs = await excludedDirsOfRun(options.workspaceDir, outDir, given);
  if (excludeDirs.length === given.length) return options;
  return { ...options, sandbox: { ...options.sandbox, excludeDirs } };
}
