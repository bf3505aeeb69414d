import type { Dirent } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from '../errors/index.ts';
import { formatBytes } from './format.ts';

/**
 * A look at the workspace folder before anything starts, on the host, with
 * nothing but stat/readdir/open (file contents are parsed only inside the
 * sandbox). It refuses what cannot be analysed at all (missing, a file, empty,
 * no data, above the size cap) and lists what will be skipped, so the person
 * knows before the run what it covers.
 */

/** Data formats the sandbox profiles and the analysts load. */
const dataExtensions = new Set([
  '.csv',
  '.tsv',
  '.tab',
  '.xlsx',
  '.xlsm',
  '.xls',
  '.json',
  '.jsonl',
  '.ndjson',
  '.sqlite',
  '.sqlite3',
  '.db',
  '.parquet',
]);
/** Read as text (notes, instructions, READMEs); copied, not analysed as tables. */
const textExtensions = new Set(['.txt', '.md', '.dat']);

export type WorkspaceEntryKind = 'data' | 'text' | 'unsupported' | 'unreadable' | 'special';

export interface WorkspaceEntry {
  /** Relative to the workspace, with `/`. */
  path: string;
  sizeBytes: number;
  kind: WorkspaceEntryKind;
  /** Why an entry is skipped (unsupported type, unreadable, a link...). */
  reason: string | null;
}

export interface WorkspaceCheck {
  dir: string;
  entries: WorkspaceEntry[];
  /** Bytes of all regular files (what the sandbox copies). */
  totalBytes: number;
  dataFiles: WorkspaceEntry[];
  /** Entries that are not analysed, each with its reason. */
  skipped: WorkspaceEntry[];
}

export interface CheckWorkspaceOptions {
  /** Refuse a workspace whose files add up to more than this. */
  maxTotalBytes: number;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

async function isReadable(file: string): Promise<string | null> {
  try {
    const handle = await open(file, 'r');
    await handle.close();
    return null;
  } catch (error) {
    return errorCode(error) ?? 'cannot be opened';
  }
}

async function classify(dir: string, entry: Dirent): Promise<WorkspaceEntry | null> {
  const absolute = path.join(entry.parentPath, entry.name);
  const relative = path.relative(dir, absolute).split(path.sep).join('/');
  if (entry.isDirectory()) return null;
  if (entry.isSymbolicLink()) {
    return {
      path: relative,
      sizeBytes: 0,
      kind: 'special',
      reason: 'a symbolic link (not followed; copy the file in instead)',
    };
  }
  if (!entry.isFile()) {
    return { path: relative, sizeBytes: 0, kind: 'special', reason: 'not a regular file' };
  }
  let sizeBytes = 0;
  try {
    sizeBytes = (await stat(absolute)).size;
  } catch (error) {
    return {
      path: relative,
      sizeBytes: 0,
      kind: 'unreadable',
      reason: `unreadable (${errorCode(error) ?? 'stat failed'})`,
    };
  }
  const unreadable = await isReadable(absolute);
  if (unreadable !== null)
    return { path: relative, sizeBytes, kind: 'unreadable', reason: `unreadable (${unreadable})` };
  const extension = path.extname(entry.name).toLowerCase();
  if (dataExtensions.has(extension)) return { path: relative, sizeBytes, kind: 'data', reason: null };
  if (textExtensions.has(extension)) return { path: relative, sizeBytes, kind: 'text', reason: null };
  return {
    path: relative,
    sizeBytes,
    kind: 'unsupported',
    reason: `unsupported type${extension ? ` (${extension})` : ' (no extension)'}`,
  };
}

function largest(entries: readonly WorkspaceEntry[], count: number): string {
  return [...entries]
    .sort((a, b) => b.sizeBytes - a.sizeBytes)
    .slice(0, count)
    .map((entry) => `${entry.path} ${formatBytes(entry.sizeBytes)}`)
    .join(', ');
}

const supportedList = 'CSV/TSV, Excel (.xlsx, .xls), JSON/JSON lines, SQLite, Parquet';

/** Checks the workspace folder; throws `WorkspaceError` (exit code 2) with the fix when it cannot be analysed. */
export async function checkWorkspace(dir: string, options: CheckWorkspaceOptions): Promise<WorkspaceCheck> {
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      throw new WorkspaceError(
        `The workspace ${dir} does not exist.`,
        'Check the path; it should be a folder of data files, e.g. workspace-examples/sales.',
        error,
      );
    }
    throw new WorkspaceError(
      `The workspace ${dir} cannot be read (${errorCode(error) ?? 'stat failed'}).`,
      'Check the path and its permissions.',
      error,
    );
  }
  if (!info.isDirectory()) {
    throw new WorkspaceError(
      `The workspace ${dir} is a file, not a folder.`,
      `Pass the folder that holds it (${path.dirname(dir)}), or put the file in a folder of its own.`,
    );
  }
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (error) {
    throw new WorkspaceError(
      `The workspace ${dir} cannot be listed (${errorCode(error) ?? 'readdir failed'}).`,
      'Check the folder permissions.',
      error,
    );
  }
  const entries = (await Promise.all(dirents.map((entry) => classify(dir, entry))))
    .filter((entry): entry is WorkspaceEntry => entry !== null)
    .sort((a, b) => a.path.localeCompare(b.path));
  if (entries.length === 0) {
    throw new WorkspaceError(
      `The workspace ${dir} is empty.`,
      `Put the files to analyse in it (${supportedList}).`,
    );
  }
  const totalBytes = entries.reduce((sum, entry) => sum + entry.sizeBytes, 0);
  if (totalBytes > options.maxTotalBytes) {
    throw new WorkspaceError(
      `The workspace ${dir} holds ${formatBytes(totalBytes)} in ${entries.length} files, above the cap of ${formatBytes(options.maxTotalBytes)}. Largest: ${largest(entries, 5)}.`,
      `Point at a smaller folder, or raise the cap with --max-workspace-mb ${Math.ceil(totalBytes / 1024 / 1024)} (the sandbox mounts the folder read-only, or copies it into a volume on a remote engine).`,
    );
  }
  const dataFiles = entries.filter((entry) => entry.kind === 'data');
  const skipped = entries.filter((entry) => entry.kind !== 'data' && entry.kind !== 'text');
  if (dataFiles.length === 0) {
    const listed =
      skipped.length > 0
        ? ` Skipped: ${skipped
            .slice(0, 10)
            .map((entry) => `${entry.path} (${entry.reason ?? entry.kind})`)
            .join(', ')}.`
        : '';
    throw new WorkspaceError(
      `The workspace ${dir} holds no data file Datalyst can read.${listed}`,
      `Add data files (${supportedList}).`,
    );
  }
  return { dir, entries, totalBytes, dataFiles, skipped };
}
