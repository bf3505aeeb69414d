import { z } from 'zod';
import { cellResultSchema, chartSchema, figureSchema } from '../sandbox/cell-result.ts';
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
  /** No file of the workspace could be read (empty, binary, encrypted, unsupported): nothing to analyse. */
  'no-data',
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

/**
 * A figure or chart the trace does not keep, because the run's cap on figure
 * bytes in the trace was spent (see the agent's `maxTraceFigureBytes`): the
 * kernel's metadata stays, in its place in the list, the image or spec does
 * not. Readers older than this field see an empty (invalid) PNG or an empty
 * spec and leave it out.
 */
const omittedOutput = {
  omitted: z.literal(true),
  /** Bytes it would have taken in the trace: base64 characters of the PNG, or the spec's JSON. */
  sizeBytes: z.number().int().nonnegative(),
};
export const omittedFigureSchema = figureSchema.extend({ dataBase64: z.literal(''), ...omittedOutput });
export const omittedChartSchema = chartSchema.extend({
  spec: z.record(z.string(), z.unknown()).refine((spec) => Object.keys(spec).length === 0, 'not empty'),
  ...omittedOutput,
});
export type OmittedFigure = z.infer<typeof omittedFigureSchema>;
export type OmittedChart = z.infer<typeof omittedChartSchema>;

/** A cell result as the trace keeps it: the sandbox's, with figures and charts that may be omitted. */
export const traceCellResultSchema = cellResultSchema.extend({
  // The omitted form first: a union takes the first member that matches.
  figures: z.array(z.union([omittedFigureSchema, figureSchema])),
  charts: z.array(z.union([omittedChartSchema, chartSchema])),
});
export type TraceCellResult = z.infer<typeof traceCellResultSchema>;

export const executionSchema = z.object({
  type: z.literal('execution'),
  round: z.number().int().positive(),
  at: z.string(),
  /** Short id shown in reports and used to ground the answer's numbers, e.g. `E3`. */
  outputId: z.string(),
  code: z.string(),
  result: traceCellResultSchema,
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
export const noticeKindSchema = z.enum(['nudge', 'compaction', 'retry', 'final-answer-request', 'warning']);
export type NoticeKind = z.infer<typeof noticeKindSchema>;

export const noticeSchema = z.object({
  type: z.literal('notice'),
  at: z.string(),
  round: z.number().int().nonnegative(),
  kind: noticeKindSchema,
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
