// The public library API of the `datalyst` package, named one by one: what a
// program needs to run analyses, use the sandbox, render reports, talk to a
// model, handle errors and read events and traces. Everything else (container
// create bodies, formatting helpers, the tag parser, the report's inner steps,
// the CLI's settings) is internal: the folders' own index.ts files name what
// other folders may use, this file names what users may use. README.md
// ("The library") lists it; test/package/ checks it from an installed tarball.

export { VERSION } from './version.ts';

// Analysis: one-shot runs, streamed as typed events.
export { analyze, streamAnalysis } from './agent/analyze.ts';
export type { AnalyzeOptions, SandboxFactory } from './agent/analyze-options.ts';
export type { AgentEvent, AnalysisResult, RunError, TurnResult, ReplaySummary } from './agent/events.ts';

// Threads: a conversation on one workspace, one kernel from question to question.
export { Thread, ThreadTurn, openThread, resumeThread } from './agent/thread/index.ts';
export { profileWorkspace } from './agent/profile-workspace.ts';
export type { ProfileWorkspaceOptions } from './agent/profile-workspace.ts';
export type {
  ThreadOptions,
  ResumeThreadOptions,
  AskOptions,
  ThreadSummary,
  ThreadSandboxState,
} from './agent/thread/index.ts';

// Re-runs: a recorded analysis run again on new data, with no model (or a one-turn rewrite of the answer).
export { rerunAnalysis } from './agent/rerun/index.ts';
export type {
  RerunOptions,
  RerunResult,
  RerunCell,
  NumberUpdate,
  NumberUpdateStatus,
} from './agent/rerun/index.ts';
export type { ExecuteTextOptions } from './agent/execute-text.ts';
export type { FirstMessageLimits } from './agent/first-message.ts';
export {
  answered,
  roundCountIs,
  deadlinePassed,
  contextBudgetSpent,
  noProgressFor,
  sameFailureRepeated,
  failed,
  defaultStopConditions,
  firstStop,
} from './agent/stop-conditions.ts';
export type { StopCondition, StopDecision, LoopState } from './agent/stop-conditions.ts';

// Deep analysis: a brief, parallel sub-analyses, an evidence bank, an outline, sections (deep.json).
export { deepAnalyze, streamDeepAnalysis } from './deep/deep-analysis.ts';
export { createModelDeepRoles } from './deep/model-roles.ts';
export { createOfflineDeepRoles } from './deep/offline-roles.ts';
export type { OfflineDeepRolesOptions } from './deep/offline-roles.ts';
export { DeepRoleError } from './deep/deep-role-error.ts';
export { deepRecordSchema, DEEP_RECORD_VERSION } from './deep/deep-schema.ts';
export { readDeepRecord, DEEP_RECORD_FILE } from './deep/deep-record.ts';
export type { DeepAnalyzeOptions } from './deep/deep-options.ts';
export type { DeepAnalysisResult, DeepEvent, DeepPhase } from './deep/deep-events.ts';
export type {
  DeepRoles,
  RoleContext,
  EvidenceDraft,
  OutlineDraft,
  SubQuestionDraft,
} from './deep/deep-roles.ts';
export type {
  DeepRecord,
  Brief,
  SubQuestion,
  SubAnalysisRecord,
  SubAnalysisOutcome,
  EvidenceItem,
  EvidenceNumber,
  Outline,
  OutlineSection,
  WrittenSection,
  DeepTerminationReason,
} from './deep/deep-schema.ts';

// The model: any OpenAI-compatible endpoint, or the built-in offline analyst.
export type {
  ChatRole,
  ChatMessage,
  ModelRequest,
  ModelChunk,
  LanguageModel,
} from './agent/language-model.ts';
export { createOpenAIChatModel } from './agent/openai-chat-model.ts';
export type { OpenAIChatModelOptions } from './agent/openai-chat-model.ts';
export { defaultRetryPolicy } from './agent/retry-policy.ts';
export type { RetryPolicy } from './agent/retry-policy.ts';
export { chatProfile, deepAnalyzeProfile, resolveModelProfile } from './agent/model-profile.ts';
export type { ModelProfile, ModelProfileName } from './agent/model-profile.ts';
export { createOfflineAnalyst, OFFLINE_ANALYST_ID } from './agent/offline-analyst/index.ts';
export type { OfflineAnalystOptions } from './agent/offline-analyst/index.ts';

// Sandbox sessions: a persistent Python kernel in a hardened container.
export { createSandbox } from './sandbox/create-sandbox.ts';
export { defaultSandboxLimits } from './sandbox/sandbox-limits.ts';
export { createWarmPool } from './sandbox/warm-pool.ts';
export type { AcquireOptions, WarmPool, WarmPoolOptions, WarmPoolStats } from './sandbox/warm-pool.ts';
export { runnerImageTag } from './sandbox/runner-image.ts';
export { LOCAL_BACKEND_WARNING } from './sandbox/local-backend.ts';
export type {
  SandboxBackendName,
  SandboxLimits,
  SandboxOptions,
  SandboxSession,
  ExecuteOptions,
  OutputChunk,
  CollectedFile,
  ReadFilesOptions,
} from './sandbox/sandbox.ts';
export { cellResultSchema } from './sandbox/cell-result.ts';
export type {
  CellStatus,
  CapturedText,
  CellError,
  Figure,
  Chart,
  Table,
  FileChange,
  CellResult,
} from './sandbox/cell-result.ts';
export { workspaceProfileSchema } from './sandbox/workspace-profile.ts';
export type {
  ColumnProfile,
  ReadOptions,
  TableProfile,
  FileFormat,
  FileProfile,
  WorkspaceProfile,
} from './sandbox/workspace-profile.ts';

// Reports: rendered from a run's trace at any time.
export { renderReport, renderRunFolder, allReportFormats } from './report/render-report.ts';
export { renderDeepRunFolder, allDeepReportFormats } from './report/render-deep-report.ts';
export type {
  DeepReportFormat,
  RenderDeepRunFolderOptions,
  RenderedDeepReport,
} from './report/render-deep-report.ts';
export type {
  ReportFormat,
  RenderReportOptions,
  RenderRunFolderOptions,
  RenderedReport,
} from './report/render-report.ts';
export type { ConversationGrounding } from './report/prepared-report.ts';
export type { ReportAudience } from './report/outcome-look.ts';
export { ChartPool } from './report/chart-pool.ts';
export type { ChartPoolOptions, ChartJobOptions } from './report/chart-pool.ts';
export type { RenderedChart } from './report/rendered-chart.ts';
export type { Notebook, NotebookCell, NotebookOutput } from './report/notebook-schema.ts';

// The trace: the one record of a run, versioned.
export { TRACE_VERSION, traceRecordSchema, traceDocumentSchema } from './trace/schema.ts';
export type {
  StepKind,
  TerminationReason,
  Usage,
  InputFile,
  ModelInfo,
  TraceRecord,
  RunStartRecord,
  StepRecord,
  OmittedFigure,
  OmittedChart,
  TraceCellResult,
  NoticeKind,
  ExecutionRecord,
  ArtifactRecord,
  NoticeRecord,
  RunEndRecord,
  ModelTurnRecord,
  TraceDocument,
} from './trace/schema.ts';
export { readTrace } from './trace/reader.ts';
export type { ReadTrace, ReadTraceOptions } from './trace/reader.ts';

// Errors: one base class; a stable code, the fix, whose fault, the cause.
export {
  DatalystError,
  SandboxUnavailableError,
  ImageMissingError,
  SandboxFailureError,
  ModelUnavailableError,
  WorkspaceError,
  ConfigError,
  TraceError,
  CancelledError,
  ChromiumUnavailableError,
  ThreadStateError,
} from './errors/datalyst-error.ts';
export type { Fault, DatalystErrorOptions } from './errors/datalyst-error.ts';

// The config file read by the CLI (`datalyst.config.json`), for tools that write one.
export { configFileSchema } from './config/config-file.ts';
export type { ConfigFile } from './config/config-file.ts';
