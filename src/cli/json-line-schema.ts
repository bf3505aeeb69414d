import { z } from 'zod';
import { cellResultSchema, figureSchema } from '../sandbox/cell-result.ts';
import { workspaceProfileSchema } from '../sandbox/workspace-profile.ts';
import {
  deepRecordSchema,
  deepTerminationReasonSchema,
  evidenceItemSchema,
  outlineSchema,
  subAnalysisRecordSchema,
  subQuestionSchema,
  writtenSectionSchema,
} from '../deep/deep-schema.ts';
import { noticeKindSchema, stepKindSchema, terminationReasonSchema, usageSchema } from '../trace/schema.ts';

/**
 * The shape of every line `--json` writes, as scripts read it: the agent's
 * events (figure bytes left out, errors as plain objects) and the CLI's own
 * lines, each with the time it was written and the version of this format.
 * `schemas/json-lines.schema.json` is generated from it (scripts/schemas.ts);
 * test/cli/json-line-schema.test.ts checks that it covers every event.
 */

/** Raised when a line changes in a way a script reading the old one would misread. */
export const JSON_LINES_SCHEMA_VERSION = 1;

const base = {
  /** When the line was written, ISO 8601 in UTC. */
  time: z.iso.datetime(),
  schemaVersion: z.literal(JSON_LINES_SCHEMA_VERSION),
};

const serializedErrorSchema = z.object({
  name: z.string(),
  code: z.string(),
  message: z.string(),
  fix: z.string(),
  fault: z.enum(['user', 'system', 'third-party', 'internal']),
});

/** `RunError`: the error that ended a run or turn (`sandbox-failure`, `model-unavailable`), on its result; absent otherwise. */
const runErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  fix: z.string(),
  fault: z.enum(['user', 'system', 'third-party', 'internal']),
  cause: z.string().nullable(),
});

// The image bytes stay in the trace and the report.
const jsonCellResultSchema = cellResultSchema.extend({
  figures: z.array(figureSchema.omit({ dataBase64: true })),
});

const analysisResultSchema = z.object({
  runId: z.string(),
  outDir: z.string(),
  tracePath: z.string(),
  answer: z.string().nullable(),
  termination: z.object({ reason: terminationReasonSchema, detail: z.string() }),
  error: runErrorSchema.optional(),
  rounds: z.number(),
  usage: usageSchema,
  durationMs: z.number(),
});

const turnResultSchema = z.object({
  turn: z.number(),
  question: z.string(),
  answer: z.string().nullable(),
  ask: z.string().nullable(),
  termination: z.object({ reason: terminationReasonSchema, detail: z.string() }),
  error: runErrorSchema.optional(),
  rounds: z.number(),
  usage: usageSchema,
  durationMs: z.number(),
  outputIds: z.array(z.string()),
  artifacts: z.array(z.object({ outputId: z.string().nullable(), path: z.string(), sizeBytes: z.number() })),
});

const cellNoteSchema = z.object({ outputId: z.string(), detail: z.string() });
const replaySummarySchema = z.object({
  cells: z.number(),
  replayed: z.number(),
  mismatches: z.array(cellNoteSchema),
  skipped: z.array(cellNoteSchema),
  durationMs: z.number(),
});

const line = <Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape) =>
  z.object({ type: z.literal(type), ...base, ...shape });

export const agentEventLineSchemas = [
  line('run-start', { runId: z.string(), outDir: z.string(), instruction: z.string(), modelId: z.string() }),
  line('profile-end', { profile: workspaceProfileSchema }),
  line('round-start', { round: z.number() }),
  line('text-delta', { round: z.number(), tag: stepKindSchema, text: z.string() }),
  line('turn-restart', { round: z.number(), reason: z.string() }),
  line('step-end', { round: z.number(), kind: stepKindSchema, text: z.string(), closed: z.boolean() }),
  line('code-end', { round: z.number(), code: z.string() }),
  line('execution-start', { round: z.number(), outputId: z.string(), code: z.string() }),
  line('execution-output', {
    round: z.number(),
    outputId: z.string(),
    stream: z.enum(['stdout', 'stderr']),
    text: z.string(),
  }),
  line('execution-end', { round: z.number(), outputId: z.string(), result: jsonCellResultSchema }),
  line('ask', { round: z.number(), question: z.string(), reply: z.string().nullable() }),
  line('turn-start', { turn: z.number(), question: z.string(), replyToAsk: z.boolean() }),
  line('turn-end', { result: turnResultSchema }),
  line('replay-start', { cells: z.number() }),
  line('replay-end', { summary: replaySummarySchema }),
  line('artifact-saved', { outputId: z.string().nullable(), path: z.string(), sizeBytes: z.number() }),
  line('notice', { round: z.number(), kind: noticeKindSchema, text: z.string() }),
  line('answer-end', { round: z.number(), answer: z.string() }),
  line('run-end', { result: analysisResultSchema }),
  line('error', { error: serializedErrorSchema }),
] as const;

/** The events of `analyze --deep` (`DeepEvent`): phases, sub-analyses, evidence, outline, sections. */
export const deepEventLineSchemas = [
  line('deep-start', {
    runId: z.string(),
    outDir: z.string(),
    question: z.string(),
    modelId: z.string(),
    concurrency: z.number(),
  }),
  line('phase-start', {
    phase: z.enum(['profile', 'scope', 'supervise', 'research', 'plan', 'write']),
    round: z.number(),
  }),
  line('sub-analysis-start', { subQuestion: subQuestionSchema, runDir: z.string() }),
  line('sub-analysis-end', { record: subAnalysisRecordSchema }),
  line('evidence-added', {
    subAnalysisId: z.string(),
    items: z.array(evidenceItemSchema),
    dropped: z.array(z.string()),
  }),
  line('outline-end', { outline: outlineSchema, gaps: z.number() }),
  line('section-end', { section: writtenSectionSchema }),
  line('deep-notice', { text: z.string() }),
  line('deep-end', {
    result: z.object({
      runId: z.string(),
      outDir: z.string(),
      recordPath: z.string(),
      termination: z.object({ reason: deepTerminationReasonSchema, detail: z.string() }),
      record: deepRecordSchema,
      durationMs: z.number(),
      error: serializedErrorSchema.nullable(),
    }),
  }),
] as const;

const rerunCellSchema = z.object({
  outputId: z.string(),
  status: z.enum(['ok', 'error', 'timeout', 'memory', 'crashed', 'output-limit', 'cancelled', 'not-run']),
  recordedStatus: z.string(),
  detail: z.string().nullable(),
});

export const cliLineSchemas = [
  line('workspace-check', {
    dir: z.string(),
    excluded: z.array(z.string()),
    totalBytes: z.number(),
    dataFiles: z.array(z.string()),
    skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  }),
  /** A step before the run: the Docker engine checked, the image ready, the model endpoint answered. */
  line('preflight', { step: z.string(), detail: z.string() }),
  /** `datalyst rerun`, after run-end: what became of each recorded cell and each number of the earlier answer. */
  line('rerun-summary', {
    rerunOf: z.object({ runId: z.string(), runDir: z.string(), traceSha256: z.string() }),
    cells: z.array(rerunCellSchema),
    failedCell: rerunCellSchema.nullable(),
    answerSource: z.enum(['carried-over', 'rewritten', 'none']),
    numbers: z.array(
      z.object({
        status: z.enum(['updated', 'unchanged', 'stale', 'not-grounded', 'sign-changed']),
        oldText: z.string(),
        newText: z.string(),
        outputId: z.string().nullable(),
        label: z.string().nullable(),
        reason: z.string().nullable(),
      }),
    ),
  }),
  line('report-end', {
    outDir: z.string(),
    files: z.array(z.object({ format: z.string(), path: z.string() })),
  }),
  line('cli-error', {
    error: serializedErrorSchema.omit({ name: true }),
    exitCode: z.number().int(),
  }),
] as const;

export const jsonLineSchema = z
  .discriminatedUnion('type', [...agentEventLineSchemas, ...deepEventLineSchemas, ...cliLineSchemas])
  .meta({
    title: 'Datalyst --json line',
    description:
      'One line of `datalyst analyze --json` (or `rerun --json`) output: an agent event, a deep-analysis event (`--deep`) or a line of the CLI, with time and schemaVersion.',
  });
export type JsonLine = z.infer<typeof jsonLineSchema>;
