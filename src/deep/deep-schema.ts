import { z } from 'zod';

/**
 * The records of a deep analysis (`analyze --deep`): the brief, the
 * sub-analyses, the evidence bank, the outline and the written sections.
 * Written to `deep.json` in the deep run's folder; each sub-analysis is an
 * ordinary run folder of its own under `sub/<id>/` (a linked trace). Every
 * shape here is read back through these schemas (reports, `datalyst report`).
 *
 * Ids are stable and human-readable: sub-analyses `S1`, `S2`…; evidence
 * `EV1`, `EV2`…; sections `SEC1`…. An output of a sub-analysis is cited as
 * `<sub-analysis id>:<output id>`, e.g. `S2:E4`, because every sub-analysis
 * numbers its outputs from `E1`.
 */

export const DEEP_RECORD_VERSION = 1;

export const subAnalysisIdSchema = z.string().regex(/^S\d+$/);
export const evidenceIdSchema = z.string().regex(/^EV\d+$/);
export const sectionIdSchema = z.string().regex(/^SEC\d+$/);
/** `S2:E4`: output E4 of sub-analysis S2. */
export const citedOutputSchema = z.string().regex(/^S\d+:E\d+$/);

/** Step 1, scope: what the user asked, made precise. */
export const briefSchema = z.object({
  /** The user's instruction, as given. */
  question: z.string(),
  /** The questions the report must answer, each with the tables (workspace file names, or `file#sheet`) it needs. */
  questions: z.array(z.object({ question: z.string().min(1), tables: z.array(z.string()) })).min(1),
  /** What a good answer contains (the writer and planner are held to it). */
  goodAnswer: z.string(),
});

/** Step 2, research: one sub-question for one sub-analyst. */
export const subQuestionSchema = z.object({
  id: subAnalysisIdSchema,
  question: z.string().min(1),
  /** Tables the sub-analyst should look at first (it may read others). */
  tables: z.array(z.string()),
  /** Which planning round asked for it: 0 from the supervisor, 1… from the planner's gaps. */
  round: z.number().int().nonnegative(),
});

/** How one sub-analysis ended; a failed one is reported and does not sink the run. */
export const subAnalysisOutcomeSchema = z.enum([
  /** It answered and its findings were compressed into evidence. */
  'answered',
  /** Its loop ended without an answer (stalled, out of rounds, context budget): what it printed is still evidence-eligible. */
  'incomplete',
  /** Its sandbox or model failed. */
  'failed',
  /** The deep run's deadline or cancel stopped it. */
  'cancelled',
  /** Never started: the run's budget of sub-analyses or its deadline was reached. */
  'skipped',
]);

export const subAnalysisRecordSchema = z.object({
  id: subAnalysisIdSchema,
  question: z.string(),
  tables: z.array(z.string()),
  round: z.number().int().nonnegative(),
  outcome: subAnalysisOutcomeSchema,
  /** The sub-analysis loop's own termination reason (as in its trace), when it ran. */
  termination: z.string().nullable(),
  /** One sentence for the report: what happened. */
  detail: z.string(),
  /** The run folder of the sub-analysis, relative to the deep run's folder (e.g. `sub/S1`); null when skipped. */
  runDir: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  /** The sub-analyst's final answer, when it gave one. */
  answer: z.string().nullable(),
  evidenceIds: z.array(evidenceIdSchema),
  /**
   * Why a skipped sub-analysis never started: the budget of sub-analyses was spent, or the run was
   * stopping (a cancel, the deadline, the token budget). Absent when it ran, and from older records.
   */
  skipReason: z.enum(['budget', 'cancelled', 'deadline', 'token-budget']).optional(),
});

/** A number an evidence item states, checked against the outputs it cites. */
export const evidenceNumberSchema = z.object({
  /** As written, e.g. `1,194` or `24.5%`. */
  text: z.string(),
  /** The cited output that printed it, when found there; null when not found (unverified: flagged, not dropped). */
  output: citedOutputSchema.nullable(),
  verified: z.boolean(),
});

/** Step 3, the evidence bank: one finding under a stable id. */
export const evidenceItemSchema = z.object({
  id: evidenceIdSchema,
  subAnalysisId: subAnalysisIdSchema,
  /** The finding in one or two sentences, numbers included as text. */
  claim: z.string().min(1),
  numbers: z.array(evidenceNumberSchema),
  /** The outputs that printed what the claim rests on. */
  outputs: z.array(citedOutputSchema),
  /** Figures and charts of those outputs that show it: `S1:E3#figure0`, `S1:E3#chart1`. */
  figures: z.array(z.string().regex(/^S\d+:E\d+#(figure|chart)\d+$/)),
});

/** Step 4, the outline: sections that cite evidence. */
export const outlineSectionSchema = z.object({
  id: sectionIdSchema,
  title: z.string().min(1),
  /** What the section must say (the writer's instruction). */
  purpose: z.string(),
  evidenceIds: z.array(evidenceIdSchema),
});

export const outlineSchema = z.object({
  sections: z.array(outlineSectionSchema).min(1),
  /** Planning rounds it took (each may have sent sub-analysts after gaps). */
  rounds: z.number().int().positive(),
});

/** Step 5, a written section: markdown whose claims cite evidence as `[EV3]`. */
export const writtenSectionSchema = z.object({
  id: sectionIdSchema,
  title: z.string(),
  markdown: z.string(),
  /** Evidence ids the text cites; each is one of the section's outline ids. */
  citedEvidenceIds: z.array(evidenceIdSchema),
  /** The section's own numbers, grounded against the outputs of the evidence it was given. */
  numbers: z.array(evidenceNumberSchema),
  /** Set when the writer failed for this section: the section then lists its evidence instead. */
  error: z.string().nullable(),
});

/**
 * What the report says first: the key findings that answer the question (markdown citing evidence as
 * `[EV3]`), what the run could not answer and why, and the limits of how it was made. Written after the
 * sections by a role that can (the offline roles); absent otherwise, and from older records.
 */
export const deepSummarySchema = z.object({
  keyFindings: z.string(),
  cannotAnswer: z.array(z.string()),
  limits: z.string().nullable(),
});

/** How the whole deep run ended (named like the single loop's terminations). */
export const deepTerminationReasonSchema = z.enum([
  /** Sections written. */
  'answered',
  /** Written from what was found when the deadline came (a forced final report). */
  'deadline',
  /** Written after the run's budget of sub-analyses was spent. */
  'max-sub-analyses',
  /** Written after the run's token budget was spent. */
  'token-budget',
  /** The scope step asked the user a question (in a thread); nothing was researched yet. */
  'asked',
  'cancelled',
  /** No sub-analysis produced evidence, or scope/plan failed: nothing to write. */
  'failed',
  /** The workspace had nothing readable. */
  'no-data',
]);

/** A file of the workspace the profile could not read, with the reader's error. */
export const unreadableFileSchema = z.object({ path: z.string(), error: z.string() });

export const deepRecordSchema = z.object({
  type: z.literal('deep-analysis'),
  version: z.literal(DEEP_RECORD_VERSION),
  runId: z.string(),
  question: z.string(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  model: z.object({ id: z.string(), offline: z.boolean() }),
  /** Sub-analyses run at once at most. */
  concurrency: z.number().int().positive(),
  /**
   * The process that writes the record while the run goes on: a record that never ended (`endedAt`
   * null) whose process is gone was stopped (a second Ctrl-C, a kill), not still going. Absent from
   * older records.
   */
  owner: z.object({ pid: z.number().int().positive(), host: z.string() }).optional(),
  /**
   * The files the workspace's profile could not read, recorded when the
   * profile is made (before any sub-analysis, so a run stopped before one
   * still names them). Absent before the profile, and from older records
   * (the report then takes them from a sub-analysis trace's profile).
   */
  unreadableFiles: z.array(unreadableFileSchema).optional(),
  brief: briefSchema.nullable(),
  /** The scope step's question to the user, when it asked one. */
  ask: z.string().nullable(),
  subAnalyses: z.array(subAnalysisRecordSchema),
  evidence: z.array(evidenceItemSchema),
  outline: outlineSchema.nullable(),
  sections: z.array(writtenSectionSchema),
  summary: deepSummarySchema.optional(),
  termination: z.object({ reason: deepTerminationReasonSchema, detail: z.string() }),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int() }),
});

export type Brief = z.infer<typeof briefSchema>;
export type SubQuestion = z.infer<typeof subQuestionSchema>;
export type SubAnalysisOutcome = z.infer<typeof subAnalysisOutcomeSchema>;
export type SubAnalysisRecord = z.infer<typeof subAnalysisRecordSchema>;
export type EvidenceNumber = z.infer<typeof evidenceNumberSchema>;
export type EvidenceItem = z.infer<typeof evidenceItemSchema>;
export type OutlineSection = z.infer<typeof outlineSectionSchema>;
export type Outline = z.infer<typeof outlineSchema>;
export type WrittenSection = z.infer<typeof writtenSectionSchema>;
export type DeepSummary = z.infer<typeof deepSummarySchema>;
export type DeepTerminationReason = z.infer<typeof deepTerminationReasonSchema>;
export type DeepRecord = z.infer<typeof deepRecordSchema>;
