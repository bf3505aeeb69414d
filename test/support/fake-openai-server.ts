import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server that speaks the OpenAI chat-completions streaming format
 * (server-sent events, `data: {chunk}` lines, `data: [DONE]`) and replays
 * scripted replies, one per request, in order. It records every request it
 * got, and can answer with errors (429 with Retry-After, 500, 404), reset the
 * connection, delay, hang, or cut a stream in the middle of the text.
 *
 * Like vLLM, it honours the request's `stop` strings: a scripted text is cut at
 * the first stop string, the stop string itself is not sent, `finish_reason`
 * is `stop` and (vLLM's extension) `stop_reason` names the string. That is what
 * lets a recorded transcript, which contains the closing tags, be the script.
 */

export interface FakeTextReply {
  type: 'text';
  text: string;
  /** Characters per SSE chunk. Default 16. */
  chunkChars?: number;
  /** Pause before every chunk. Default 0. */
  chunkDelayMs?: number;
  /** Pause before the response headers. Default 0. */
  firstByteDelayMs?: number;
  /** Waits for this before the response headers (a reply held until something else has happened). */
  waitFor?: () => Promise<void>;
  /** Default `stop`. Use `length` to play a reply cut by max_tokens. */
  finishReason?: 'stop' | 'length';
  /** Apply the request's stop strings, as vLLM does. Default true. */
  honourStop?: boolean;
  /** Send vLLM's `stop_reason` field naming the stop string hit. Default true (false: OpenAI-like). */
  sendStopReason?: boolean;
  /** Token usage in the last chunk; `auto` estimates it from the characters. Default `auto`. */
  usage?: { promptTokens: number; completionTokens: number } | 'auto' | 'none';
  /** Stop sending after this many characters of text: `end` closes the body without a finish chunk, `reset` destroys the socket. */
  cut?: { afterChars: number; how: 'end' | 'reset' };
}

export interface FakeErrorReply {
  type: 'error';
  status: number;
  /** Sent as the Retry-After header (seconds or an HTTP date). */
  retryAfter?: string;
  message?: string;
}

/** Destroys the connection before any response byte. */
export interface FakeResetReply {
  type: 'reset';
}

/** Sends nothing until the client gives up. */
export interface FakeHangReply {
  type: 'hang';
}

export type FakeReply = FakeTextReply | FakeErrorReply | FakeResetReply | FakeHangReply;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (null for bodies that are not JSON). */
  body: ChatCompletionRequestBody | null;
  at: number;
}

export interface ChatCompletionRequestBody {
  model?: string;
  messages?: { role: string; content: string }[];
  stop?: string[] | string;
  stream?: boolean;
  temperature?: number;
  max_tokens?: number;
  [field: string]: unknown;
}

export type ScriptEntry = FakeReply | ((request: RecordedRequest, index: number) => FakeReply);

export interface FakeOpenAIServerOptions {
  /** Replies for the chat-completion requests, in order. */
  script?: readonly ScriptEntry[];
  /** Model names that exist; a request for another gets a 404 like vLLM's. Default: any. */
  models?: readonly string[];
  /** What to answer once the script is used up. Default a 500 that says so. */
  whenExhausted?: FakeReply;
}

export interface FakeOpenAIServer {
  /** e.g. `http://127.0.0.1:43121/v1` */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Chat-completion requests only. */
  readonly completionRequests: RecordedRequest[];
  /** Appends replies to the script. */
  enqueue(...entries: ScriptEntry[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function applyStop(text: string, stop: readonly string[]): { text: string; stopHit: string | null } {
  let cutAt = -1;
  let stopHit: string | null = null;
  for (const candidate of stop) {
    if (candidate.length === 0) continue;
    const index = text.indexOf(candidate);
    if (index !== -1 && (cutAt === -1 || index < cutAt)) {
      cutAt = index;
      stopHit = candidate;
    }
  }
  return cutAt === -1 ? { text, stopHit: null } : { text: text.slice(0, cutAt), stopHit };
}

export async function startFakeOpenAIServer(
  options: FakeOpenAIServerOptions = {},
): Promise<FakeOpenAIServer> {
  const script: ScriptEntry[] = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const completionRequests: RecordedRequest[] = [];
  let nextReply = 0;
  let chunkSerial = 0;

  async function sendText(
    reply: FakeTextReply,
    request: RecordedRequest,
    response: http.ServerResponse,
  ): Promise<void> {
    const body = request.body ?? {};
    const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []);
    const { text, stopHit } =
      reply.honourStop === false ? { text: reply.text, stopHit: null } : applyStop(reply.text, stop);
    const model = body.model ?? 'fake-model';
    const id = `chatcmpl-fake-${++chunkSerial}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choice: Record<string, unknown> | null, usage?: Record<string, number>) =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: choice === null ? [] : [choice],
        ...(usage === undefined ? {} : { usage }),
      })}\n\n`;

    if ((reply.firstByteDelayMs ?? 0) > 0) await sleep(reply.firstByteDelayMs ?? 0);
    if (reply.waitFor !== undefined) await reply.waitFor();
    if (response.destroyed) return;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }));

    const chunkChars = Math.max(1, reply.chunkChars ?? 16);
    const limit = reply.cut === undefined ? text.length : Math.min(reply.cut.afterChars, text.length);
    for (let offset = 0; offset < limit; offset += chunkChars) {
      if ((reply.chunkDelayMs ?? 0) > 0) await sleep(reply.chunkDelayMs ?? 0);
      if (response.destroyed) return;
      const piece = text.slice(offset, Math.min(offset + chunkChars, limit));
      response.write(chunk({ index: 0, delta: { content: piece }, finish_reason: null }));
    }
    if (reply.cut !== undefined) {
      // Let the text sent so far reach the client first: a cut mid-reply, not before it.
      await sleep(30);
      if (reply.cut.how === 'reset') response.socket?.destroy();
      else response.end();
      return;
    }
    const finishReason = stopHit !== null ? 'stop' : (reply.finishReason ?? 'stop');
    response.write(
      chunk({
        index: 0,
        delta: {},
        finish_reason: finishReason,
        ...(reply.sendStopReason === false ? {} : { stop_reason: stopHit }),
      }),
    );
    const usage =
      reply.usage === 'none'
        ? undefined
        : reply.usage === undefined || reply.usage === 'auto'
          ? {
              prompt_tokens: Math.ceil(JSON.stringify(body.messages ?? []).length / 4),
              completion_tokens: Math.ceil(text.length / 4),
            }
          : { prompt_tokens: reply.usage.promptTokens, completion_tokens: reply.usage.completionTokens };
    if (
      usage !== undefined &&
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage
    ) {
      response.write(chunk(null, { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }));
    }
    response.end('data: [DONE]\n\n');
  }

  function sendError(
    status: number,
    message: string,
    response: http.ServerResponse,
    retryAfter?: string,
  ): void {
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    response.writeHead(status, headers);
    response.end(
      JSON.stringify({
        error: { message, type: status === 404 ? 'NotFoundError' : 'fake_error', code: status },
      }),
    );
  }

  async function handle(request: RecordedRequest, response: http.ServerResponse): Promise<void> {
    if (request.method === 'GET' && request.path.endsWith('/models')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          object: 'list',
          data: (options.models ?? ['fake-model']).map((id) => ({ id, object: 'model' })),
        }),
      );
      return;
    }
    if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) {
      sendError(404, `No route ${request.method} ${request.path}`, response);
      return;
    }
    completionRequests.push(request);
    const model = request.body?.model;
    if (options.models !== undefined && (model === undefined || !options.models.includes(model))) {
      sendError(404, `The model \`${model ?? ''}\` does not exist.`, response);
      return;
    }
    const index = nextReply++;
    const entry = script[index];
    const reply: FakeReply =
      entry === undefined
        ? (options.whenExhausted ?? {
            type: 'error',
            status: 500,
            message: 'fake server: the script has no reply left',
          })
        : typeof entry === 'function'
          ? entry(request, index)
          : entry;
    switch (reply.type) {
      case 'text':
        await sendText(reply, request, response);
        return;
      case 'error':
        sendError(reply.status, reply.message ?? `fake error ${reply.status}`, response, reply.retryAfter);
        return;
      case 'reset':
        request.headers.connection = 'close';
        response.socket?.destroy();
        return;
      case 'hang':
        return; // The client's timeout or abort ends it; close() destroys it.
    }
  }

  const server = http.createServer((incoming, response) => {
    const parts: Buffer[] = [];
    incoming.on('data', (part: Buffer) => parts.push(part));
    incoming.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: ChatCompletionRequestBody | null = null;
      try {
        body = raw.length > 0 ? (JSON.parse(raw) as ChatCompletionRequestBody) : null;
      } catch {
        body = null;
      }
      const recorded: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: incoming.headers,
        body,
        at: Date.now(),
      };
      requests.push(recorded);
      handle(recorded, response).catch((error: unknown) => {
        if (!response.headersSent) sendError(500, `fake server failed: ${String(error)}`, response);
        else response.destroy();
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    completionRequests,
    enqueue(...entries) {
      script.push(...entries);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
