export { createSandbox, createSandboxWithBackend } from './create-sandbox.ts';
export { formatCellOutput } from './format-cell-output.ts';
export {
  defaultSandboxLimits,
  isSandboxRuntimeName,
  readSandboxEnvironment,
  resolveSandboxLimits,
} from './sandbox-limits.ts';
export type { InputTransfer } from './sandbox-limits.ts';
export type { SandboxEnvironment } from './sandbox-limits.ts';
export { containerLabels } from './container-labels.ts';
export type { ContainerLabelName } from './container-labels.ts';
export { containerCreateBody, containerPaths, containerUser } from './container-config.ts';
export { createDockerBackend, pingDocker } from './docker-backend.ts';
export type { DockerBackendOptions } from './docker-backend.ts';
export { createLocalBackend, LOCAL_BACKEND_WARNING } from './local-backend.ts';
export type { LocalBackendOptions } from './local-backend.ts';
export { createWarmPool } from './warm-pool.ts';
export type { AcquireOptions, WarmPool, WarmPoolOptions, WarmPoolStats } from './warm-pool.ts';
export { ensureReaperRunning, reapOrphanedContainers, startPeriodicReaper } from './reaper.ts';
export type {
  PeriodicReaper,
  PeriodicReaperOptions,
  ReapOptions,
  ReapReason,
  ReapReport,
  ReapedContainer,
} from './reaper.ts';
export { withExitCleanup } from './exit-cleanup.ts';
export type { KernelProcess, KernelStartRequest, SandboxBackend } from './kernel-process.ts';
export { isSafeWorkspacePath, listWorkspaceFiles } from './workspace-files.ts';
export { escapeControlCharacters, hasControlCharacters } from './path-text.ts';
export type { WorkspaceFile, WorkspaceListLimits } from './workspace-files.ts';
export { runnerImageTag, ensureRunnerImage } from './runner-image.ts';
export { sandboxRuntimeNames } from './sandbox.ts';
export type {
  SandboxBackendName,
  SandboxRuntimeName,
  SandboxLimits,
  SandboxOptions,
  SandboxSession,
  ExecuteOptions,
  OutputChunk,
  CollectedFile,
  ReadFilesOptions,
} from './sandbox.ts';
export {
  cellStatusSchema,
  capturedTextSchema,
  cellErrorSchema,
  figureSchema,
  chartSchema,
  tableSchema,
  tableCellSchema,
  fileChangeSchema,
  cellResultSchema,
} from './cell-result.ts';
export type {
  CellStatus,
  CapturedText,
  CellError,
  Figure,
  Chart,
  Table,
  FileChange,
  CellResult,
} from './cell-result.ts';
export {
  columnProfileSchema,
  readOptionsSchema,
  tableProfileSchema,
  fileFormatSchema,
  fileProfileSchema,
  workspaceProfileSchema,
  mergeProfileParts,
} from './workspace-profile.ts';
export { profileInParts } from './profile-in-parts.ts';
export type {
  ColumnProfile,
  ReadOptions,
  TableProfile,
  FileFormat,
  FileProfile,
  WorkspaceProfile,
  ProfilePart,
} from './workspace-profile.ts';
