import type { DatalystError } from '../errors/index.ts';
import type { WorkspaceProfile } from '../sandbox/index.ts';
import type {
  DeepRecord,
  DeepTerminationReason,
  EvidenceItem,
  Outline,
  SubAnalysisRecord,
  SubQuestion,
  WrittenSection,
} from './deep-schema.ts';

/** The steps of a deep run, in the order they happen (research and plan repeat for the planner's gaps). */
export type DeepPhase = 'profile' | 'scope' | 'supervise' | 'research' | 'plan' | 'write';

/** What `deepAnalyze` returns and `deep-end` carries. */
export interface DeepAnalysisResult {
  runId: string;
  /** The deep run folder: deep.json, sub/S1/… */
  outDir: string;
  /** `deep.json` in `outDir`. */
  recordPath: string;
  termination: { reason: DeepTerminationReason; detail: string };
  /** The whole record, as written to deep.json. */
  record: DeepRecord;
  durationMs: number;
  /** The failure behind a `failed` ending, when one error caused it (the CLI picks its exit code from it). */
  error: DatalystError | null;
}

/** The streaming form of a deep run: noun-verb names, as the single run's events. Always ends with `deep-end`. */
export type DeepEvent =
  | {
      type: 'deep-start';
      runId: string;
      outDir: string;
      question: string;
      modelId: string;
      concurrency: number;
    }
  | { type: 'phase-start'; phase: DeepPhase; round: number }
  /** The workspace profiled, files that could not be read included: the single run's `profile-end`, same shape. */
  | { type: 'profile-end'; profile: WorkspaceProfile }
  | { type: 'sub-analysis-start'; subQuestion: SubQuestion; runDir: string }
  | { type: 'sub-analysis-end'; record: SubAnalysisRecord }
  | { type: 'evidence-added'; subAnalysisId: string; items: EvidenceItem[]; dropped: string[] }
  | { type: 'outline-end'; outline: Outline; gaps: number }
  | { type: 'section-end'; section: WrittenSection }
  | { type: 'deep-notice'; text: string }
  | { type: 'deep-end'; result: DeepAnalysisResult };
