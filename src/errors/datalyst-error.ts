/**
 * Who has to act for a failure to go away. The CLI picks its exit code and the
 * tone of its message from this.
 * - `user`: bad input or configuration; the message says what to change.
 * - `system`: this machine (Docker missing, image not built, disk full).
 * - `third-party`: a service we call (the model endpoint).
 * - `internal`: a bug in Datalyst.
 */
export type Fault = 'user' | 'system' | 'third-party' | 'internal';

export interface DatalystErrorOptions {
  /** What the person should do about it, as one sentence. */
  fix: string;
  fault: Fault;
  cause?: unknown;
}

const marker = Symbol.for('datalyst.error');

/**
 * The one base class. Every failure Datalyst reports carries a stable `code`
 * (never match on message text), a `fix`, a `fault` and the original `cause`.
 */
export class DatalystError extends Error {
  readonly [marker] = true;
  readonly code: string;
  readonly fix: string;
  readonly fault: Fault;

  constructor(code: string, message: string, options: DatalystErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.fix = options.fix;
    this.fault = options.fault;
  }

  /** Works across copies of the package (instanceof does not). */
  static isInstance(value: unknown): value is DatalystError {
    return typeof value === 'object' && value !== null && marker in value;
  }
}

/** Docker (or the local Python) cannot be reached or refuses to run the session. */
export class SandboxUnavailableError extends DatalystError {
  constructor(message: string, options: Omit<DatalystErrorOptions, 'fault'> & { fault?: Fault }) {
    super('SANDBOX_UNAVAILABLE', message, { fault: 'system', ...options });
  }
}

/** The runner image is missing or was built from other inputs. */
export class ImageMissingError extends DatalystError {
  constructor(
    readonly image: string,
    cause?: unknown,
  ) {
    super('IMAGE_MISSING', `The runner image ${image} is not built.`, {
      fault: 'system',
      // Not `npm run demo`: that is a script of the repository, not of a project that installed the package.
      fix: 'Run `datalyst setup` to build the runner image. An image of your own (DATALYST_IMAGE, sandbox.image) is yours to build: setup builds only the one Datalyst ships.',
      cause,
    });
  }
}

/** The sandbox broke during a session (container gone, protocol violated). */
export class SandboxFailureError extends DatalystError {
  constructor(message: string, options: { fix?: string; cause?: unknown } = {}) {
    super('SANDBOX_FAILURE', message, {
      fault: 'system',
      fix: options.fix ?? 'Run `datalyst doctor`; if the Docker engine restarted, run the analysis again.',
      cause: options.cause,
    });
  }
}

/** The model endpoint could not be used (after retries), or the model does not exist. */
export class ModelUnavailableError extends DatalystError {
  constructor(
    message: string,
    options: { fix: string; cause?: unknown; status?: number },
    readonly status?: number,
  ) {
    super('MODEL_UNAVAILABLE', message, { fault: 'third-party', fix: options.fix, cause: options.cause });
  }
}

/** The workspace folder is missing, empty, too large, or not a folder. */
export class WorkspaceError extends DatalystError {
  constructor(message: string, fix: string, cause?: unknown) {
    super('WORKSPACE_INVALID', message, { fault: 'user', fix, cause });
  }
}

/** A configuration value or file is invalid. */
export class ConfigError extends DatalystError {
  constructor(message: string, fix: string, cause?: unknown) {
    super('CONFIG_INVALID', message, { fault: 'user', fix, cause });
  }
}

/** A trace on disk does not match the schema. */
export class TraceError extends DatalystError {
  constructor(message: string, cause?: unknown) {
    super('TRACE_INVALID', message, {
      fault: 'user',
      fix: 'Pass a trace.jsonl or trace.json written by Datalyst.',
      cause,
    });
  }
}

/** The caller aborted (AbortSignal, Ctrl-C). */
export class CancelledError extends DatalystError {
  constructor(cause?: unknown) {
    super('CANCELLED', 'The run was cancelled.', { fault: 'user', fix: 'Nothing to fix.', cause });
  }
}

/** Chromium, which prints PDFs, is not installed or does not start. */
export class ChromiumUnavailableError extends DatalystError {
  constructor(message: string, cause?: unknown) {
    super('CHROMIUM_UNAVAILABLE', message, {
      fault: 'system',
      fix: 'Install Chromium (Debian: `apt-get install chromium`) or set DATALYST_CHROMIUM to a Chromium or Chrome binary; the other formats need no browser.',
      cause,
    });
  }
}

/**
 * A thread was used in a way its state does not allow: a question while
 * another turn runs (`THREAD_BUSY`), or after `close()` (`THREAD_CLOSED`).
 */
export class ThreadStateError extends DatalystError {
  constructor(code: 'THREAD_BUSY' | 'THREAD_CLOSED', message: string) {
    super(code, message, {
      fault: 'user',
      fix:
        code === 'THREAD_BUSY'
          ? 'Wait for the running turn to end (or cancel it) before asking the next question.'
          : 'Resume the thread from its run folder (resumeThread) to ask more.',
    });
  }
}
