import { mkdirSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import path from 'node:path';

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
