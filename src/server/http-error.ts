import { DatalystError, type Fault } from '../errors/index.ts';

/**
 * A request the server answers with an HTTP error. It is a `DatalystError`
 * (code, fix, fault) that also knows its status; the body is OpenAI's error
 * shape (`{ error: { message, type, code } }`) plus the fix, so the `openai`
 * client raises its usual `APIError` subclasses.
 */
export class ServerRequestError extends DatalystError {
  readonly status: number;
  /** Seconds, sent as `Retry-After` (429 and 503). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { fix: string; fault?: Fault; cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(code, message, { fix: options.fix, fault: options.fault ?? 'user', cause: options.cause });
    this.status = status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const notFound = (what: string, id: string): ServerRequestError =>
  new ServerRequestError(404, 'NOT_FOUND', `No ${what} with id ${JSON.stringify(id)}.`, {
    fix: `List the ${what}s to see which ids exist.`,
  });

/** A thread's artifact is named by its path in the turn's `artifacts` list, not by an id. */
export const artifactNotFound = (artifactPath: string): ServerRequestError =>
  new ServerRequestError(404, 'NOT_FOUND', `No artifact at ${JSON.stringify(artifactPath)} in this thread.`, {
    fix: "Use a path from a turn's `artifacts` list (GET /v1/threads/{id}).",
  });

export const badRequest = (message: string, fix: string): ServerRequestError =>
  new ServerRequestError(400, 'BAD_REQUEST', message, { fix });

export const tooLarge = (message: string, limitBytes: number, fix: string): ServerRequestError =>
  new ServerRequestError(413, 'TOO_LARGE', `${message} (limit ${limitBytes} bytes).`, { fix });

const mebibytes = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** What to do about a file over the per-file limit: the setting that raises it is the operator's. */
export const fileLimitFix = (limitBytes: number): string =>
  `Send a file of at most ${mebibytes(limitBytes)}; the server's operator sets this limit (datalyst serve --max-file-mb).`;

export const fileTooLarge = (limitBytes: number): ServerRequestError =>
  tooLarge('The file is too large', limitBytes, fileLimitFix(limitBytes));

export const unsupportedType = (message: string, fix: string): ServerRequestError =>
  new ServerRequestError(415, 'UNSUPPORTED_MEDIA_TYPE', message, { fix });

/** The body every error response carries. */
export interface ErrorBody {
  error: { message: string; type: string; code: string; fix: string };
}

/** OpenAI's `type` for a status, so clients that switch on it behave. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function errorBody(status: number, code: string, message: string, fix: string): ErrorBody {
  return { error: { message, type: errorType(status), code, fix } };
}
