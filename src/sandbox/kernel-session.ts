import { SandboxFailureError } from '../errors/index.ts';
import type { CellResult } from './cell-result.ts';
import type { KernelConnection } from './kernel-connection.ts';
import type { KernelProcess } from './kernel-process.ts';
import type { KernelResponse } from './kernel-protocol.ts';
import type {
  CollectedFile,
  ExecuteOptions,
  ReadFilesOptions,
  SandboxBackendName,
  SandboxLimits,
  SandboxSession,
} from './sandbox.ts';
import type { WorkspaceProfile } from './workspace-profile.ts';
import { isSafeWorkspacePath } from './workspace-files.ts';

/** How long the kernel may go quiet beyond a request's own limits before it counts as hung. */
const ANSWER_MARGIN_MS = 60_000;
const PROFILE_TIMEOUT_MS = 120_000;
const DEFAULT_READ_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_READ_MAX_FILES = 1_000;

/** A session over a started kernel supervisor; the backend only decides where it runs. */
export class KernelSession implements SandboxSession {
  private closing: Promise<void> | undefined;

  constructor(
    readonly id: string,
    readonly backend: SandboxBackendName,
    readonly limits: Readonly<SandboxLimits>,
    private readonly kernel: KernelProcess,
    private readonly connection: KernelConnection,
  ) {}

  async execute(code: string, options: ExecuteOptions = {}): Promise<CellResult> {
    this.assertOpen();
    const timeoutMs = options.timeoutMs ?? this.limits.cellTimeoutMs;
    const response = await this.connection.request(
      {
        type: 'execute',
        code,
        timeoutMs,
        interruptGraceMs: this.limits.interruptGraceMs,
        maxOutputBytes: this.limits.maxOutputBytes,
      },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        // A queued cell may wait for the one before it to be stopped and the kernel restarted.
        answerWithinMs: timeoutMs + 2 * this.limits.interruptGraceMs + ANSWER_MARGIN_MS,
        onAbort: (id) => this.connection.notify({ type: 'cancel', target: id }),
      },
    );
    if (response.type === 'result') return response.result;
    throw this.unexpected('execute', response);
  }

  async profileWorkspace(options: { signal?: AbortSignal } = {}): Promise<WorkspaceProfile> {
    this.assertOpen();
    const response = await this.connection.request(
      {
        type: 'profile',
        timeoutMs: PROFILE_TIMEOUT_MS,
        interruptGraceMs: this.limits.interruptGraceMs,
        maxOutputBytes: this.limits.maxOutputBytes,
        options: {},
      },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        answerWithinMs: PROFILE_TIMEOUT_MS + this.limits.cellTimeoutMs + ANSWER_MARGIN_MS,
        onAbort: (id) => this.connection.notify({ type: 'cancel', target: id }),
      },
    );
    if (response.type === 'profile') return response.profile;
    throw this.unexpected('profile', response);
  }

  async readFiles(paths: readonly string[], options: ReadFilesOptions = {}): Promise<CollectedFile[]> {
    this.assertOpen();
    const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_READ_MAX_BYTES;
    const maxFiles = options.maxFiles ?? DEFAULT_READ_MAX_FILES;
    const requested = [...new Set(paths.filter(isSafeWorkspacePath))];
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

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.connection.fail('The session was closed.');
      await this.kernel.dispose();
    })();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
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
