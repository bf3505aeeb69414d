import type { ServerResponse } from 'node:http';
import { burstCork } from './burst-cork.ts';

/**
 * Server-sent events on a raw response. Every write is one complete event
 * (`id:` when given, one `data:` line of JSON), so a client never sees half
 * an event. A comment line every `heartbeatMs` keeps proxies from closing an
 * idle stream while a long cell runs.
 */
export class SseWriter {
  readonly #response: ServerResponse;
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;
  /** Events of one burst leave in one write: the reader wakes once rather than once per event. */
  readonly #corkBurst: () => void;

  constructor(response: ServerResponse, heartbeatMs = 15_000) {
    this.#response = response;
    this.#corkBurst = burstCork(response);
    // The headers leave with the events already there (a live turn's so far): one write, and a reader that
    // wakes once, not twice; with none there, they still go at once (process.nextTick).
    this.#corkBurst();
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.flushHeaders();
    this.#heartbeat = setInterval(() => this.#write(': keep-alive\n\n'), heartbeatMs);
    this.#heartbeat.unref();
    response.on('close', () => this.#stop());
  }

  get closed(): boolean {
    return this.#closed || this.#response.destroyed;
  }

  /** One event; `data` is serialised as JSON unless it is already a string (`[DONE]`). */
  send(data: unknown, id?: string | number, event?: string): void {
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    let frame = '';
    if (id !== undefined) frame += `id: ${id}\n`;
    if (event !== undefined) frame += `event: ${event}\n`;
    // JSON has no raw newlines; a string payload is split per line as the SSE format requires.
    for (const line of text.split('\n')) frame += `data: ${line}\n`;
    this.#write(`${frame}\n`);
  }

  end(): void {
    if (!this.closed) this.#response.end();
    this.#stop();
  }

  #write(text: string): void {
    if (this.closed) return;
    this.#corkBurst();
    this.#response.write(text);
  }

  #stop(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
  }
}
