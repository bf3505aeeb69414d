import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { DatalystError } from '../errors/index.ts';

/** pino's levels; `silent` writes nothing. */
export const serverLogLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type ServerLogLevel = (typeof serverLogLevels)[number];

/**
 * The server's log: one JSON object per line (pino, through Fastify), on
 * stderr by default. At the default level (`warn`) it holds what went wrong —
 * 5xx answers, failed turns, sandbox failures — and no line per request;
 * `info` adds one line per request and its completion.
 */
export interface ServerLogOptions {
  /** Default `warn`. */
  level?: ServerLogLevel;
  /** Where lines go. Default stderr. */
  stream?: { write(line: string): unknown };
  /** Strings never written (the server's API key is always one): replaced by `[redacted]` wherever they appear. */
  secrets?: readonly string[];
}

/** Alias used by the rest of the server. */
export type ServerLog = FastifyBaseLogger;

/** Header fields that carry credentials, under every place a request or response object may be logged. */
const secretHeaderPaths = [
  'authorization',
  'cookie',
  'set-cookie',
  '"x-api-key"',
  '"proxy-authorization"',
].flatMap((header) => [
  `req.headers.${header}`,
  `res.headers.${header}`,
  `headers.${header}`,
  `*.headers.${header}`,
]);

/**
 * Fastify's logger options for the server: levels, redaction of credential
 * headers, an error serializer that keeps only what helps (never an error's
 * request, response or config objects), and a last pass over every line
 * that removes the secrets wherever they appear (an error message included).
 */
export function serverLoggerOptions(
  options: ServerLogOptions,
  apiKey: string | null,
): Exclude<FastifyServerOptions['logger'], boolean | undefined> {
  const secrets = [...(options.secrets ?? []), ...(apiKey === null ? [] : [apiKey])].filter(
    (secret) => secret.length >= 4,
  );
  // As the text and as it looks inside a JSON string.
  const forms = [...new Set(secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))];
  return {
    level: options.level ?? 'warn',
    stream: options.stream ?? process.stderr,
    redact: { paths: secretHeaderPaths, censor: '[redacted]' },
    serializers: {
      err: (error: Error) => {
        const serialized = serializeError(error);
        return typeof serialized === 'string'
          ? { type: 'Error', message: serialized, stack: '' }
          : { ...serialized, stack: serialized.stack ?? '' };
      },
    },
    hooks: {
      streamWrite: (line: string) =>
        forms.reduce((text, secret) => text.split(secret).join('[redacted]'), line),
    },
  };
}

interface SerializedError {
  type: string;
  message: string;
  code?: string;
  fault?: string;
  fix?: string;
  stack?: string;
  cause?: SerializedError | string;
}

/** An error as a log field: its class, code, message, fix, stack and cause chain (three deep), nothing else. */
export function serializeError(error: unknown, depth = 0): SerializedError | string {
  if (!(error instanceof Error)) return String(error);
  const serialized: SerializedError = { type: error.name, message: error.message };
  if (DatalystError.isInstance(error)) {
    serialized.code = error.code;
    serialized.fault = error.fault;
    serialized.fix = error.fix;
  } else if ('code' in error && typeof error.code === 'string') {
    serialized.code = error.code;
  }
  if (error.stack !== undefined) serialized.stack = error.stack;
  if (error.cause !== undefined && depth < 3) serialized.cause = serializeError(error.cause, depth + 1);
  return serialized;
}
