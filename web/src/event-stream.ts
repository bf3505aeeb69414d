import { createParser } from 'eventsource-parser';
import { ApiError, apiKey } from './api.ts';

export interface EventStreamHandlers {
  /** One event's data and id; returns true when it was the last one (the stream is then closed). */
  onEvent(data: string, id: string | undefined): boolean;
  /** The connection dropped; it is opened again with `Last-Event-ID` after `delayMs`. */
  onRetry(delayMs: number): void;
  /** The server refused the stream (4xx): no retry. */
  onFail(error: ApiError): void;
  /** The server's clock when it answered (its `Date` header, whole seconds), for times the events carry. */
  onServerDate?(serverMs: number): void;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Follows a turn's SSE stream with `fetch` (EventSource cannot send the API
 * key): parsed by eventsource-parser; when the connection drops before the
 * last event, it re-attaches with `Last-Event-ID` (the id of the last event
 * seen), so that the server sends only what came after, and waits longer
 * after each failed attempt (0.5 s doubling, at most 8 s).
 */
export function followEventStream(
  path: string,
  handlers: EventStreamHandlers,
  signal: AbortSignal,
  onUnauthorized: () => void,
  /** The id of the last event already drawn (a stream followed again): only what came after is sent. */
  resumeAfter?: string,
): void {
  let lastId: string | undefined = resumeAfter;
  let finished = false;
  let failures = 0;
  const parser = createParser({
    onEvent(event) {
      if (finished) return;
      if (event.id !== undefined) lastId = event.id;
      if (handlers.onEvent(event.data, event.id)) finished = true;
    },
  });

  const attach = async (): Promise<void> => {
    parser.reset();
    const headers = new Headers({ accept: 'text/event-stream' });
    const key = apiKey();
    if (key !== null) headers.set('authorization', `Bearer ${key}`);
    if (lastId !== undefined) headers.set('last-event-id', lastId);
    const response = await fetch(path, { headers, signal, cache: 'no-store' });
    if (response.status >= 400 && response.status < 500) {
      if (response.status === 401) onUnauthorized();
      const body: unknown = await response.json().catch(() => null);
      const error =
        typeof body === 'object' && body !== null && 'error' in body
          ? (body.error as { message?: unknown; fix?: unknown })
          : {};
      throw new ApiError(
        response.status,
        typeof error.message === 'string' ? error.message : `The server answered ${response.status}.`,
        typeof error.fix === 'string' ? error.fix : null,
      );
    }
    if (!response.ok || response.body === null) throw new Error(`The server answered ${response.status}.`);
    const serverDate = Date.parse(response.headers.get('date') ?? '');
    if (!Number.isNaN(serverDate)) handlers.onServerDate?.(serverDate);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        failures = 0;
        parser.feed(value);
        if (finished) return;
      }
    } finally {
      if (finished) void reader.cancel().catch(() => undefined);
    }
  };

  void (async () => {
    while (!finished && !signal.aborted) {
      try {
        await attach();
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError) {
          handlers.onFail(error);
          return;
        }
      }
      if (finished || signal.aborted) return;
      const delayMs = Math.min(8000, 500 * 2 ** failures);
      failures += 1;
      handlers.onRetry(delayMs);
      await sleep(delayMs, signal);
    }
  })();
}
