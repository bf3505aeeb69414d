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
} from './deep-roles.ts';
export { DEEP_RECORD_FILE, writeDeepRecord, readDeepRecord } from './deep-record.ts';
export { createOfflineDeepRoles } from './offline-roles.ts';
export type { OfflineDeepRolesOptions } from './offline-roles.ts';
