import { z } from 'zod';
import type { FileProfile, WorkspaceProfile } from '../sandbox/workspace-profile.ts';

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
  /** Columns listed per table. Default 40. */
  maxColumnsPerTable: number;
  /** Tables (sheets) listed per file. Default 8. */
  maxTablesPerFile: number;
  /** Sample values per column. Default 3. */
  maxSamplesPerColumn: number;
  /** Characters per sample value. Default 40. */
  maxSampleChars: number;
}

export const defaultFirstMessageLimits: FirstMessageLimits = {
  maxProfiledFiles: 40,
  maxColumnsPerTable: 40,
  maxTablesPerFile: 8,
  maxSamplesPerColumn: 3,
  maxSampleChars: 40,
};

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

/** DeepAnalyze writes sizes as `4.8KB` (one decimal, 1024-based). */
export function formatFileSize(sizeBytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = sizeBytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value}B` : `${value.toFixed(1)}${units[unit]}`;
}

function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

function toDataEntry(file: FileProfile, withProfile: boolean, limits: FirstMessageLimits): DataEntry {
  const entry: DataEntry = { name: file.path, size: formatFileSize(file.sizeBytes) };
  if (!withProfile) return entry;
  entry.format = file.format;
  if (file.error !== null) entry.error = file.error;
  if (file.notes.length > 0) entry.notes = file.notes;
  if (file.tables.length > 0) {
    entry.tables = file.tables.slice(0, limits.maxTablesPerFile).map((table) => {
      const hiddenColumns =
        Math.max(0, table.columns.length - limits.maxColumnsPerTable) + (table.columnsTruncated ? 1 : 0);
      return {
        name: table.name,
        rows: table.rows,
        load: table.loadCode,
        columns: table.columns.slice(0, limits.maxColumnsPerTable).map((column) => ({
          name: column.name,
          dtype: column.dtype,
          kind: column.kind,
          missing: column.missing,
          unique: column.unique,
          samples: column.samples
            .slice(0, limits.maxSamplesPerColumn)
            .map((sample) => clip(sample, limits.maxSampleChars)),
          min: column.min,
          max: column.max,
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

/** Builds the first user message from the instruction and the sandbox's workspace profile. */
export function formatFirstMessage(
  instruction: string,
  profile: WorkspaceProfile,
  limits: FirstMessageLimits = defaultFirstMessageLimits,
): string {
  const lines = profile.files.map(
    (file, index) =>
      `File ${index + 1}: ${JSON.stringify(toDataEntry(file, index < limits.maxProfiledFiles, limits))}`,
  );
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
