import type { Readable, Writable } from 'node:stream';
import type { SandboxBackendName, SandboxLimits, SandboxRuntimeName } from './sandbox.ts';

/**
 * A running kernel supervisor, wherever it runs: the host writes JSON lines to
 * its stdin and reads them from its stdout. A backend (Docker, a local
 * process) only has to start one and take it down again.
 */
export interface KernelProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** The supervisor's diagnostics (never the protocol). */
  readonly stderr: Readable;
  /** For messages: the container id or the process id. */
  readonly description: string;
  /** The image the container runs; absent where there is none (the local backend). */
  readonly image?: string;
  /** The OCI runtime the container runs under; absent where there is none (the local backend). */
  readonly runtime?: SandboxRuntimeName;
  /** Stops the supervisor and removes what the backend created. Safe to call twice. */
  dispose(): Promise<void>;
}

export interface KernelStartRequest {
  sessionId: string;
  image: string;
  limits: SandboxLimits;
  /** The OCI runtime, for backends that have one (Docker). Default `runc`. */
  runtime?: SandboxRuntimeName;
  signal?: AbortSignal;
}

export interface SandboxBackend {
  readonly name: SandboxBackendName;
  /** Starts a supervisor; on failure (or abort) nothing is left behind. */
  start(request: KernelStartRequest): Promise<KernelProcess>;
}
