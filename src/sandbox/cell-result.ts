import { z } from 'zod';

/**
 * What one executed cell produced. The kernel sends this over the container's
 * stdio; the host validates it with these schemas (the kernel runs untrusted
 * code in its own process, so its messages are untrusted too).
 */

/**
 * Bounds on what the kernel may send, far above what it sends (it clips an
 * error's value and traceback at 64 Ki characters, labels at 200): a second
 * line of defence, so that no text field reaches the model or the trace whole
 * when the kernel's own clipping failed. A message past them breaks the protocol.
 * Lengths are UTF-16 code units (a character outside the BMP counts twice).
 */
export const MAX_ERROR_TEXT_CHARS = 256 * 1024;
export const MAX_VALUE_CHARS = 256 * 1024;
export const MAX_NAME_CHARS = 4_096;
export const MAX_LABEL_CHARS = 1_000;
export const MAX_PATH_CHARS = 16 * 1024;
/** Base64 of the kernel's largest figure (8 MiB of PNG) with room to spare. */
export const MAX_FIGURE_BASE64_CHARS = 16 * 1024 * 1024;
/** matplotlib's Agg renderer refuses images wider or taller than 2^16 pixels. */
export const MAX_FIGURE_SIDE_PX = 65_536;

/** The kernel's ids (`figure-2-1`, `table-3-1`): short, and safe in a file name or an HTML id. */
const outputIdSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/);

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
  name: z.string().max(MAX_NAME_CHARS),
  value: z.string().max(MAX_ERROR_TEXT_CHARS),
  traceback: z.string().max(MAX_ERROR_TEXT_CHARS),
});
export type CellError = z.infer<typeof cellErrorSchema>;

/** A matplotlib figure, captured whether or not the code called savefig/show. */
export const figureSchema = z.object({
  id: outputIdSchema,
  mimeType: z.literal('image/png'),
  dataBase64: z
    .string()
    .max(MAX_FIGURE_BASE64_CHARS)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64')
    .refine((text) => text.length % 4 === 0, 'not padded base64'),
  widthPx: z.number().int().positive().max(MAX_FIGURE_SIDE_PX),
  heightPx: z.number().int().positive().max(MAX_FIGURE_SIDE_PX),
});
export type Figure = z.infer<typeof figureSchema>;

/** A vega-lite spec, from an Altair chart or a plain dict spec the code displayed. */
export const chartSchema = z.object({
  id: outputIdSchema,
  spec: z.record(z.string(), z.unknown()),
});
export type Chart = z.infer<typeof chartSchema>;

export const tableCellSchema = z.union([z.string().max(MAX_LABEL_CHARS), z.number(), z.boolean(), z.null()]);

/** A DataFrame the code displayed, capped to a head of rows and columns. */
export const tableSchema = z.object({
  id: outputIdSchema,
  columns: z.array(z.string().max(MAX_LABEL_CHARS)),
  index: z.array(z.string().max(MAX_LABEL_CHARS)),
  rows: z.array(z.array(tableCellSchema)),
  totalRows: z.number().int().nonnegative(),
  totalColumns: z.number().int().nonnegative(),
  truncated: z.boolean(),
});
export type Table = z.infer<typeof tableSchema>;

/** A file in the working directory that the cell created or modified. */
export const fileChangeSchema = z.object({
  path: z.string().max(MAX_PATH_CHARS),
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
  value: z.string().max(MAX_VALUE_CHARS).nullable(),
  figures: z.array(figureSchema),
  charts: z.array(chartSchema),
  tables: z.array(tableSchema),
  files: z.array(fileChangeSchema),
  durationMs: z.number().nonnegative(),
  /** True when the kernel had to be restarted: variables and imports are gone. */
  stateLost: z.boolean(),
  /** A sentence a person can read about a non-ok status (what limit was hit). */
  statusDetail: z.string().max(MAX_NAME_CHARS).nullable(),
});
export type CellResult = z.infer<typeof cellResultSchema>;
