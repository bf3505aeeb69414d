import type { DatalystError } from '../errors/index.ts';
import type { CellResult } from '../sandbox/cell-result.ts';
import type { WorkspaceProfile } from '../sandbox/workspace-profile.ts';
import type { NoticeKind, StepKind, TerminationReason, Usage } from '../trace/schema.ts';

/** What `analyze()` returns and `run-end` carries. */
export interface AnalysisResult {
  runId: string;
  /** The run folder: trace.jsonl, artifacts/, and the report once rendered. */
  outDir: string;
  tracePath: string;
  answer: string | null;
  termination: { reason: TerminationReason; detail: string };
  rounds: number;
  usage: Usage;
  durationMs: number;
}

/**
 * The streaming form of a run: a discriminated union with noun-verb names.
 * Errors travel as events too; the stream always ends with `run-end`.
 */
export type AgentEvent =
  | { type: 'run-start'; runId: string; outDir: string; instruction: string; modelId: string }
  | { type: 'profile-end'; profile: WorkspaceProfile }
  | { type: 'round-start'; round: number }
  | { type: 'text-delta'; round: number; tag: StepKind; text: string }
  /** The model request broke after text had streamed; the turn starts over and its earlier deltas are void. */
  | { type: 'turn-restart'; round: number; reason: string }
  | { type: 'step-end'; round: number; kind: StepKind; text: string; closed: boolean }
  | { type: 'code-end'; round: number; code: string }
  | { type: 'execution-start'; round: number; outputId: string; code: string }
  | { type: 'execution-end'; round: number; outputId: string; result: CellResult }
  | { type: 'artifact-saved'; outputId: string | null; path: string; sizeBytes: number }
  | { type: 'notice'; round: number; kind: NoticeKind; text: string }
  | { type: 'answer-end'; round: number; answer: string }
  | { type: 'run-end'; result: AnalysisResult }
  | { type: 'error'; error: DatalystError };
