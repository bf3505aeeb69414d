export { analyze, streamAnalysis } from './analyze.ts';
export type { AnalyzeOptions, SandboxFactory } from './analyze-options.ts';
export { profileWorkspace } from './profile-workspace.ts';
export type { ProfileWorkspaceOptions } from './profile-workspace.ts';
export type { AgentEvent, AnalysisResult, RunError, TurnResult, ReplaySummary } from './events.ts';
export { Thread, ThreadTurn, openThread, resumeThread } from './thread/index.ts';
export { countNumbers, rerunAnalysis } from './rerun/index.ts';
export type {
  RerunOptions,
  RerunResult,
  RerunCell,
  NumberUpdate,
  NumberUpdateStatus,
} from './rerun/index.ts';
export type {
  ThreadOptions,
  ResumeThreadOptions,
  AskOptions,
  ThreadSummary,
  ThreadSandboxState,
} from './thread/index.ts';
export type { ChatRole, ChatMessage, ModelRequest, ModelChunk, LanguageModel } from './language-model.ts';
export { createOpenAIChatModel, closingTagToAppend } from './openai-chat-model.ts';
export type { OpenAIChatModelOptions } from './openai-chat-model.ts';
export { defaultRetryPolicy } from './retry-policy.ts';
export type { RetryPolicy } from './retry-policy.ts';
export {
  chatProfile,
  deepAnalyzeProfile,
  deepAnalyzeExtraBody,
  deepAnalyzeTemperature,
  chatSystemPrompt,
  resolveModelProfile,
  executeMessages,
} from './model-profile.ts';
export type { ModelProfile, ModelProfileName } from './model-profile.ts';
export { createTagParser, parseSteps, tagOf } from './tag-parser.ts';
export type { TagParser, ParsedStep, ParsedStepKind, ParserEvent } from './tag-parser.ts';
export { stripCodeFence } from './code-fence.ts';
export {
  answered,
  asked,
  roundCountIs,
  deadlinePassed,
  contextBudgetSpent,
  noProgressFor,
  sameFailureRepeated,
  failed,
  defaultStopConditions,
  firstStop,
} from './stop-conditions.ts';
export type { StopCondition, StopDecision, LoopState } from './stop-conditions.ts';
export { formatExecuteText, capMiddle } from './execute-text.ts';
export { askUnansweredReply } from './model-notes.ts';
export type { ExecuteTextOptions } from './execute-text.ts';
export { estimateTokens } from './context-budget.ts';
export { hashWorkspaceFiles } from './input-files.ts';
export { formatFirstMessage, formatFileSize, parseDataSection, parseInstruction } from './first-message.ts';
export { diffInputFiles, formatWorkspaceChangeNote, readWorkspaceChangeNotes } from './workspace-change.ts';
export type { WorkspaceChange, WorkspaceChangeNote } from './workspace-change.ts';
export { createOfflineAnalyst, OFFLINE_ANALYST_ID } from './offline-analyst/index.ts';
export type { OfflineAnalystOptions } from './offline-analyst/index.ts';
// For the deep analysis (src/deep), which builds on threads as any caller would.
export { newRunId } from './run-metadata.ts';
export { assertRunFolderIsFree, claimRunFolder, withRunFolderLeftOut } from './thread/run-folder.ts';
export { assertRunOptionsWith, optionValue } from './options-schema.ts';
export { noDataDecision } from './no-data.ts';
