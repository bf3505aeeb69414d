import { z } from 'zod';
import { workspaceProfileSchema } from '../sandbox/workspace-profile.ts';
import { fileIdSchema, fileObjectSchema, terminationSchema, threadIdSchema } from './openai-schemas.ts';

/**
 * Datalyst's own thread/turn API: the shapes a front end (the web UI, issue
 * #14) imports. A thread is a conversation over a set of uploaded files with
 * one sandbox; each question is a turn whose events stream as SSE.
 */

export const turnStatusSchema = z.enum([
  'queued',
  'running',
  'finished',
  'cancelled',
  'interrupted',
  'failed',
]);
export type TurnStatus = z.infer<typeof turnStatusSchema>;

export const artifactSchema = z
  .object({ path: z.string(), bytes: z.number().int().nonnegative(), url: z.string() })
  .meta({ id: 'Artifact' });
export type Artifact = z.infer<typeof artifactSchema>;

export const turnSchema = z
  .object({
    object: z.literal('thread.turn'),
    thread_id: threadIdSchema,
    index: z.number().int().positive(),
    question: z.string(),
    status: turnStatusSchema,
    created_at: z.number().int(),
    started_at: z.number().int().nullable(),
    ended_at: z.number().int().nullable(),
    /** How the analysis ended (answered, max-rounds, cancelled, …); null until it ends. */
    termination: terminationSchema.nullable(),
    answer: z.string().nullable(),
    rounds: z.number().int().nonnegative(),
    artifacts: z.array(artifactSchema),
    /** SSE stream of this turn's events; re-attach with `Last-Event-ID`. */
    events_url: z.string(),
  })
  .meta({ id: 'Turn' });
export type Turn = z.infer<typeof turnSchema>;

export const threadSchema = z
  .object({
    id: threadIdSchema,
    object: z.literal('thread'),
    created_at: z.number().int(),
    model: z.string(),
    files: z.array(fileObjectSchema),
    turns: z.array(turnSchema),
    /** True while the thread holds a live sandbox session. */
    sandbox_open: z.boolean(),
  })
  .meta({ id: 'Thread' });
export type Thread = z.infer<typeof threadSchema>;

export const threadListSchema = z
  .object({ object: z.literal('list'), data: z.array(threadSchema) })
  .meta({ id: 'ThreadList' });

export const createThreadRequestSchema = z
  .strictObject({ file_ids: z.array(fileIdSchema).max(64).default([]) })
  .meta({ id: 'CreateThreadRequest' });
export type CreateThreadRequest = z.input<typeof createThreadRequestSchema>;

export const createTurnRequestSchema = z
  .strictObject({
    question: z
      .string({ error: 'the question is missing: send it as text in `question`' })
      .trim()
      .min(1, 'the question is empty or only spaces: put its text in `question`')
      .max(20_000, 'the question is longer than 20,000 characters'),
    /** More files for the thread's workspace, added before this turn. */
    file_ids: z.array(fileIdSchema).max(64).default([]),
  })
  .meta({ id: 'CreateTurnRequest' });
export type CreateTurnRequest = z.input<typeof createTurnRequestSchema>;

export const threadDeletedSchema = z
  .object({ id: threadIdSchema, object: z.literal('thread'), deleted: z.literal(true) })
  .meta({ id: 'ThreadDeleted' });

/**
 * `GET /v1/threads/{id}/profile`: the thread's files profiled in the sandbox
 * before any question (the same profile the first turn's `profile-end`
 * carries). Fields may be added to the profile; clients ignore what they do
 * not know.
 */
export const threadProfileSchema = z
  .object({
    object: z.literal('thread.profile'),
    thread_id: threadIdSchema,
    /** The thread's files this profile covers. */
    file_ids: z.array(fileIdSchema),
    profile: workspaceProfileSchema,
  })
  .meta({ id: 'ThreadProfile' });
export type ThreadProfile = z.infer<typeof threadProfileSchema>;

/** One number of an answer as grounding found it: offsets into its text run, the output that printed it (verified) or none. */
export const groundedNumberSchema = z.object({
  text: z.string(),
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  verified: z.boolean(),
  outputId: z.string().nullable(),
  matchedText: z.string().nullable(),
});

/**
 * The answer's numbers, grounded on the server by the report's rules
 * (`src/trace/number-grounding.ts`): per markdown text run of the answer (in
 * reading order, only runs that hold a checked number), its numbers. Null
 * when the thread's trace could not be read.
 */
export const answerGroundingSchema = z
  .object({
    segments: z.array(z.object({ text: z.string(), numbers: z.array(groundedNumberSchema) })),
  })
  .meta({ id: 'AnswerGrounding' });
export type AnswerGrounding = z.infer<typeof answerGroundingSchema>;

export const reportFormatSchema = z.enum(['html', 'md', 'ipynb', 'json', 'pdf']);
export type ReportFormatParameter = z.infer<typeof reportFormatSchema>;

/**
 * One SSE event of a turn (`data:` is this JSON, `id:` its `seq`). The
 * library's agent events come through as they are, except that an error is
 * plain data and a figure's bytes are left out of `execution-end` (its
 * `dataBase64` is empty and its `name` gives `…/figures/{name}`); the server
 * adds the turn's own lifecycle events around them.
 */
const errorDataSchema = z.object({
  code: z.string(),
  message: z.string(),
  fix: z.string(),
  fault: z.string(),
});

export const turnEventSchema = z
  .discriminatedUnion('type', [
    /** Server: the turn waits for a slot (`position` turns ahead of it). */
    z.object({ type: z.literal('turn-queued'), seq: z.number().int(), position: z.number().int() }),
    /**
     * Server: the turn got a slot; `resumed` when the thread's sandbox is reopened and its cells replayed first;
     * `started_at` (Unix seconds) is the turn record's, kept here so that a turn the server did not live to end
     * still says when it began (absent from logs of servers before it).
     */
    z.object({
      type: z.literal('turn-running'),
      seq: z.number().int(),
      resumed: z.boolean(),
      started_at: z.number().int().optional(),
    }),
    /** Server: the last event of every turn, whatever happened (finished, cancelled, failed, interrupted). */
    z.object({
      type: z.literal('turn-done'),
      seq: z.number().int(),
      status: turnStatusSchema,
      termination: terminationSchema.nullable(),
    }),
    z.object({ type: z.literal('error'), seq: z.number().int(), error: errorDataSchema }),
    /** The model's answer, with its numbers grounded (see AnswerGrounding). */
    z.looseObject({
      type: z.literal('answer-end'),
      seq: z.number().int(),
      round: z.number().int(),
      answer: z.string(),
      grounding: answerGroundingSchema.nullable().optional(),
    }),
    /** A cell began; `started_ms` (Unix ms, the server's clock) lets a client that attaches mid-cell count its time from the start. */
    z.looseObject({
      type: z.literal('execution-start'),
      seq: z.number().int(),
      round: z.number().int(),
      outputId: z.string(),
      code: z.string(),
      started_ms: z.number().int().optional(),
    }),
    z.looseObject({
      type: z.enum([
        'run-start',
        'profile-end',
        'round-start',
        'text-delta',
        'turn-restart',
        'step-end',
        'code-end',
        'execution-output',
        'execution-end',
        'ask',
        'turn-start',
        'turn-end',
        'artifact-saved',
        'notice',
        'run-end',
        'replay-start',
        'replay-end',
      ]),
      seq: z.number().int(),
    }),
  ])
  .meta({ id: 'TurnEvent' });
export type TurnEvent = z.infer<typeof turnEventSchema>;

/** `GET /health` (answered without the API key). */
export const healthSchema = z
  .object({
    status: z.literal('healthy'),
    /** Unix seconds. */
    timestamp: z.number().int(),
    turns: z.object({ running: z.number().int().nonnegative(), queued: z.number().int().nonnegative() }),
  })
  .meta({ id: 'Health' });
export type Health = z.infer<typeof healthSchema>;

export { fileIdSchema, terminationSchema, threadIdSchema };
