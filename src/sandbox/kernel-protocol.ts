import { z } from 'zod';
import { cellResultSchema } from './cell-result.ts';
import { workspaceProfileSchema } from './workspace-profile.ts';

/**
 * The JSON-lines protocol between the host and the kernel supervisor
 * (docker/python-runner/kernel/supervisor.py), one object per line on the
 * supervisor's stdin and stdout. The kernel runs untrusted code, so every
 * message it sends is validated here.
 */

export const KERNEL_PROTOCOL_VERSION = 1;

export type KernelRequest =
  | {
      type: 'execute';
      id: number;
      code: string;
      timeoutMs: number;
      interruptGraceMs: number;
      maxOutputBytes: number;
    }
  | {
      type: 'profile';
      id: number;
      timeoutMs: number;
      interruptGraceMs: number;
      maxOutputBytes: number;
      options: Record<string, number>;
    }
  | { type: 'write-file'; id: number; path: string; dataBase64: string; append: boolean }
  | { type: 'read-files'; id: number; paths: string[]; maxTotalBytes: number; maxFiles: number }
  /** Links each input of the read-only inputs folder by its relative path in the working directory. */
  | { type: 'link-inputs'; id: number; paths: string[] }
  | { type: 'cancel'; id: number; target: number }
  | { type: 'ping'; id: number }
  | { type: 'shutdown'; id: number };

/** A request without its id (the connection assigns ids). */
export type KernelRequestBody = KernelRequest extends infer Request
  ? Request extends { id: number }
    ? Omit<Request, 'id'>
    : never
  : never;

const requestId = z.number().int().nonnegative();

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
export type KernelResponse = z.infer<typeof kernelResponseSchema>;

export const kernelMessageSchema = z.union([kernelReadySchema, kernelResponseSchema]);
export type KernelMessage = z.infer<typeof kernelMessageSchema>;
