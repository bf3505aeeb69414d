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
} from './datalyst-error.ts';
export type { Fault, DatalystErrorOptions } from './datalyst-error.ts';
