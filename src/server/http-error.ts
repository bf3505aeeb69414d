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

export const badRequest = (message: string, fix: string): ServerRequestError =>
  new ServerRequestError(400, 'BAD_REQUEST', message, { fix });

export const tooLarge = (message: string, limitBytes: number): ServerRequestError =>
  new ServerRequestError(413, 'TOO_LARGE', `${message} (limit ${limitBytes} bytes).`, {
    fix: `Send at most ${limitBytes} bytes, or start the server with a larger limit.`,
  });

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
