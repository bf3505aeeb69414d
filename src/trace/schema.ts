import { z } from 'zod';
import { cellResultSchema } from '../sandbox/cell-result.ts';
import { workspaceProfileSchema } from '../sandbox/workspace-profile.ts';

/**
 * The trace: the one record of a run. Written by src/agent as JSON lines while
 * the run goes on (a crash leaves everything up to the crash), read by
 * src/report to render a report at any time. Bump TRACE_VERSION on any change
 * that an older reader could misread.
 */
export const TRACE_VERSION = 1;

export const stepKindSchema = z.enum(['analyze', 'understand', 'code', 'answer', 'text']);
export type StepKind = z.infer<typeof stepKindSchema>;

export const terminationReasonSchema = z.enum([
  'answered',
  'max-rounds',
  'context-budget',
  'deadline',
  'no-progress',
  'repeated-failure',
  'model-unavailable',
  'sandbox-failure',
  'cancelled',
]);
export type TerminationReason = z.infer<typeof terminationReasonSchema>;

export const usageSchema = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof usageSchema>;

export const inputFileSchema = z.object({
  path: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type InputFile = z.infer<typeof inputFileSchema>;

export const modelInfoSchema = z.object({
  /** The model name sent to the endpoint, or `datalyst-offline-analyst`. */
  id: z.string(),
  profile: z.enum(['deepanalyze', 'chat', 'offline']),
  baseUrl: z.string().nullable(),
  /** True when no language model was used (the built-in offline analyst). */
  offline: z.boolean(),
});
export type ModelInfo = z.infer<typeof modelInfoSchema>;

export const runStartSchema = z.object({
  type: z.literal('run-start'),
  version: z.literal(TRACE_VERSION),
  runId: z.string(),
  startedAt: z.string(),
  instruction: z.string(),
  workspace: z.object({ path: z.string(), files: z.array(inputFileSchema) }),
  model: modelInfoSchema,
  limits: z.object({
    maxRounds: z.number().int().positive(),
    cellTimeoutMs: z.number().int().positive(),
    memoryMb: z.number().positive(),
    cpus: z.number().positive(),
    deadlineMs: z.number().int().positive().nullable(),
    contextBudgetTokens: z.number().int().positive(),
  }),
  environment: z.object({
    datalystVersion: z.string(),
    nodeVersion: z.string(),
    sandboxBackend: z.enum(['docker', 'local']),
    image: z.string().nullable(),
  }),
});

export const workspaceProfileRecordSchema = z.object({
  type: z.literal('workspace-profile'),
  at: z.string(),
  profile: workspaceProfileSchema,
});

/** One model reply, raw, as streamed (before it was split into steps). */
export const modelTurnSchema = z.object({
  type: z.literal('model-turn'),
  round: z.number().int().positive(),
  at: z.string(),
  text: z.string(),
  usage: usageSchema.nullable(),
  durationMs: z.number().nonnegative(),
  finishReason: z.string().nullable(),
});

export const stepSchema = z.object({
  type: z.literal('step'),
  round: z.number().int().positive(),
  at: z.string(),
  kind: stepKindSchema,
  text: z.string(),
  /** False when the stream ended inside the tag. */
  closed: z.boolean(),
});

export const executionSchema = z.object({
  type: z.literal('execution'),
  round: z.number().int().positive(),
  at: z.string(),
  /** Short id shown in reports and used to ground the answer's numbers, e.g. `E3`. */
  outputId: z.string(),
  code: z.string(),
  result: cellResultSchema,
  /** The <Execute> text the model was shown (capped). */
  executeText: z.string(),
});

/** A file the code wrote, copied out of the sandbox into the run folder. */
export const artifactSchema = z.object({
  type: z.literal('artifact'),
  at: z.string(),
  outputId: z.string().nullable(),
  /** Path relative to the run folder's `artifacts/`. */
  path: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string(),
});

/** Something the loop did or told the model: a nudge, a compaction, a retry. */
export const noticeSchema = z.object({
  type: z.literal('notice'),
  at: z.string(),
  round: z.number().int().nonnegative(),
  kind: z.enum(['nudge', 'compaction', 'retry', 'final-answer-request', 'warning']),
  text: z.string(),
});

export const runEndSchema = z.object({
  type: z.literal('run-end'),
  endedAt: z.string(),
  durationMs: z.number().nonnegative(),
  rounds: z.number().int().nonnegative(),
  usage: usageSchema,
  termination: z.object({ reason: terminationReasonSchema, detail: z.string() }),
  answer: z.string().nullable(),
});

export const traceRecordSchema = z.discriminatedUnion('type', [
  runStartSchema,
  workspaceProfileRecordSchema,
  modelTurnSchema,
  stepSchema,
  executionSchema,
  artifactSchema,
  noticeSchema,
  runEndSchema,
]);
export type TraceRecord = z.infer<typeof traceRecordSchema>;
export type RunStartRecord = z.infer<typeof runStartSchema>;
export type StepRecord = z.infer<typeof stepSchema>;
export type ExecutionRecord = z.infer<typeof executionSchema>;
export type ArtifactRecord = z.infer<typeof artifactSchema>;
export type NoticeRecord = z.infer<typeof noticeSchema>;
export type RunEndRecord = z.infer<typeof runEndSchema>;
export type ModelTurnRecord = z.infer<typeof modelTurnSchema>;

/** `trace.json`: the whole trace in one document. `trace.jsonl` holds the same records a line each. */
export const traceDocumentSchema = z.object({
  version: z.literal(TRACE_VERSION),
  records: z.array(traceRecordSchema),
});
export type TraceDocument = z.infer<typeof traceDocumentSchema>;
