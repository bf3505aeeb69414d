import { z } from 'zod';

/**
 * What one executed cell produced. The kernel sends this over the container's
 * stdio; the host validates it with these schemas (the kernel runs untrusted
 * code in its own process, so its messages are untrusted too).
 */

export const cellStatusSchema = z.enum(['ok', 'error', 'timeout', 'memory', 'crashed', 'output-limit']);
export type CellStatus = z.infer<typeof cellStatusSchema>;

/** One output stream, capped at `maxOutputBytes`; `totalBytes` counts what the cell wrote. */
export const capturedTextSchema = z.object({
  text: z.string(),
  truncated: z.boolean(),
  totalBytes: z.number().int().nonnegative(),
});
export type CapturedText = z.infer<typeof capturedTextSchema>;

export const cellErrorSchema = z.object({
  name: z.string(),
  value: z.string(),
  traceback: z.string(),
});
export type CellError = z.infer<typeof cellErrorSchema>;

/** A matplotlib figure, captured whether or not the code called savefig/show. */
export const figureSchema = z.object({
  id: z.string(),
  mimeType: z.literal('image/png'),
  dataBase64: z.string(),
  widthPx: z.number().int().positive(),
  heightPx: z.number().int().positive(),
});
export type Figure = z.infer<typeof figureSchema>;

/** A vega-lite spec, from an Altair chart or a plain dict spec the code displayed. */
export const chartSchema = z.object({
  id: z.string(),
  spec: z.record(z.string(), z.unknown()),
});
export type Chart = z.infer<typeof chartSchema>;

export const tableCellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** A DataFrame the code displayed, capped to a head of rows and columns. */
export const tableSchema = z.object({
  id: z.string(),
  columns: z.array(z.string()),
  index: z.array(z.string()),
  rows: z.array(z.array(tableCellSchema)),
  totalRows: z.number().int().nonnegative(),
  totalColumns: z.number().int().nonnegative(),
  truncated: z.boolean(),
});
export type Table = z.infer<typeof tableSchema>;

/** A file in the working directory that the cell created or modified. */
export const fileChangeSchema = z.object({
  path: z.string(),
  change: z.enum(['created', 'modified']),
  sizeBytes: z.number().int().nonnegative(),
});
export type FileChange = z.infer<typeof fileChangeSchema>;

export const cellResultSchema = z.object({
  status: cellStatusSchema,
  stdout: capturedTextSchema,
  stderr: capturedTextSchema,
  /** Set when status is `error` (and for timeouts: the KeyboardInterrupt-like error raised). */
  error: cellErrorSchema.nullable(),
  /** repr of the cell's last expression, like a notebook echoes it; null when there is none. */
  value: z.string().nullable(),
  figures: z.array(figureSchema),
  charts: z.array(chartSchema),
  tables: z.array(tableSchema),
  files: z.array(fileChangeSchema),
  durationMs: z.number().nonnegative(),
  /** True when the kernel had to be restarted: variables and imports are gone. */
  stateLost: z.boolean(),
  /** A sentence a person can read about a non-ok status (what limit was hit). */
  statusDetail: z.string().nullable(),
});
export type CellResult = z.infer<typeof cellResultSchema>;
