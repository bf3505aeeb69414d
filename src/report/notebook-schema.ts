import { z } from 'zod';

/**
 * The part of nbformat 4.5 that Datalyst writes, as a zod schema: enough to
 * catch a malformed notebook before Jupyter does (cell ids are required from
 * 4.5 on; outputs are one of four shapes).
 */

const multilineString = z.union([z.string(), z.array(z.string())]);
const mimeBundle = z.record(z.string(), z.union([multilineString, z.record(z.string(), z.unknown())]));
const cellId = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

export const notebookOutputSchema = z.discriminatedUnion('output_type', [
  z.strictObject({
    output_type: z.literal('stream'),
    name: z.enum(['stdout', 'stderr']),
    text: multilineString,
  }),
  z.strictObject({
    output_type: z.literal('display_data'),
    data: mimeBundle,
    metadata: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({
    output_type: z.literal('execute_result'),
    execution_count: z.number().int().positive().nullable(),
    data: mimeBundle,
    metadata: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({
    output_type: z.literal('error'),
    ename: z.string(),
    evalue: z.string(),
    traceback: z.array(z.string()),
  }),
]);
export type NotebookOutput = z.infer<typeof notebookOutputSchema>;

const cellMetadata = z.looseObject({ tags: z.array(z.string()).optional() });

export const notebookCellSchema = z.discriminatedUnion('cell_type', [
  z.strictObject({
    id: cellId,
    cell_type: z.literal('code'),
    metadata: cellMetadata,
    source: multilineString,
    execution_count: z.number().int().positive().nullable(),
    outputs: z.array(notebookOutputSchema),
  }),
  z.strictObject({
    id: cellId,
    cell_type: z.literal('markdown'),
    metadata: cellMetadata,
    source: multilineString,
  }),
  z.strictObject({
    id: cellId,
    cell_type: z.literal('raw'),
    metadata: cellMetadata,
    source: multilineString,
  }),
]);
export type NotebookCell = z.infer<typeof notebookCellSchema>;

export const notebookSchema = z
  .strictObject({
    nbformat: z.literal(4),
    nbformat_minor: z.number().int().min(5),
    metadata: z.looseObject({
      kernelspec: z.looseObject({ name: z.string(), display_name: z.string() }).optional(),
      language_info: z.looseObject({ name: z.string() }).optional(),
    }),
    cells: z.array(notebookCellSchema),
  })
  .refine((notebook) => new Set(notebook.cells.map((cell) => cell.id)).size === notebook.cells.length, {
    message: 'Cell ids must be unique.',
  });
export type Notebook = z.infer<typeof notebookSchema>;
