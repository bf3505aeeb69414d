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
  ThreadStateError,
} from './datalyst-error.ts';
export type { Fault, DatalystErrorOptions } from './datalyst-error.ts';
