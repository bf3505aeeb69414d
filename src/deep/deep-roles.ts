import type { LanguageModel, TurnResult } from '../agent/index.ts';
import type { WorkspaceProfile } from '../sandbox/index.ts';
import type { ExecutionRecord } from '../trace/index.ts';
import type { Brief, DeepSummary, EvidenceItem, OutlineSection, SubQuestion } from './deep-schema.ts';

/**
 * The parts of a deep analysis that think. Two implementations: one asks a
 * language model (each role its own prompt, its reply parsed by zod), one is
 * the offline analyst's deterministic version. The engine (`deep-analysis.ts`)
 * does the rest — ids, sandboxes, parallelism, grounding, budgets, records —
 * the same way for both, so the machinery is tested without any model.
 */
export interface DeepRoles {
  /** For the record and the report. */
  readonly modelId: string;
  readonly offline: boolean;

  /** Step 1. A brief from the question and the workspace profile, or a question to the user first (threads only). */
  scope(input: ScopeInput, context: RoleContext): Promise<{ brief: Brief } | { ask: string }>;

  /** Step 2. Sub-questions from the brief (at most `maxSubAnalyses`); the engine numbers them. */
  supervise(input: SuperviseInput, context: RoleContext): Promise<SubQuestionDraft[]>;

  /** The model of one sub-analyst: the ordinary tag loop runs with it in its own sandbox session. */
  subAnalystModel(subQuestion: SubQuestion): LanguageModel;

  /**
   * The sub-analyst's findings as evidence drafts. `askFollowUp` asks the
   * sub-analyst's own thread (same kernel, same context) — the model roles
   * ask it to compress its findings; the offline roles read the executions.
   */
  compress(input: CompressInput, context: RoleContext): Promise<EvidenceDraft[]>;

  /** Step 4. Sections citing evidence ids, and gaps to send sub-analysts after (ignored on the last planning round). */
  plan(input: PlanInput, context: RoleContext): Promise<OutlineDraft>;

  /** Step 5. One section's markdown, citing evidence as `[EV3]`; it sees only the evidence that section cites. */
  write(input: WriteInput, context: RoleContext): Promise<string>;

  /**
   * Last, optional: what the report says first — the key findings that answer the question (citing
   * evidence), what could not be answered and why, the limits of how the run was made. A role without
   * it leaves the record without a summary.
   */
  summarize?(input: SummarizeInput, context: RoleContext): Promise<DeepSummary>;
}

export interface SummarizeInput {
  brief: Brief;
  evidence: readonly EvidenceItem[];
  /** The outline's sections, in order. */
  sections: readonly OutlineSection[];
}

export interface RoleContext {
  signal: AbortSignal;
  /** Tokens a role's model call used (the run's token budget counts them). */
  onUsage(usage: { promptTokens: number; completionTokens: number }): void;
}

export interface ScopeInput {
  question: string;
  profile: WorkspaceProfile;
  /** True in a thread, where the scope step may `<Ask>` the user first. */
  mayAsk: boolean;
}

export interface SuperviseInput {
  brief: Brief;
  profile: WorkspaceProfile;
  maxSubAnalyses: number;
}

export interface SubQuestionDraft {
  question: string;
  tables: string[];
}

export interface CompressInput {
  subQuestion: SubQuestion;
  /** The sub-analysis turn's result (its answer may be null when it did not finish). */
  result: TurnResult;
  /** Every execution of the sub-analysis so far, as recorded in its trace (output ids `E1`…, local to it). */
  executions: readonly ExecutionRecord[];
  askFollowUp(question: string): Promise<TurnResult>;
}

/** A finding before the engine gives it an id and grounds its numbers. Output ids are the sub-analysis's own (`E3`). */
export interface EvidenceDraft {
  claim: string;
  outputs: string[];
  /** `E3#figure0`, `E4#chart1`. */
  figures: string[];
}

export interface PlanInput {
  brief: Brief;
  evidence: readonly EvidenceItem[];
  /** 1 for the first outline. */
  round: number;
  /** When round equals it, gaps are ignored: the outline is final. */
  maxRounds: number;
}

export interface OutlineDraft {
  sections: Omit<OutlineSection, 'id'>[];
  gaps: SubQuestionDraft[];
}

export interface WriteInput {
  brief: Brief;
  section: OutlineSection;
  /** Only the evidence the section cites. */
  evidence: readonly EvidenceItem[];
}
