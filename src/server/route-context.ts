import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
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
  /** The base of every URL in an answer (`--public-url`, checked by `parsePublicUrl`); null: each request's own. */
  publicUrl: string | null;
}

/**
 * The base of the URLs we hand back, which must work for the client: the
 * public URL when the operator gave one (behind a proxy, the scheme and host
 * the server sees are the proxy's side), otherwise the scheme and `Host` the
 * request came with. `X-Forwarded-*` is never read: any client could send it.
 */
export function baseUrlOf(request: FastifyRequest, context: Pick<RouteContext, 'publicUrl'>): string {
  return context.publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * `--public-url` as the base of URLs: an http(s) URL without credentials,
 * query or fragment; a path is kept (a proxy that serves the API under
 * `/datalyst/`), without its last slash. A ConfigError (fault `user`) otherwise.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch (error) {
    throw new ConfigError(`--public-url ${JSON.stringify(value)} is not a URL.`, publicUrlFix, error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(
      `--public-url must be http or https, not ${url.protocol.slice(0, -1)}.`,
      publicUrlFix,
    );
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw new ConfigError(
      '--public-url may hold no user name, password, query or fragment: every URL in an answer starts with it.',
      publicUrlFix,
    );
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const publicUrlFix =
  'Give the address clients reach the server at, e.g. --public-url https://data.example.com (the `publicUrl` option).';

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
