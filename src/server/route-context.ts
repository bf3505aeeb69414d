import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { FileStore } from './file-store.ts';
import { badRequest } from './http-error.ts';
import type { ReportCache } from './report-cache.ts';
import type { ThreadService } from './thread-service.ts';

/** What every route module gets. */
export interface RouteContext {
  files: FileStore;
  threads: ThreadService;
  reports: ReportCache;
  modelId: string;
  /** Process start, for /v1/models `created`. */
  startedAt: number;
}

/** The scheme and host the client used: URLs we hand back must work for it. */
export function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Parses with a zod schema; a mismatch is a 400 that names the fields. */
export function parseWith<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw badRequest(
    `The ${what} is not valid: ${problems}.`,
    'Correct the named fields; /openapi.json has the schema.',
  );
}
