import { z } from 'zod';

/**
 * The DeepAnalyze/OpenAI-compatible shapes: only the fields those clients
 * send and read. Unknown request fields are accepted and ignored, as both
 * servers do (e.g. `temperature` for the offline analyst).
 */

// The messages say what is wrong and what an id looks like: they follow the field's name in a 400.
export const fileIdSchema = z
  .string()
  .regex(
    /^file-[0-9a-f]{24}$/,
    'not a file id (one looks like file-0123456789abcdef01234567, from POST /v1/files)',
  );
export const threadIdSchema = z
  .string()
  .regex(
    /^thread-[0-9a-f]{24}$/,
    "not a thread id (one looks like thread-0123456789abcdef01234567, from a reply's thread_id or POST /v1/threads)",
  );

/** An uploaded file (OpenAI's file object; DeepAnalyze returns the same fields). */
export const fileObjectSchema = z
  .object({
    id: fileIdSchema,
    object: z.literal('file'),
    bytes: z.number().int().nonnegative(),
    created_at: z.number().int(),
    filename: z.string(),
    purpose: z.string(),
    status: z.literal('processed'),
    /** Datalyst: the SHA-256 of the content (uploads are stored by it). */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .meta({ id: 'FileObject' });
export type FileObject = z.infer<typeof fileObjectSchema>;

export const fileListSchema = z
  .object({ object: z.literal('list'), data: z.array(fileObjectSchema) })
  .meta({ id: 'FileList' });
export type FileList = z.infer<typeof fileListSchema>;

export const fileDeletedSchema = z
  .object({ id: fileIdSchema, object: z.literal('file'), deleted: z.literal(true) })
  .meta({ id: 'FileDeleted' });

/** The multipart form fields of an upload besides `file`. */
export const fileUploadFieldsSchema = z.object({ purpose: z.string().max(64).default('assistants') });

/** Text of a message: a string, or OpenAI's content parts (text parts are kept). */
const messageContentSchema = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  z.null(),
]);

export const chatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'execute']),
  content: messageContentSchema.optional(),
  /** DeepAnalyze: files attached to this message. */
  file_ids: z.array(fileIdSchema).max(64).optional(),
  /** DeepAnalyze: on the last message, continue this thread (same kernel, same files). */
  thread_id: threadIdSchema.optional(),
});
export type ChatMessageInput = z.infer<typeof chatMessageSchema>;

export const chatCompletionRequestSchema = z
  .looseObject({
    model: z.string().max(256).optional(),
    messages: z.array(chatMessageSchema).min(1).max(256),
    /** DeepAnalyze's top-level form of `file_ids` (kept for backward compatibility there). */
    file_ids: z.array(fileIdSchema).max(64).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().optional(),
  })
  .meta({ id: 'ChatCompletionRequest' });
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

/** A generated file as DeepAnalyze lists it: a name and a download URL. */
export const generatedFileSchema = z
  .object({ name: z.string(), url: z.string() })
  .meta({ id: 'GeneratedFile' });
export type GeneratedFile = z.infer<typeof generatedFileSchema>;

/** How a turn ended: the library's termination reason (answered, max-rounds, cancelled, …) and its detail. */
export const terminationSchema = z.object({ reason: z.string(), detail: z.string() });

export const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string(),
          files: z.array(generatedFileSchema).optional(),
          thread_id: threadIdSchema,
        }),
        finish_reason: z.enum(['stop', 'length']),
      }),
    ),
    generated_files: z.array(generatedFileSchema).optional(),
    attached_files: z.array(fileIdSchema).optional(),
    /** Datalyst: how the turn ended (answered, max-rounds, cancelled, …). */
    termination: terminationSchema,
  })
  .meta({ id: 'ChatCompletion' });
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({
          role: z.literal('assistant').optional(),
          content: z.string().optional(),
          files: z.array(generatedFileSchema).optional(),
          thread_id: threadIdSchema.optional(),
        }),
        finish_reason: z.enum(['stop', 'length']).nullable(),
      }),
    ),
    /** On the final chunk only (with `finish_reason`), as DeepAnalyze sends it. */
    generated_files: z.array(generatedFileSchema).optional(),
    /** Datalyst, on the final chunk only: how the turn ended (answered, max-rounds, cancelled, …). */
    termination: terminationSchema.optional(),
  })
  .meta({ id: 'ChatCompletionChunk' });
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

export const modelListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        id: z.string(),
        object: z.literal('model'),
        created: z.number().int(),
        owned_by: z.string(),
      }),
    ),
  })
  .meta({ id: 'ModelList' });

export const errorBodySchema = z
  .object({ error: z.object({ message: z.string(), type: z.string(), code: z.string(), fix: z.string() }) })
  .meta({ id: 'Error' });
