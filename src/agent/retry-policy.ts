import { CancelledError } from '../errors/index.ts';

/** How the model client retries a failed request. */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  maxRetries: number;
  /** First backoff delay; doubles each retry, with ±25 % jitter. Default 500. */
  initialDelayMs: number;
  /** Cap on any single wait, including one a Retry-After header asks for. Default 30 000. */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 4, initialDelayMs: 500, maxDelayMs: 30_000 };

/**
 * Reads how long the server asks us to wait: `retry-after-ms` (OpenAI),
 * `Retry-After` in seconds or as an HTTP date (RFC 9110). Null when absent or
 * unreadable.
 */
export function parseRetryAfterMs(headers: Headers | undefined, nowMs: number = Date.now()): number | null {
  if (headers === undefined) return null;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\d+(\.\d+)?$/.test(milliseconds.trim())) return Number(milliseconds);
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** The wait before retry number `retry` (1-based): what the server asked for, else exponential backoff; never above the cap. */
export function retryDelayMs(policy: RetryPolicy, retry: number, retryAfterMs: number | null): number {
  if (retryAfterMs !== null) return Math.min(policy.maxDelayMs, Math.max(0, retryAfterMs));
  const base = policy.initialDelayMs * 2 ** Math.max(0, retry - 1);
  const jitter = base * (Math.random() * 0.5 - 0.25);
  return Math.min(policy.maxDelayMs, Math.max(0, Math.round(base + jitter)));
}

/** Waits, or throws CancelledError as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new CancelledError(signal.reason));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
