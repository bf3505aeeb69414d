import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../errors/index.ts';
import { isMissingFile } from '../../util/fs-errors.ts';

/**
 * Refuses a run folder that is a file or already holds anything, before
 * anything is written: Datalyst writes trace.jsonl, trace.json, artifacts/
 * and reports into it, and a user's own files there (an `outDir` that is the
 * data folder, a folder of earlier results) must never be replaced. The CLI
 * refuses a non-empty --out the same way (src/cli/output-dir.ts). Synchronous,
 * as the folder's creation and the trace's opening that follow it.
 */
export function assertRunFolderIsFree(outDir: string): void {
  const fix = `Pass a new or empty folder as outDir, or leave outDir out for a new runs/<id> folder.`;
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
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? ', …' : '');
  throw new ConfigError(
    `The run folder (outDir) ${outDir} already holds files; Datalyst writes only into a new or empty folder, so that no file of yours is replaced.`,
    fix,
    new Error(`${outDir} holds ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${shown}`),
  );
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
