import { CancelledError, SandboxFailureError } from '../errors/index.ts';
import {
  KERNEL_PROTOCOL_VERSION,
  kernelMessageSchema,
  type KernelReady,
  type KernelRequest,
  type KernelRequestBody,
  type KernelResponse,
} from './kernel-protocol.ts';
import type { KernelProcess } from './kernel-process.ts';

const STDERR_TAIL_CHARS = 8_000;
/**
 * Larger than any message the kernel's own caps allow (figures, charts, output,
 * files read back), and far below V8's longest string (~512 MiB): a longer
 * line is a broken or hostile kernel, and must not crash the host.
 */
const MAX_LINE_BYTES = 192 * 1024 * 1024;

interface PendingRequest {
  resolve: (response: KernelResponse) => void;
  reject: (error: Error) => void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Fail with SandboxFailureError when no answer came within this time (the kernel hangs). */
  answerWithinMs?: number;
  /** Called once when the signal aborts, with the request's id (e.g. to send a cancel). */
  onAbort?: (id: number) => void;
}

/**
 * Requests and responses over a kernel's stdio, matched by id. Every line the
 * kernel writes is parsed and validated; anything malformed ends the
 * connection (the kernel is then not to be trusted with more work).
 */
export class KernelConnection {
  readonly ready: Promise<KernelReady>;
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  /** Ids whose caller gave up (aborted): their late answers are dropped quietly. */
  private readonly abandoned = new Set<number>();
  private failure: SandboxFailureError | undefined;
  private stderrTail = '';
  private lineChunks: Buffer[] = [];
  private lineBytes = 0;
  private resolveReady!: (ready: KernelReady) => void;
  private rejectReady!: (error: Error) => void;
  private isReady = false;

  constructor(
    private readonly kernel: KernelProcess,
    private readonly maxLineBytes: number = MAX_LINE_BYTES,
  ) {
    this.ready = new Promise<KernelReady>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // Nobody may be listening yet when the kernel fails early.
    this.ready.catch(() => {});
    kernel.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    kernel.stdout.on('end', () =>
      this.fail('The kernel closed its output (the container or process stopped).'),
    );
    kernel.stdout.on('error', (error) => this.fail('Reading from the kernel failed.', error));
    kernel.stdin.on('error', (error) => this.fail('Writing to the kernel failed.', error));
    kernel.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    kernel.stderr.on('error', () => {});
  }

  get failed(): SandboxFailureError | undefined {
    return this.failure;
  }

  /** The end of the supervisor's diagnostics, for error messages. */
  get diagnostics(): string {
    return this.stderrTail.trim();
  }

  /** Sends a request and waits for its response (of any type: the caller checks it). */
  async request(body: KernelRequestBody, options: RequestOptions = {}): Promise<KernelResponse> {
    const { signal } = options;
    if (signal?.aborted) throw new CancelledError(signal.reason);
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const request = { ...body, id } as KernelRequest;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<KernelResponse>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        if (options.answerWithinMs !== undefined) {
          timer = setTimeout(() => {
            this.fail(
              `The kernel did not answer request ${id} (${body.type}) within ${options.answerWithinMs} ms.`,
            );
          }, options.answerWithinMs);
        }
        if (signal) {
          onAbort = () => {
            this.pending.delete(id);
            this.abandoned.add(id);
            reject(new CancelledError(signal.reason));
            options.onAbort?.(id);
          };
          signal.addEventListener('abort', onAbort, { once: true });
        }
        this.write(request).catch((error: unknown) => {
          this.fail('Writing to the kernel failed.', error);
        });
      });
    } finally {
      if (timer) clearTimeout(timer);
      if (signal && onAbort) signal.removeEventListener('abort', onAbort);
      this.pending.delete(id);
    }
  }

  /** Sends a request whose answer nobody waits for (a cancel). */
  notify(body: KernelRequestBody): void {
    if (this.failure) return;
    const id = this.nextId++;
    this.abandoned.add(id);
    this.write({ ...body, id } as KernelRequest).catch(() => {});
  }

  /** Fails every waiting request; later requests fail at once. */
  fail(message: string, cause?: unknown): void {
    if (this.failure) return;
    const diagnostics = this.diagnostics;
    this.failure = new SandboxFailureError(
      diagnostics ? `${message}\nKernel log:\n${diagnostics}` : message,
      {
        cause,
      },
    );
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
    if (!this.isReady) this.rejectReady(this.failure);
  }

  private async write(request: KernelRequest): Promise<void> {
    const line = JSON.stringify(request) + '\n';
    if (this.kernel.stdin.write(line)) return;
    // Respect backpressure: a large workspace upload must not pile up in memory.
    await new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        cleanup();
        resolve();
      };
      const onClose = () => {
        cleanup();
        reject(new Error('the kernel input closed'));
      };
      const cleanup = () => {
        this.kernel.stdin.off('drain', onDrain);
        this.kernel.stdin.off('close', onClose);
      };
      this.kernel.stdin.on('drain', onDrain);
      this.kernel.stdin.on('close', onClose);
    });
  }

  private onData(chunk: Buffer): void {
    if (this.failure) return;
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      // Counted before concatenating, the piece that ends the line included.
      this.lineBytes += end - start;
      if (this.lineBytes > this.maxLineBytes) {
        this.lineChunks = [];
        this.fail(`The kernel wrote more than ${this.maxLineBytes} bytes without ending a line.`);
        return;
      }
      this.lineChunks.push(chunk.subarray(start, end));
      if (newline === -1) return;
      const pieces = this.lineChunks;
      this.lineChunks = [];
      this.lineBytes = 0;
      let line: string;
      try {
        line = Buffer.concat(pieces).toString('utf8');
      } catch (error) {
        this.fail('The kernel wrote a line the host cannot read.', error);
        return;
      }
      this.onLine(line);
      start = newline + 1;
    }
  }

  private onLine(line: string): void {
    if (this.failure || line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      this.fail(`The kernel wrote a line that is not JSON: ${line.slice(0, 200)}`, error);
      return;
    }
    const parsed = kernelMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.fail(
        `The kernel sent a message that breaks the protocol: ${parsed.error.message.slice(0, 2_000)}`,
      );
      return;
    }
    const message = parsed.data;
    if (message.type === 'ready') {
      if (message.protocol !== KERNEL_PROTOCOL_VERSION) {
        this.fail(
          `The kernel speaks protocol ${message.protocol}, this Datalyst speaks ${KERNEL_PROTOCOL_VERSION}; the runner image is out of date.`,
        );
        return;
      }
      this.isReady = true;
      this.resolveReady(message);
      return;
    }
    if (message.id === null) return;
    const pending = this.pending.get(message.id);
    if (pending) {
      this.pending.delete(message.id);
      pending.resolve(message);
    } else if (this.abandoned.has(message.id)) {
      this.abandoned.delete(message.id);
    }
  }
}
