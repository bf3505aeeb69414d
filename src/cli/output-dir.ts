import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors/index.ts';
import { isMissingFile } from '../util/fs-errors.ts';

/**
 * The run folder. A previous report is never overwritten: an explicit `--out`
 * must be new or empty; the default `runs/<time>-<name>` gets a `-2`, `-3`…
 * suffix when two runs start in the same second.
 */
export async function prepareOutDir(outDir: string, isDefault: boolean): Promise<string> {
  for (let attempt = 1; attempt <= 100; attempt++) {
    const candidate = attempt === 1 ? outDir : `${outDir}-${attempt}`;
    const state = await folderState(candidate);
    if (state === 'missing' || state === 'empty') {
      await mkdir(candidate, { recursive: true });
      return candidate;
    }
    if (!isDefault) {
      throw new ConfigError(
        state === 'file'
          ? `The output path ${candidate} is a file.`
          : `The output folder ${candidate} already holds files (a previous report is never overwritten).`,
        'Pass a new folder to --out, or leave --out out to get a new runs/<time>-<workspace> folder.',
      );
    }
  }
  throw new ConfigError(
    `Could not find a free run folder next to ${outDir}.`,
    'Pass a new folder with --out.',
  );
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
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : target;
}
