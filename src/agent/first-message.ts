import { z } from 'zod';
import type { FileProfile, WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import { clipText } from './clip-text.ts';

/**
 * The first user message, in DeepAnalyze's layout:
 *
 *     # Instruction
 *     <instruction>
 *
 *     # Data
 *     File 1: {"name": "enrolled.csv", "size": "20.4KB", ...}
 *
 * DeepAnalyze-8B was trained on one JSON object per file with `name` and
 * `size`; Datalyst adds the profile computed inside the sandbox to the same
 * object (format, tables with row counts, columns with types and samples, and
 * the pandas call that loads each table), so the model sees the data's shape
 * without spending a round on it. The line stays machine-readable: the offline
 * analyst parses it back with `parseDataSection`.
 */

export interface FirstMessageLimits {
  /** Files listed with a full profile; the rest get name and size only. Default 40. */
  maxProfiledFiles: number;
  /** Files listed at all; one line says how many more there are. Default 200. */
  maxListedFiles: number;
  /** Characters of the `# Data` section's full profiles; files past it get name and size only. Default 48 000. */
  maxDataChars: number;
  /** Columns listed per table. Default 40. */
  maxColumnsPerTable: number;
  /** Tables (sheets) listed per file. Default 8. */
  maxTablesPerFile: number;
  /** Sample values per column. Default 3. */
  maxSamplesPerColumn: number;
  /** Characters per sample value (and per min and max). Default 40. */
  maxSampleChars: number;
  /** Characters of a column, table or file name. Default 200. */
  maxNameChars: number;
  /** Characters of a table's `load` code; longer code is cut (the model writes its own). Default 2 000. */
  maxLoadCodeChars: number;
  /** Characters of a profiler note or error; at most 5 notes per file. Default 300. */
  maxNoteChars: number;
}

export const defaultFirstMessageLimits: FirstMessageLimits = {
  maxProfiledFiles: 40,
  maxListedFiles: 200,
  maxDataChars: 48_000,
  maxColumnsPerTable: 40,
  maxTablesPerFile: 8,
  maxSamplesPerColumn: 3,
  maxSampleChars: 40,
  maxNameChars: 200,
  maxLoadCodeChars: 2_000,
  maxNoteChars: 300,
};

const maxNotesPerFile = 5;
// A pandas dtype is short (`datetime64[ns, UTC]`); anything longer is not one.
const maxDtypeChars = 60;

const dataColumnSchema = z.object({
  name: z.string(),
  dtype: z.string(),
  kind: z.string(),
  missing: z.number(),
  unique: z.number().nullable().optional(),
  samples: z.array(z.string()),
  min: z.string().nullable().optional(),
  max: z.string().nullable().optional(),
});

const dataTableSchema = z.object({
  name: z.string(),
  rows: z.number(),
  load: z.string(),
  columns: z.array(dataColumnSchema),
  more_columns: z.number().optional(),
});

/** One `File N:` entry of the `# Data` section. Only `name` and `size` are DeepAnalyze's own. */
export const dataEntrySchema = z.object({
  name: z.string(),
  size: z.string(),
  format: z.string().optional(),
  tables: z.array(dataTableSchema).optional(),
  more_tables: z.number().optional(),
  error: z.string().optional(),
  notes: z.array(z.string()).optional(),
});
export type DataEntry = z.infer<typeof dataEntrySchema>;

/**
 * DeepAnalyze writes sizes as `4.8KB` (one decimal, 1024-based); people read
 * them better as `4.8 KB` (`separator: ' '`).
 */
export function formatFileSize(sizeBytes: number, separator = ''): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = sizeBytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value}${separator}B` : `${value.toFixed(1)}${separator}${units[unit]}`;
}

function clipOrNull(text: string | null, maxChars: number): string | null {
  return text === null ? null : clipText(text, maxChars);
}

/**
 * One file's entry. Every text in it comes from the data or the kernel
 * (column names, samples, notes can be megabytes long), so each is clipped.
 * Also the entries of a thread's note on a changed workspace (`workspace-change.ts`).
 */
export function toDataEntry(file: FileProfile, withProfile: boolean, limits: FirstMessageLimits): DataEntry {
  const entry: DataEntry = {
    name: clipText(file.path, limits.maxNameChars),
    size: formatFileSize(file.sizeBytes),
  };
  if (!withProfile) return entry;
  entry.format = file.format;
  if (file.error !== null) entry.error = clipText(file.error, limits.maxNoteChars);
  if (file.notes.length > 0) {
    entry.notes = file.notes.slice(0, maxNotesPerFile).map((note) => clipText(note, limits.maxNoteChars));
  }
  if (file.tables.length > 0) {
    entry.tables = file.tables.slice(0, limits.maxTablesPerFile).map((table) => {
      const hiddenColumns =
        Math.max(0, table.columns.length - limits.maxColumnsPerTable) + (table.columnsTruncated ? 1 : 0);
      return {
        name: clipText(table.name, limits.maxNameChars),
        rows: table.rows,
        load: clipText(table.loadCode, limits.maxLoadCodeChars),
        columns: table.columns.slice(0, limits.maxColumnsPerTable).map((column) => ({
          name: clipText(column.name, limits.maxNameChars),
          dtype: clipText(column.dtype, maxDtypeChars),
          kind: column.kind,
          missing: column.missing,
          unique: column.unique,
          samples: column.samples
            .slice(0, limits.maxSamplesPerColumn)
            .map((sample) => clipText(sample, limits.maxSampleChars)),
          min: clipOrNull(column.min, limits.maxSampleChars),
          max: clipOrNull(column.max, limits.maxSampleChars),
        })),
        ...(hiddenColumns > 0 ? { more_columns: hiddenColumns } : {}),
      };
    });
    if (file.tables.length > limits.maxTablesPerFile) {
      entry.more_tables = file.tables.length - limits.maxTablesPerFile;
    }
  }
  return entry;
}

/** The `# Data` section of a workspace without files. */
export const noDataFilesLine = 'No data files: the workspace holds none.';

/**
 * Builds the first user message from the instruction and the sandbox's
 * workspace profile. Its size is bounded: full profiles for the first files
 * while they fit in `maxDataChars`, name and size for the others, and a count
 * of the files past `maxListedFiles`.
 */
export function formatFirstMessage(
  instruction: string,
  profile: WorkspaceProfile,
  limits: FirstMessageLimits = defaultFirstMessageLimits,
): string {
  const lines: string[] = [];
  let profileChars = 0;
  for (const [index, file] of profile.files.slice(0, limits.maxListedFiles).entries()) {
    let line = '';
    if (index < limits.maxProfiledFiles) {
      line = `File ${index + 1}: ${JSON.stringify(toDataEntry(file, true, limits))}`;
      if (profileChars + line.length > limits.maxDataChars) line = '';
      else profileChars += line.length;
    }
    if (line === '') line = `File ${index + 1}: ${JSON.stringify(toDataEntry(file, false, limits))}`;
    lines.push(line);
  }
  const unlisted = profile.files.length - lines.length;
  if (unlisted > 0) lines.push(`(${unlisted} more file${unlisted === 1 ? '' : 's'} not listed)`);
  const unprofiled = (profile.totalFiles ?? profile.files.length) - profile.files.length;
  if (unprofiled > 0) {
    lines.push(
      `(${profile.files.length} of ${profile.totalFiles} files profiled: ${unprofiled} more in the workspace were not profiled or listed)`,
    );
  }
  // A workspace with no files at all (a chat without data, `whenNoFiles: 'ask-model'`) says so, not an empty section.
  if (lines.length === 0) lines.push(noDataFilesLine);
  return `# Instruction\n${instruction.trim()}\n\n# Data\n${lines.join('\n')}`;
}

/** Reads the `File N: {json}` lines back; lines that do not parse are skipped. */
export function parseDataSection(message: string): DataEntry[] {
  const entries: DataEntry[] = [];
  for (const match of message.matchAll(/^File \d+: (\{.*\})\s*$/gm)) {
    try {
      const parsed = dataEntrySchema.safeParse(JSON.parse(match[1] ?? ''));
      if (parsed.success) entries.push(parsed.data);
    } catch {
      // Not JSON: a file name with a line break, or text the user wrote. Skip it.
    }
  }
  return entries;
}

/** Reads the instruction back out of a first message. */
export function parseInstruction(message: string): string {
  const match = /^# Instruction\n([\s\S]*?)\n\n# Data\n/m.exec(message);
  return (match?.[1] ?? '').trim();
}
