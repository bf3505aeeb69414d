import { z } from 'zod';

/**
 * A profile of every workspace file, computed inside the sandbox (no untrusted
 * file is parsed on the host). The agent puts it in the first message; the
 * offline analyst plans its cells from it.
 */

export const columnProfileSchema = z.object({
  name: z.string(),
  /** The pandas dtype after loading, e.g. `int64`, `float64`, `object`, `datetime64[ns]`. */
  dtype: z.string(),
  /** What the values look like: numbers, dates, booleans, a few categories, free text, ids. */
  kind: z.enum(['number', 'integer', 'boolean', 'datetime', 'category', 'text', 'id', 'empty']),
  missing: z.number().int().nonnegative(),
  unique: z.number().int().nonnegative().nullable(),
  samples: z.array(z.string()),
  min: z.string().nullable(),
  max: z.string().nullable(),
});
export type ColumnProfile = z.infer<typeof columnProfileSchema>;

/** How the table was read, so that code can read it the same way. */
export const readOptionsSchema = z.object({
  encoding: z.string().nullable(),
  delimiter: z.string().nullable(),
  /** 0-based row of the header line in the file (after skipped preamble lines). */
  headerRow: z.number().int().nonnegative().nullable(),
  /** Lines above the header that were skipped (metadata preamble). */
  skipRows: z.number().int().nonnegative(),
  sheet: z.string().nullable(),
  table: z.string().nullable(),
  decimal: z.string().nullable(),
  thousands: z.string().nullable(),
  naValues: z.array(z.string()),
});
export type ReadOptions = z.infer<typeof readOptionsSchema>;

export const tableProfileSchema = z.object({
  /** Sheet name, SQLite table name, or '' for a single-table file. */
  name: z.string(),
  rows: z.number().int().nonnegative(),
  columns: z.array(columnProfileSchema),
  /** True when the table had more columns than were profiled. */
  columnsTruncated: z.boolean(),
  read: readOptionsSchema,
  /** Python that loads this table into a DataFrame, e.g. `pd.read_csv('a.csv', sep=';')`. */
  loadCode: z.string(),
});
export type TableProfile = z.infer<typeof tableProfileSchema>;

export const fileFormatSchema = z.enum(['csv', 'excel', 'json', 'sqlite', 'parquet', 'text', 'unsupported']);
export type FileFormat = z.infer<typeof fileFormatSchema>;

export const fileProfileSchema = z.object({
  path: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  format: fileFormatSchema,
  tables: z.array(tableProfileSchema),
  /** Why the file could not be read; the other files are still profiled. */
  error: z.string().nullable(),
  notes: z.array(z.string()),
});
export type FileProfile = z.infer<typeof fileProfileSchema>;

export const workspaceProfileSchema = z.object({
  files: z.array(fileProfileSchema),
  /** True when files or tables were left out to keep the profile small. */
  truncated: z.boolean(),
});
export type WorkspaceProfile = z.infer<typeof workspaceProfileSchema>;
