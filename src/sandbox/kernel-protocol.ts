import { z } from 'zod';
import { cellResultSchema } from './cell-result.ts';
import { workspaceProfileSchema } from './workspace-profile.ts';

/**
 * The JSON-lines protocol between the host and the kernel supervisor
 * (docker/python-runner/kernel/supervisor.py), one object per line on the
 * supervisor's stdin and stdout. The host's first line is a `hello` with the
 * session key; every line the supervisor writes is a frame authenticated with
 * it (kernel-frames.ts). The kernel runs untrusted code, so every message it
 * sends is validated here as well.
 */

export const KERNEL_PROTOCOL_VERSION = 2;

/** Random, so that nothing in the container can guess the id of a pending request. */
export type RequestId = string;

export interface KernelHello {
  type: 'hello';
  /** The session key, 32 bytes as hex; only the supervisor ever holds it. */
  key: string;
}

export type KernelRequest =
  | {
      type: 'execute';
      id: RequestId;
      code: string;
      timeoutMs: number;
      interruptGraceMs: number;
      maxOutputBytes: number;
      /** Ask for `output` frames while the cell runs. */
      liveOutput: boolean;
    }
  | {
      type: 'profile';
      id: RequestId;
      timeoutMs: number;
      interruptGraceMs: number;
      maxOutputBytes: number;
      options: Record<string, number>;
    }
  | { type: 'write-file'; id: RequestId; path: string; dataBase64: string; append: boolean }
  | { type: 'read-files'; id: RequestId; paths: string[]; maxTotalBytes: number; maxFiles: number }
  | { type: 'cancel'; id: RequestId; target: RequestId }
  | { type: 'ping'; id: RequestId }
  | { type: 'shutdown'; id: RequestId };

/** A request without its id (the connection assigns ids). */
export type KernelRequestBody = KernelRequest extends infer Request
  ? Request extends { id: RequestId }
    ? Omit<Request, 'id'>
    : never
  : never;

const requestId = z.string().min(1).max(64);
/** The supervisor sends at most 64 KiB of output per frame; decoded, never more characters than bytes. */
export const MAX_OUTPUT_CHUNK_CHARS = 64 * 1024;

export const kernelReadySchema = z.object({
  type: z.literal('ready'),
  protocol: z.number().int(),
  pid: z.number().int(),
  workdir: z.string(),
  subreaper: z.boolean(),
  oomCounter: z.boolean(),
});
export type KernelReady = z.infer<typeof kernelReadySchema>;

export const kernelResponseSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('result'), id: requestId, result: cellResultSchema }),
  z.object({ type: z.literal('profile'), id: requestId, profile: workspaceProfileSchema }),
  z.object({
    type: z.literal('files'),
    id: requestId,
    files: z.array(z.object({ path: z.string(), dataBase64: z.string() })),
    skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  }),
  z.object({ type: z.literal('ok'), id: requestId }),
  z.object({ type: z.literal('error'), id: requestId.nullable(), message: z.string() }),
]);

/** What a running cell printed since the last frame (only when the request asked for `liveOutput`). */
export const kernelOutputSchema = z.object({
  type: z.literal('output'),
  id: requestId,
  stream: z.enum(['stdout', 'stderr']),
  text: z.string().max(MAX_OUTPUT_CHUNK_CHARS),
});
export type KernelOutput = z.infer<typeof kernelOutputSchema>;
export type KernelResponse = z.infer<typeof kernelResponseSchema>;

export const kernelMessageSchema = z.union([kernelReadySchema, kernelOutputSchema, kernelResponseSchema]);
export type KernelMessage = z.infer<typeof kernelMessageSchema>;
