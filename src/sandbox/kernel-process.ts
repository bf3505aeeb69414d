import type { Readable, Writable } from 'node:stream';
import type { SandboxBackendName, SandboxLimits, SandboxRuntimeName } from './sandbox.ts';
import type { WorkspaceFile } from './workspace-files.ts';

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
  /**
   * Present when the backend gives the kernel the workspace itself, read-only
   * (a bind mount or a volume); absent when the caller copies it in through
   * the protocol (`write-file`).
   */
  readonly inputs?: InputDelivery;
  /** Stops the supervisor and removes what the backend created. Safe to call twice. */
  dispose(): Promise<void>;
}

/** How the workspace reaches a kernel read-only, outside its memory. */
export interface InputDelivery {
  /** `bind`: the host folder itself, mounted; `volume`: a volume the host filled over the Engine API. */
  readonly transfer: 'bind' | 'volume';
  /**
   * Resolves once every file is in place: at once for a bind mount; after the
   * copy into the volume, which started with the container. `files` is needed
   * only for a start asked with `workspace: 'later'` (the warm pool).
   */
  deliver(files?: readonly WorkspaceFile[], signal?: AbortSignal): Promise<void>;
}

/** The workspace as listed on the host (regular, readable files, by relative path). */
export interface InputWorkspace {
  dir: string;
  files: readonly WorkspaceFile[];
  /** Folders of `dir` (relative, `/`-separated) left out of `files`: a bind mount of `dir` must hide them too. */
  excludeDirs?: readonly string[];
}

export interface KernelStartRequest {
  sessionId: string;
  image: string;
  limits: SandboxLimits;
  /** The OCI runtime, for backends that have one (Docker). Default `runc`. */
  runtime?: SandboxRuntimeName;
  /**
   * The workspace, for a backend that mounts it (see `KernelProcess.inputs`);
   * `'later'`: make room for one that comes after the start (the warm pool).
   */
  workspace?: InputWorkspace | 'later';
  signal?: AbortSignal;
}

export interface SandboxBackend {
  readonly name: SandboxBackendName;
  /** Starts a supervisor; on failure (or abort) nothing is left behind. */
  start(request: KernelStartRequest): Promise<KernelProcess>;
}
