import type { CellResult } from './cell-result.ts';
import type { ProfilePart, WorkspaceProfile } from './workspace-profile.ts';

export type SandboxBackendName = 'docker' | 'local';

/** The OCI runtimes a Docker session can run under. */
export const sandboxRuntimeNames = ['runc', 'runsc'] as const;
/**
 * `runc`: Linux namespaces and cgroups on the host's kernel (Docker's default).
 * `runsc`: gVisor, a kernel of its own in user space between the cell and the
 * host's kernel; slower to start and at syscalls, for untrusted, multi-tenant use.
 */
export type SandboxRuntimeName = (typeof sandboxRuntimeNames)[number];

/** Limits of one session. Every field has a default; see `defaultSandboxLimits`. */
export interface SandboxLimits {
  /** Wall-clock limit of one cell. Default 120 000 (`DATALYST_CELL_TIMEOUT_MS`). */
  cellTimeoutMs: number;
  /** How long an interrupted cell may take to return before the kernel is restarted. Default 5 000. */
  interruptGraceMs: number;
  /** Memory of the container; swap is not allowed (memory = memory+swap). Default 2048. */
  memoryMb: number;
  /** CPU quota in cores. Default 1.5. */
  cpus: number;
  /** Processes and threads in the container. Default 256. */
  pidsLimit: number;
  /** Bytes of stdout and of stderr kept per cell; more stops the cell with `output-limit`. Default 1 MiB. */
  maxOutputBytes: number;
  /**
   * Size of the writable working directory (tmpfs) for what cells write. The
   * workspace's files are not in it (they are mounted read-only). Default 1024.
   */
  workdirMb: number;
  /** Size of /tmp (tmpfs). Default 256. */
  scratchMb: number;
  /** Largest file a process may write (RLIMIT_FSIZE). Default 512 MiB. */
  maxFileBytes: number;
  /** Open files per process (RLIMIT_NOFILE). Default 1024. */
  maxOpenFiles: number;
  /**
   * Longest life of a session; the container carries it as its deadline label
   * (`org.datalyst.deadline`) so that a reaper can remove it when its owner is
   * gone. Default 6 hours (`DATALYST_SESSION_TIMEOUT_MS`). Optional so that
   * limits written out before it existed stay valid.
   */
  sessionTimeoutMs?: number;
  /**
   * Total size of the workspace's files, checked before a session starts.
   * Default 2048 (`DATALYST_MAX_WORKSPACE_MB`; the CLI's `--max-workspace-mb`).
   * Optional like `sessionTimeoutMs`.
   */
  maxWorkspaceMb?: number;
  /** Files in the workspace, checked before a session starts. Default 10 000 (`DATALYST_MAX_WORKSPACE_FILES`). */
  maxWorkspaceFiles?: number;
}

export interface SandboxOptions {
  /** Default `docker` (`DATALYST_SANDBOX`). `local` runs without any isolation. */
  backend?: SandboxBackendName;
  /**
   * Host folder whose files appear by name in the session's working directory:
   * mounted read-only (or copied into a volume on a remote engine; copied in by
   * the local backend). The original is never written.
   */
  workspaceDir?: string;
  /**
   * Folders of the workspace (relative, `/`-separated) not copied in, e.g.
   * the runs folder of `datalyst analyze .`, so a run never reads its own output.
   * A bind-mounted workspace hides them under an empty read-only tmpfs each.
   */
  excludeDirs?: readonly string[];
  /** Runner image; default the tag computed from `docker/python-runner` (see `runnerImageTag`). */
  image?: string;
  /**
   * OCI runtime of the Docker container (HostConfig.Runtime): `runc` or
   * `runsc` (gVisor, which the engine must have registered: `datalyst setup
   * --gvisor`). Default `runc` (`DATALYST_RUNTIME`). The local backend has none.
   */
  runtime?: SandboxRuntimeName;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
}

/** A piece of what a running cell printed, delivered before the cell ends. */
export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface ExecuteOptions {
  /** Overrides `limits.cellTimeoutMs` for this cell. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Called with what the cell prints while it runs, in order. The kernel
   * coalesces and bounds these chunks (rate and size), so a flood cannot
   * flood the host; the full capped output still arrives in the result.
   * Backends that cannot stream call it never.
   */
  onOutput?: (chunk: OutputChunk) => void;
}

/** A regular file read out of the session's working directory. */
export interface CollectedFile {
  path: string;
  bytes: Uint8Array;
}

export interface ReadFilesOptions {
  /** Total bytes to read at most. Default 64 MiB. */
  maxTotalBytes?: number;
  /** Files to read at most. Default 1 000. */
  maxFiles?: number;
  signal?: AbortSignal;
}

/**
 * One container (or process) with one persistent Python kernel: variables,
 * imports and loaded frames survive from cell to cell.
 */
export interface SandboxSession extends AsyncDisposable {
  readonly id: string;
  readonly backend: SandboxBackendName;
  readonly limits: Readonly<SandboxLimits>;
  /**
   * The runner image of a Docker session, as started (e.g.
   * `datalyst/python-runner:<hash>`); null for the local backend. Optional
   * only so that test doubles written before it still compile.
   */
  readonly image?: string | null;
  /**
   * The OCI runtime of a Docker session (`runc`, `runsc`); null for the local
   * backend. Optional only so that test doubles written before it still compile.
   */
  readonly runtime?: SandboxRuntimeName | null;
  /**
   * Runs one cell. A failing cell is a result, not a throw. Throws
   * `SandboxFailureError` only when the sandbox is gone and cannot be restarted.
   *
   * Cells (and profiles) run one at a time, in the order they were asked for;
   * a call made while another runs waits for it, and its time limits count
   * from when it starts.
   *
   * When the signal aborts, the promise rejects at once with `CancelledError`
   * and the kernel is told to stop the cell in the background: an interrupt
   * first (variables kept), a restart when the cell does not stop within
   * `interruptGraceMs` (then the next result says `stateLost`). The next cell
   * runs once it has stopped; files the cancelled cell wrote are listed in
   * the next result's `files`.
   */
  execute(code: string, options?: ExecuteOptions): Promise<CellResult>;
  /**
   * Profiles every workspace file inside the sandbox, without touching the
   * kernel's variables. Waits its turn like a cell. With `part`, only that
   * part of the files (each format's files dealt evenly by size): sessions
   * profiling one part each share the work, and `mergeProfileParts` makes
   * the whole profile of theirs.
   */
  profileWorkspace(options?: { signal?: AbortSignal; part?: ProfilePart }): Promise<WorkspaceProfile>;
  /** Reads regular files (never links) from the working directory, with byte caps. */
  readFiles(paths: readonly string[], options?: ReadFilesOptions): Promise<CollectedFile[]>;
  /** Stops the kernel and removes the container. Safe to call twice. */
  close(): Promise<void>;
}
