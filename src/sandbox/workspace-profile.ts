import { z } from 'zod';
import { MAX_LABEL_CHARS, MAX_NAME_CHARS, MAX_PATH_CHARS } from './cell-result.ts';

/**
 * A profile of every workspace file, computed inside the sandbox (no untrusted
 * file is parsed on the host). The agent puts it in the first message; the
 * offline analyst plans its cells from it.
 *
 * Every text is bounded, far above what the kernel sends (it cuts names at
 * 1 000 characters, samples at 60): a second line of defence for the texts
 * that reach the model.
 */

/** The kernel cuts loadCode at 32 Ki characters (room for a 4 096-character path). */
const MAX_LOAD_CODE_CHARS = 64 * 1024;
const MAX_SHORT_CHARS = 100;
const MAX_HISTOGRAM_BINS = 64;
const MAX_TOP_VALUES = 20;
const MAX_CORRELATIONS = 50;
/** The kernel sends 5 rows of at most 100 cells (its column limit). */
const MAX_SAMPLE_ROWS = 10;
const MAX_SAMPLE_ROW_CELLS = 200;

export const columnProfileSchema = z.object({
  name: z.string().max(MAX_NAME_CHARS),
  /** The pandas dtype after loading, e.g. `int64`, `float64`, `object`, `datetime64[ns]`. */
  dtype: z.string().max(MAX_LABEL_CHARS),
  /** What the values look like: numbers, dates, booleans, a few categories, free text, ids. */
  kind: z.enum(['number', 'integer', 'boolean', 'datetime', 'category', 'text', 'id', 'empty']),
  missing: z.number().int().nonnegative(),
  unique: z.number().int().nonnegative().nullable(),
  samples: z.array(z.string().max(MAX_LABEL_CHARS)),
  min: z.string().max(MAX_LABEL_CHARS).nullable(),
  max: z.string().max(MAX_LABEL_CHARS).nullable(),
  // The statistics below are for reports (absent from older kernels and traces).
  /** Mean of a number or integer column (of the rows the statistics come from). */
  mean: z.number().nullable().optional(),
  std: z.number().nullable().optional(),
  /** Sample skewness (pandas' `skew`). */
  skewness: z.number().nullable().optional(),
  /** Counts in equal-width bins from `low` to `high`, for a number or integer column. */
  histogram: z
    .object({
      low: z.number().nullable(),
      high: z.number().nullable(),
      counts: z.array(z.number().int().nonnegative()).max(MAX_HISTOGRAM_BINS),
    })
    .optional(),
  /** The most frequent values of a category, boolean, text or id column, most frequent first. */
  topValues: z
    .array(z.object({ value: z.string().max(MAX_LABEL_CHARS), count: z.number().int().nonnegative() }))
    .max(MAX_TOP_VALUES)
    .optional(),
});
export type ColumnProfile = z.infer<typeof columnProfileSchema>;

/** How the table was read, so that code can read it the same way. */
export const readOptionsSchema = z.object({
  encoding: z.string().max(MAX_SHORT_CHARS).nullable(),
  delimiter: z.string().max(MAX_SHORT_CHARS).nullable(),
  /** 0-based row of the header line in the file (after skipped preamble lines). */
  headerRow: z.number().int().nonnegative().nullable(),
  /** Lines above the header that were skipped (metadata preamble). */
  skipRows: z.number().int().nonnegative(),
  sheet: z.string().max(MAX_NAME_CHARS).nullable(),
  table: z.string().max(MAX_NAME_CHARS).nullable(),
  decimal: z.string().max(MAX_SHORT_CHARS).nullable(),
  thousands: z.string().max(MAX_SHORT_CHARS).nullable(),
  naValues: z.array(z.string().max(MAX_SHORT_CHARS)),
});
export type ReadOptions = z.infer<typeof readOptionsSchema>;

export const tableProfileSchema = z.object({
  /** Sheet name, SQLite table name, or '' for a single-table file. */
  name: z.string().max(MAX_NAME_CHARS),
  rows: z.number().int().nonnegative(),
  columns: z.array(columnProfileSchema),
  /** True when the table had more columns than were profiled. */
  columnsTruncated: z.boolean(),
  read: readOptionsSchema,
  /** Python that loads this table into a DataFrame, e.g. `pd.read_csv('a.csv', sep=';')`. */
  loadCode: z.string().max(MAX_LOAD_CODE_CHARS),
  // For reports (absent from older kernels and traces).
  /** Rows the column statistics come from (fewer than `rows` for a big file read in part). */
  statsRows: z.number().int().nonnegative().optional(),
  /** Rows equal to an earlier row, among those; null when cells could not be compared. */
  duplicateRows: z.number().int().nonnegative().nullable().optional(),
  /** Pearson correlations of at least 0.5 in size between measures, strongest first. */
  correlations: z
    .array(
      z.object({
        a: z.string().max(MAX_NAME_CHARS),
        b: z.string().max(MAX_NAME_CHARS),
        r: z.number().min(-1).max(1),
      }),
    )
    .max(MAX_CORRELATIONS)
    .optional(),
  /**
   * The first rows (at most 5), one text per profiled column, null where the
   * value is missing: the kernel converts and clips each cell (40 characters)
   * and keeps the rows within 16 KiB of UTF-8. Absent from older kernels and traces.
   */
  sampleRows: z
    .array(z.array(z.string().max(MAX_LABEL_CHARS).nullable()).max(MAX_SAMPLE_ROW_CELLS))
    .max(MAX_SAMPLE_ROWS)
    .optional(),
});
export type TableProfile = z.infer<typeof tableProfileSchema>;

export const fileFormatSchema = z.enum(['csv', 'excel', 'json', 'sqlite', 'parquet', 'text', 'unsupported']);
export type FileFormat = z.infer<typeof fileFormatSchema>;

export const fileProfileSchema = z.object({
  path: z.string().max(MAX_PATH_CHARS),
  sizeBytes: z.number().int().nonnegative(),
  format: fileFormatSchema,
  tables: z.array(tableProfileSchema),
  /** Why the file could not be read; the other files are still profiled. */
  error: z.string().max(MAX_NAME_CHARS).nullable(),
  notes: z.array(z.string().max(MAX_NAME_CHARS)),
});
export type FileProfile = z.infer<typeof fileProfileSchema>;

export const workspaceProfileSchema = z.object({
  files: z.array(fileProfileSchema),
  /** True when files or tables were left out to keep the profile small. */
  truncated: z.boolean(),
  /** Files found in the workspace, profiled or not (absent from older kernels). */
  totalFiles: z.number().int().nonnegative().optional(),
  /** A part's profile (`profileWorkspace({ part })`): which part, and the listing it was dealt from. */
  part: z
    .object({
      index: z.number().int().nonnegative(),
      count: z.number().int().positive(),
      /** SHA-256 of the listing it was dealt from (each path with its size): the same in every part of one whole. */
      listing: z.string().regex(/^[0-9a-f]{64}$/),
    })
    .optional(),
});
export type WorkspaceProfile = z.infer<typeof workspaceProfileSchema>;

/** Which part of the workspace's files one kernel profiles (`profileWorkspace({ part })`), so that several kernels share the work. */
export interface ProfilePart {
  /** From 0 to `count - 1`. */
  index: number;
  count: number;
}

/**
 * The whole workspace's profile from the profiles of its parts (each made
 * with `part: { index, count }` of the same `count`, one per index): their
 * files in the order a single profile lists them (by path, in code points).
 * Null when the parts do not make one whole — a part that is not one (a
 * session that ignores `part`), kernels that listed different files (a file
 * added or still growing between their listings: a file could then be in two
 * parts or in none), a path in two parts: the caller then profiles the
 * workspace in one session.
 */
export function mergeProfileParts(parts: readonly WorkspaceProfile[]): WorkspaceProfile | null {
  const first = parts[0]?.part;
  if (first === undefined) return null;
  const whole = parts.every(
    (profile, index) =>
      profile.part?.index === index &&
      profile.part.count === parts.length &&
      profile.part.listing === first.listing,
  );
  if (!whole) return null;
  // Dealt from one listing, the parts hold each file once; a repeated path means they were not.
  const files = parts
    .flatMap((part) => part.files)
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  if (new Set(files.map((file) => file.path)).size !== files.length) return null;
  const totals = parts.flatMap((part) => (part.totalFiles === undefined ? [] : [part.totalFiles]));
  return {
    files,
    truncated: parts.some((part) => part.truncated),
    // Every part counts the same listing.
    ...(totals.length === 0 ? {} : { totalFiles: Math.max(...totals) }),
  };
}
