import { randomBytes } from 'node:crypto';
import { CancelledError, SandboxFailureError } from '../errors/index.ts';
import { FrameVerifier } from './kernel-frames.ts';
import {
  KERNEL_PROTOCOL_VERSION,
  kernelMessageSchema,
  kernelReadySchema,
  type KernelHello,
  type KernelReady,
  type KernelRequest,
  type KernelRequestBody,
  type KernelResponse,
  type RequestId,
} from './kernel-protocol.ts';
import type { KernelProcess } from './kernel-process.ts';
import type { OutputChunk } from './sandbox.ts';

const STDERR_TAIL_CHARS = 8_000;
/**
 * Larger than any message the kernel's own caps allow (figures, charts, output,
 * files read back), and far below V8's longest string (~512 MiB): a longer
 * line is a broken or hostile kernel, and must not crash the host.
 */
const MAX_LINE_BYTES = 192 * 1024 * 1024;

const SESSION_KEY_BYTES = 32;
const REQUEST_ID_BYTES = 12;

interface PendingRequest {
  resolve: (response: KernelResponse) => void;
  reject: (error: Error) => void;
  onOutput: ((chunk: OutputChunk) => void) | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Fail with SandboxFailureError when no answer came within this time (the kernel hangs). */
  answerWithinMs?: number;
  /** Called once when the signal aborts, with the request's id (e.g. to send a cancel). */
  onAbort?: (id: RequestId) => void;
  /** Receives the request's `output` frames (what a running cell prints), in order, before its answer. */
  onOutput?: (chunk: OutputChunk) => void;
}

/**
 * Requests and responses over a kernel's stdio, matched by id. The first line
 * the host writes hands the supervisor a fresh session key; every line the
 * kernel writes must carry that key's MAC (kernel-frames.ts) and is then
 * parsed and validated. A line that fails either check ends the connection
 * (the kernel is then not to be trusted with more work): it is never taken
 * for an answer.
 */
export class KernelConnection {
  readonly ready: Promise<KernelReady>;
  private readonly verifier: FrameVerifier;
  private readonly pending = new Map<RequestId, PendingRequest>();
  /** Ids whose caller gave up (aborted): their late answers are dropped quietly. */
  private readonly abandoned = new Set<RequestId>();
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
    const key = randomBytes(SESSION_KEY_BYTES);
    this.verifier = new FrameVerifier(key);
    // First on stdin, before any request: never through the environment or
    // argv, which the worker (and so any cell) could read.
    const hello: KernelHello = { type: 'hello', key: key.toString('hex') };
    this.write(hello).catch((error: unknown) => this.fail('Writing to the kernel failed.', error));
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
    const id = newRequestId();
    const request = { ...body, id } as KernelRequest;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<KernelResponse>((resolve, reject) => {
        this.pending.set(id, { resolve, reject, onOutput: options.onOutput });
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
    const id = newRequestId();
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

  private async write(request: KernelRequest | KernelHello): Promise<void> {
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
      this.onLine(pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces));
      if (this.failure) return;
      start = newline + 1;
    }
  }

  private onLine(frame: Buffer): void {
    if (this.failure) return;
    const payload = this.verifier.open(frame);
    if (payload === undefined) {
      this.refuseFrame(frame);
      return;
    }
    let line: string;
    let json: unknown;
    try {
      line = payload.toString('utf8');
      json = JSON.parse(line);
    } catch (error) {
      this.fail(
        `The kernel wrote a frame that is not JSON: ${payload.subarray(0, 200).toString('utf8')}`,
        error,
      );
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
    if (message.type === 'output') {
      const onOutput = this.pending.get(message.id)?.onOutput;
      try {
        onOutput?.({ stream: message.stream, text: message.text });
      } catch {
        // The listener's failure is its own: the cell runs on and its result still comes.
      }
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

  /** A line the supervisor did not write (or not in this order): the channel is not to be trusted any more. */
  private refuseFrame(frame: Buffer): void {
    const text = frame.subarray(0, 200).toString('utf8');
    if (!this.isReady) {
      // A runner image of an older protocol writes an unauthenticated `ready`: say what to do.
      try {
        const ready = kernelReadySchema.safeParse(JSON.parse(frame.toString('utf8')));
        if (ready.success && ready.data.protocol !== KERNEL_PROTOCOL_VERSION) {
          this.fail(
            `The kernel speaks protocol ${ready.data.protocol}, this Datalyst speaks ${KERNEL_PROTOCOL_VERSION}; the runner image is out of date.`,
          );
          return;
        }
      } catch {
        // not JSON at all: refused below
      }
    }
    this.fail(
      `The kernel channel carried a line the supervisor did not write (its session-key MAC does not match), so no more of its answers can be trusted: ${JSON.stringify(text)}`,
    );
  }
}

function newRequestId(): RequestId {
  return randomBytes(REQUEST_ID_BYTES).toString('base64url');
}
