export * from './deep-schema.ts';
export type {
  DeepRoles,
  RoleContext,
  ScopeInput,
  SuperviseInput,
  SubQuestionDraft,
  CompressInput,
  EvidenceDraft,
  PlanInput,
  OutlineDraft,
  WriteInput,
  SummarizeInput,
} from './deep-roles.ts';
export { DEEP_RECORD_FILE, writeDeepRecord, readDeepRecord } from './deep-record.ts';
export { deepAnalyze, streamDeepAnalysis } from './deep-analysis.ts';
export { subAnalysisInstruction, subAnalysisOutcome } from './sub-analysis.ts';
export type { DeepAnalyzeOptions } from './deep-options.ts';
export type { DeepAnalysisResult, DeepEvent, DeepPhase } from './deep-events.ts';
export { EvidenceBank } from './evidence-bank.ts';
export type { BankedEvidence } from './evidence-bank.ts';
export { createModelDeepRoles, parseJsonReply, answerText } from './model-roles.ts';
export type { ModelDeepRolesOptions } from './model-roles.ts';
export { DeepRoleError } from './deep-role-error.ts';
export { checkCitations, evidenceListing, fallbackSections, numberSections } from './deep-outline.ts';
export { createOfflineDeepRoles } from './offline-roles.ts';
export type { OfflineDeepRolesOptions } from './offline-roles.ts';
