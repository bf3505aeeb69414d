import { z } from 'zod';
import { cellResultSchema, chartSchema, figureSchema } from '../sandbox/cell-result.ts';
import { workspaceProfileSchema } from '../sandbox/workspace-profile.ts';

/**
 * The trace: the one record of a run. Written by src/agent as JSON lines while
 * the run goes on (a crash leaves everything up to the crash), read by
 * src/report to render a report at any time. Bump TRACE_VERSION on any change
 * that an older reader could misread.
 */
export const TRACE_VERSION = 2;

/**
 * Versions a reader accepts. Version 1 (one question per run) has no turn
 * records: everything belongs to one turn whose question is the instruction.
 * Version 2 adds turns (`turn-start`, `turn-end`), replays of a resumed
 * thread (`replay`), the model's questions (`ask` steps, `asked` turns) and
 * cells stopped by a cancel (`cancelled`, with what they printed so far).
 * Later additions to version 2 (`workspace-change`, the `workspace` notice)
 * did not bump it: a reader older than them refuses a trace that holds one
 * (a record it does not know fails its schema) and never misreads it, and
 * every trace without one stays readable by it.
 */
export const traceVersionSchema = z.union([z.literal(1), z.literal(2)]);
export type TraceVersion = z.infer<typeof traceVersionSchema>;

export const stepKindSchema = z.enum(['analyze', 'understand', 'code', 'answer', 'ask', 'text']);
export type StepKind = z.infer<typeof stepKindSchema>;

export const terminationReasonSchema = z.enum([
  'answered',
  /** The model asked the user a question (`<Ask>`); the next turn's question is the reply. */
  'asked',
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
  /** A re-run (`datalyst rerun`): a recorded cell that had run failed on the new data; later cells were not run. */
  'rerun-cell-failed',
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
  version: traceVersionSchema,
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
    /**
     * The OCI runtime of the Docker session (`runc`, `runsc` for gVisor); absent
     * for the local backend and in traces written before it was recorded.
     */
    runtime: z.string().max(100).optional(),
  }),
  /**
   * Set when this run re-executed the recorded cells of an earlier run on new
   * data (`datalyst rerun`, src/agent/rerun): which run, where, and the SHA-256
   * of its trace as read. Absent in every other trace.
   */
  rerunOf: z
    .object({
      runId: z.string(),
      /** The earlier run folder, as an absolute path. */
      runDir: z.string(),
      /** SHA-256 of the earlier run's trace file (`trace.jsonl`, else `trace.json`). */
      traceSha256: z.string().regex(/^[0-9a-f]{64}$/),
      /** The earlier run's workspace folder. */
      workspacePath: z.string(),
    })
    .optional(),
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
  /** `cancelled`: the turn was stopped while the cell ran; stdout and stderr hold what it printed until then. */
  status: z.union([cellResultSchema.shape.status, z.literal('cancelled')]),
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
export const noticeKindSchema = z.enum([
  'nudge',
  'compaction',
  'retry',
  'final-answer-request',
  'warning',
  /** The fixed reply to an `<Ask>` when nobody can answer (a one-shot run). */
  'ask-reply',
  /** What a resumed thread's replay found (outputs that differ from the record). */
  'replay',
  /** What a re-run on new data did: cells run, numbers of the answer updated or stale. */
  'rerun',
  /** Files of a thread's workspace came, changed or went between questions (the `workspace-change` record). */
  'workspace',
]);
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

/**
 * A question of a thread begins. Records after it (up to the next
 * `turn-start`) belong to this turn; round numbers go on across turns.
 * Records before the first `turn-start` belong to turn 1 (all of a version 1 trace).
 */
export const turnStartSchema = z.object({
  type: z.literal('turn-start'),
  turn: z.number().int().positive(),
  at: z.string(),
  question: z.string(),
  /** True when the question is the user's reply to the model's `<Ask>`. */
  replyToAsk: z.boolean(),
});

/** A turn ended, with its own named termination. */
export const turnEndSchema = z.object({
  type: z.literal('turn-end'),
  turn: z.number().int().positive(),
  at: z.string(),
  /** Rounds of this turn. */
  rounds: z.number().int().nonnegative(),
  usage: usageSchema,
  durationMs: z.number().nonnegative(),
  termination: z.object({ reason: terminationReasonSchema, detail: z.string() }),
  answer: z.string().nullable(),
  /** The model's question when the turn ended `asked`. */
  ask: z.string().nullable(),
});

/**
 * A thread resumed in a fresh sandbox: its recorded cells were run again in
 * order, and outputs that differ from the record are named (also told to the
 * model). Cells that had timed out, crashed, run out of memory or been
 * cancelled are skipped.
 */
export const replaySchema = z.object({
  type: z.literal('replay'),
  at: z.string(),
  cells: z.number().int().nonnegative(),
  replayed: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  mismatches: z.array(z.object({ outputId: z.string(), detail: z.string() })),
  skipped: z.array(z.object({ outputId: z.string(), detail: z.string() })),
});

/**
 * A thread's workspace changed between questions: when its sandbox opened
 * again (after a release, a failure, or a resume) the files differed from
 * the inputs known so far (run-start's, then each earlier change's). The
 * files are listed with size and SHA-256 as run-start lists them: `added`
 * and `changed` as they are now, `removed` as they were. It follows the
 * `workspace-profile` of the whole workspace made when the sandbox opened
 * again, and comes before the next question's `turn-start`.
 */
export const workspaceChangeSchema = z.object({
  type: z.literal('workspace-change'),
  at: z.string(),
  added: z.array(inputFileSchema),
  changed: z.array(inputFileSchema),
  removed: z.array(inputFileSchema),
});

export const traceRecordSchema = z.discriminatedUnion('type', [
  turnStartSchema,
  turnEndSchema,
  replaySchema,
  workspaceChangeSchema,
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
export type TurnStartRecord = z.infer<typeof turnStartSchema>;
export type TurnEndRecord = z.infer<typeof turnEndSchema>;
export type ReplayRecord = z.infer<typeof replaySchema>;
export type WorkspaceChangeRecord = z.infer<typeof workspaceChangeSchema>;

/** `trace.json`: the whole trace in one document. `trace.jsonl` holds the same records a line each. */
export const traceDocumentSchema = z.object({
  version: traceVersionSchema,
  records: z.array(traceRecordSchema),
});
export type TraceDocument = z.infer<typeof traceDocumentSchema>;
