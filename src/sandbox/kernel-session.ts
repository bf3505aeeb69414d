import { CancelledError, SandboxFailureError } from '../errors/index.ts';
import type { CellResult } from './cell-result.ts';
import type { KernelConnection, RequestOptions } from './kernel-connection.ts';
import type { KernelProcess } from './kernel-process.ts';
import type { KernelResponse } from './kernel-protocol.ts';
import type {
  CollectedFile,
  ExecuteOptions,
  OutputChunk,
  ReadFilesOptions,
  SandboxBackendName,
  SandboxLimits,
  SandboxRuntimeName,
  SandboxSession,
} from './sandbox.ts';
import type { ProfilePart, WorkspaceProfile } from './workspace-profile.ts';
import { hasControlCharacters } from './path-text.ts';
import { isSafeWorkspacePath } from './workspace-files.ts';
import { unlessAborted } from '../util/unless-aborted.ts';

/** How long the kernel may go quiet beyond a request's own limits before it counts as hung. */
const ANSWER_MARGIN_MS = 60_000;
const PROFILE_TIMEOUT_MS = 120_000;
const DEFAULT_READ_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_READ_MAX_FILES = 1_000;

/**
 * Calls `onOutput` until `maxChars` characters were delivered: the supervisor
 * sends at most the cell's `maxOutputBytes` live (a decoded chunk never has
 * more characters than bytes); this is the host's second line of defence.
 */
function boundedOutput(
  onOutput: (chunk: OutputChunk) => void,
  maxChars: number,
): (chunk: OutputChunk) => void {
  let delivered = 0;
  return (chunk) => {
    if (delivered >= maxChars) return;
    const text = chunk.text.slice(0, maxChars - delivered);
    delivered += text.length;
    onOutput({ stream: chunk.stream, text });
  };
}

/** A session over a started kernel supervisor; the backend only decides where it runs. */
export class KernelSession implements SandboxSession {
  private closing: Promise<void> | undefined;
  /**
   * Settles when every job asked for so far has settled. The kernel runs one
   * cell or profile at a time; sending a job only when it can start makes its
   * answer timer measure the job itself, not the queue in front of it.
   */
  private jobsBefore: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly backend: SandboxBackendName,
    readonly limits: Readonly<SandboxLimits>,
    private readonly kernel: KernelProcess,
    private readonly connection: KernelConnection,
    /** The image the session was started from, when the caller knows it better than the kernel handle. */
    private readonly startedImage?: string | null,
    /** The runtime the session was started under, when the caller knows it better than the kernel handle. */
    private readonly startedRuntime?: SandboxRuntimeName | null,
  ) {}

  get runtime(): SandboxRuntimeName | null {
    return this.startedRuntime ?? this.kernel.runtime ?? null;
  }

  get image(): string | null {
    // A wrapped handle (exit cleanup) may not carry the image; the starter then says it.
    return this.startedImage ?? this.kernel.image ?? null;
  }

  async execute(code: string, options: ExecuteOptions = {}): Promise<CellResult> {
    this.assertOpen();
    const timeoutMs = options.timeoutMs ?? this.limits.cellTimeoutMs;
    const { onOutput } = options;
    return this.inTurn(options.signal, async () => {
      const response = await this.connection.request(
        {
          type: 'execute',
          code,
          timeoutMs,
          interruptGraceMs: this.limits.interruptGraceMs,
          maxOutputBytes: this.limits.maxOutputBytes,
          liveOutput: onOutput !== undefined,
        },
        {
          ...this.jobOptions(timeoutMs, options.signal),
          ...(onOutput ? { onOutput: boundedOutput(onOutput, this.limits.maxOutputBytes) } : {}),
        },
      );
      if (response.type === 'result') return response.result;
      throw this.unexpected('execute', response);
    });
  }

  async profileWorkspace(
    options: { signal?: AbortSignal; part?: ProfilePart } = {},
  ): Promise<WorkspaceProfile> {
    const part = options.part ?? { index: 0, count: 1 };
    if (
      !Number.isInteger(part.count) ||
      part.count < 1 ||
      !Number.isInteger(part.index) ||
      part.index < 0 ||
      part.index >= part.count
    )
      throw new RangeError(`profileWorkspace: part ${part.index} of ${part.count} is not a part.`);
    this.assertOpen();
    return this.inTurn(options.signal, async () => {
      const response = await this.connection.request(
        {
          type: 'profile',
          timeoutMs: PROFILE_TIMEOUT_MS,
          interruptGraceMs: this.limits.interruptGraceMs,
          maxOutputBytes: this.limits.maxOutputBytes,
          options: part.count === 1 ? {} : { partIndex: part.index, partCount: part.count },
        },
        this.jobOptions(PROFILE_TIMEOUT_MS, options.signal),
      );
      if (response.type === 'profile') return response.profile;
      throw this.unexpected('profile', response);
    });
  }

  async readFiles(paths: readonly string[], options: ReadFilesOptions = {}): Promise<CollectedFile[]> {
    this.assertOpen();
    const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_READ_MAX_BYTES;
    const maxFiles = options.maxFiles ?? DEFAULT_READ_MAX_FILES;
    // A name with a control character (`a\nb.csv`) is never read out: it would reach the host's disk as is.
    const requested = [
      ...new Set(paths.filter((path) => isSafeWorkspacePath(path) && !hasControlCharacters(path))),
    ];
    if (requested.length === 0) return [];
    const response = await this.connection.request(
      { type: 'read-files', paths: requested, maxTotalBytes, maxFiles },
      { ...(options.signal ? { signal: options.signal } : {}), answerWithinMs: ANSWER_MARGIN_MS },
    );
    if (response.type !== 'files') throw this.unexpected('read-files', response);
    // The kernel is untrusted: keep only what was asked for, within the caps.
    const allowed = new Set(requested);
    const files: CollectedFile[] = [];
    let totalBytes = 0;
    for (const file of response.files) {
      if (!allowed.has(file.path) || files.length >= maxFiles) continue;
      allowed.delete(file.path);
      const bytes = new Uint8Array(Buffer.from(file.dataBase64, 'base64'));
      totalBytes += bytes.byteLength;
      if (totalBytes > maxTotalBytes) break;
      files.push({ path: file.path, bytes });
    }
    return files;
  }

  /** Never throws: a container the engine could not remove is reported and left to the reaper. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.connection.fail('The session was closed.');
      try {
        await this.kernel.dispose();
      } catch (error) {
        process.stderr.write(
          `datalyst: closing sandbox session ${this.id} (${this.kernel.description}) failed: ${error instanceof Error ? error.message : String(error)}; its container, if any, is left to the reaper.\n`,
        );
      }
    })();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Runs `job` once every job asked for before it has settled (or rejects when the signal aborts first). */
  private inTurn<T>(signal: AbortSignal | undefined, job: () => Promise<T>): Promise<T> {
    const before = this.jobsBefore;
    let release!: () => void;
    const settled = new Promise<void>((resolve) => (release = resolve));
    // Chained, so that a job aborted while it waits does not let the next one overtake the running one.
    this.jobsBefore = before.then(() => settled);
    return (async () => {
      try {
        await unlessAborted(before, signal, (reason) => new CancelledError(reason));
        this.assertOpen();
        return await job();
      } finally {
        release();
      }
    })();
  }

  private jobOptions(timeoutMs: number, signal: AbortSignal | undefined): RequestOptions {
    return {
      ...(signal ? { signal } : {}),
      // The job itself, its interrupt and the kill after it, and (after an abort,
      // which answers the caller at once) the previous job still being stopped.
      answerWithinMs: timeoutMs + 2 * this.limits.interruptGraceMs + ANSWER_MARGIN_MS,
      onAbort: (id) => this.connection.notify({ type: 'cancel', target: id }),
    };
  }

  private assertOpen(): void {
    if (this.closing)
      throw new SandboxFailureError('The session was closed.', { fix: 'Create a new session.' });
    const failure = this.connection.failed;
    if (failure) throw failure;
  }

  private unexpected(request: string, response: KernelResponse): SandboxFailureError {
    const detail = response.type === 'error' ? response.message : `an answer of type ${response.type}`;
    return new SandboxFailureError(`The kernel failed the ${request} request: ${detail}`);
  }
}
