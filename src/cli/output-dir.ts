import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors/index.ts';
import { isMissingFile } from '../util/fs-errors.ts';
import { isSameOrInside } from '../util/path-inside.ts';

/**
 * The run folder. A previous report is never overwritten: an explicit `--out`
 * must be new or empty; the default `runs/<time>-<name>` gets a `-2`, `-3`…
 * suffix when two runs start in the same second.
 */
export async function prepareOutDir(outDir: string, isDefault: boolean): Promise<string> {
  return (await claimOutDir(outDir, isDefault)).dir;
}

/** A run folder as `prepareOutDir` made it ready, with what it created for it. */
export interface ClaimedOutDir {
  dir: string;
  /** The outermost folder this claim created (`runs/` for a first default run), or null when `dir` was there, empty. */
  created: string | null;
}

/** `prepareOutDir`, remembering which folders it created, so that a session that wrote nothing can take them back. */
export async function claimOutDir(outDir: string, isDefault: boolean): Promise<ClaimedOutDir> {
  for (let attempt = 1; attempt <= 100; attempt++) {
    const candidate = attempt === 1 ? outDir : `${outDir}-${attempt}`;
    const state = await folderState(candidate);
    if (state === 'missing' || state === 'empty') {
      const created = await mkdir(candidate, { recursive: true });
      return { dir: candidate, created: created ?? null };
    }
    if (!isDefault) throw outDirTaken(candidate, state);
  }
  throw new ConfigError(
    `Could not find a free run folder next to ${outDir}.`,
    'Pass a new folder with --out.',
  );
}

/**
 * Refuses an --out that `claimOutDir` would refuse (a file, a folder that holds files), without creating
 * anything: called before the slow checks (the Docker engine, the runner image, the model), so a mistyped
 * --out is said at once. `claimOutDir` checks again when it takes the folder.
 */
export async function checkOutDir(outDir: string, isDefault: boolean): Promise<void> {
  if (isDefault) return;
  const state = await folderState(outDir);
  if (state === 'file' || state === 'non-empty') throw outDirTaken(outDir, state);
}

function outDirTaken(candidate: string, state: 'file' | 'non-empty'): ConfigError {
  return new ConfigError(
    state === 'file'
      ? `The output path ${candidate} is a file.`
      : `The output folder ${candidate} already holds files (a previous report is never overwritten).`,
    'Pass a new folder to --out, or leave --out out to get a new runs/<time>-<workspace> folder.',
  );
}

/**
 * Removes the folders a claim created, innermost first, when they are still
 * empty (nothing was written). A folder that was there before is never
 * touched, and one that holds anything stops the walk (rmdir refuses it).
 */
export async function releaseUnusedOutDir(claimed: ClaimedOutDir): Promise<void> {
  if (claimed.created === null) return;
  const outermost = path.resolve(claimed.created);
  for (let dir = path.resolve(claimed.dir); ; dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return; // not empty (something was written, or another run shares runs/), or already gone
    }
    if (dir === outermost || path.dirname(dir) === dir) return;
  }
}

async function folderState(candidate: string): Promise<'missing' | 'empty' | 'non-empty' | 'file'> {
  try {
    const info = await stat(candidate);
    if (!info.isDirectory()) return 'file';
    return (await readdir(candidate)).length === 0 ? 'empty' : 'non-empty';
  } catch (error) {
    if (isMissingFile(error)) return 'missing';
    throw new ConfigError(
      `The output folder ${candidate} cannot be used.`,
      'Check the path and its permissions, or pass another --out.',
      error,
    );
  }
}

/** A path relative to the current folder when that is shorter, for messages. */
export function displayPath(target: string, cwd: string = process.cwd()): string {
  const relative = path.relative(cwd, target);
  return relative !== '' && isSameOrInside(target, cwd) ? relative : target;
}
