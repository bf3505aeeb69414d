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
} from './datalyst-error.ts';
export type { Fault, DatalystErrorOptions } from './datalyst-error.ts';
