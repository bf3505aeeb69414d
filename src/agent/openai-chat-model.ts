import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import { CancelledError, ModelUnavailableError } from '../errors/index.ts';
import type { ChatMessage, LanguageModel, ModelChunk, ModelRequest } from './language-model.ts';
import { assertOpenAIChatModelOptions } from './openai-model-options.ts';
import {
  defaultRetryPolicy,
  parseRetryAfterMs,
  retryDelayMs,
  sleep,
  type RetryPolicy,
} from './retry-policy.ts';

/**
 * A model behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM
 * serving DeepAnalyze-8B, Ollama, LM Studio, OpenRouter), streamed.
 */
export interface OpenAIChatModelOptions {
  /** e.g. `http://localhost:8000/v1` (vLLM), `https://api.openai.com/v1`. The CLI reads `DATALYST_BASE_URL`, then `OPENAI_BASE_URL`. */
  baseUrl: string;
  /** The model name the endpoint serves. The CLI reads `DATALYST_MODEL`. */
  model: string;
  /** Sent as a bearer token. Local servers ignore it; default `not-needed`. The CLI reads `DATALYST_API_KEY`, then `OPENAI_API_KEY`. */
  apiKey?: string;
  /** Default: the endpoint's default. DeepAnalyze's own client uses 0.5. */
  temperature?: number;
  /** Tokens per reply at most. Default: the endpoint's default. */
  maxTokens?: number;
  /** Extra JSON fields merged into every request body (e.g. `top_k`, `add_generation_prompt`, `max_completion_tokens`). */
  extraBody?: Record<string, unknown>;
  /** The model's context window. Default 32 768. */
  contextWindowTokens?: number;
  /** Retries on 429, 5xx, connection resets and timeouts. See `defaultRetryPolicy`. */
  retry?: Partial<RetryPolicy>;
  /** A request that sends nothing (no headers, no chunk) for this long is abandoned and retried. Default 180 000. */
  idleTimeoutMs?: number;
  /** Ask for token usage in the stream (`stream_options.include_usage`). Default true; turn off for servers that reject it. */
  includeUsage?: boolean;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

// Only the fields the loop reads. `stop_reason` is vLLM's: the stop string (or
// token id) that ended the reply, null for end-of-sequence, absent elsewhere.
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
        stop_reason: z.union([z.string(), z.number()]).nullish(),
      }),
    )
    .nullish(),
  // Counts as servers send them; a missing or odd count is read as 0, never a reason to fail the reply.
  usage: z
    .object({
      prompt_tokens: z.number().nonnegative().catch(0),
      completion_tokens: z.number().nonnegative().catch(0),
    })
    .nullish()
    .catch(null),
});

/**
 * The closing tag to re-append when generation stopped at a stop string (the
 * server does not send the stop string itself). vLLM names the string in
 * `stop_reason`; other servers only say `finish_reason: stop`, and then a tag
 * we stop at that is still open at the end of the text tells that the stop
 * string cut it. A `stop_reason` of null is vLLM saying "end of sequence": the
 * model ended inside the tag on its own, and nothing is appended.
 */
export function closingTagToAppend(
  text: string,
  finishReason: string | null,
  stopReason: string | number | null | undefined,
  stop: readonly string[],
): string | null {
  if (finishReason !== 'stop') return null;
  if (typeof stopReason === 'string') {
    return stop.includes(stopReason) && !text.endsWith(stopReason) ? stopReason : null;
  }
  if (stopReason !== undefined) return null;
  let best: { tag: string; openAt: number } | null = null;
  for (const closing of stop) {
    if (!closing.startsWith('</')) continue;
    const opening = `<${closing.slice(2)}`;
    const openAt = text.lastIndexOf(opening);
    if (openAt !== -1 && openAt > text.lastIndexOf(closing) && (best === null || openAt > best.openAt)) {
      best = { tag: closing, openAt };
    }
  }
  return best?.tag ?? null;
}

interface FailedAttempt {
  retryable: boolean;
  status: number | null;
  reason: string;
  retryAfterMs: number | null;
  cause: unknown;
}

function describeFailure(error: unknown, idleTimedOut: boolean, idleTimeoutMs: number): FailedAttempt {
  if (idleTimedOut) {
    return {
      retryable: true,
      status: null,
      reason: `no data for ${idleTimeoutMs} ms`,
      retryAfterMs: null,
      cause: error,
    };
  }
  if (error === null) {
    return {
      retryable: true,
      status: null,
      reason: 'the stream ended before the reply finished',
      retryAfterMs: null,
      cause: null,
    };
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    return {
      retryable: status === 408 || status === 409 || status === 429 || status >= 500,
      status,
      reason: `HTTP ${status}: ${error.message}`,
      retryAfterMs: parseRetryAfterMs(error.headers),
      cause: error,
    };
  }
  // APIConnectionError, APIConnectionTimeoutError, a reset while reading the
  // body (fetch's "terminated"), an unparseable chunk: transport trouble.
  const message = error instanceof Error ? error.message : String(error);
  const code = systemErrorCode(error);
  return {
    retryable: true,
    status: null,
    reason: code === undefined ? message : `${message} (${code})`,
    retryAfterMs: null,
    cause: error,
  };
}

/**
 * The system error code under a transport failure (ECONNREFUSED, ENOTFOUND, ECONNRESET): the SDK's
 * "Connection error." wraps fetch's "fetch failed", which wraps the socket's error, so the code is two
 * causes down, not one.
 */
function systemErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

function unavailableError(
  failure: FailedAttempt,
  attempts: number,
  baseUrl: string,
  model: string,
): ModelUnavailableError {
  const status = failure.status ?? undefined;
  if (failure.status === 404) {
    return new ModelUnavailableError(
      `The endpoint ${baseUrl} has no model "${model}" (or no chat-completions route): ${failure.reason}`,
      {
        fix: `Check the base URL (it usually ends in /v1) and the model name; GET ${baseUrl}/models lists what the endpoint serves.`,
        cause: failure.cause,
        ...(status === undefined ? {} : { status }),
      },
      status,
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    return new ModelUnavailableError(
      `The endpoint ${baseUrl} refused the API key: ${failure.reason}`,
      {
        fix: 'Set a valid API key (DATALYST_API_KEY or OPENAI_API_KEY) for this endpoint.',
        cause: failure.cause,
        status: failure.status,
      },
      failure.status,
    );
  }
  if (!failure.retryable) {
    return new ModelUnavailableError(
      `The endpoint ${baseUrl} rejected the request for "${model}": ${failure.reason}`,
      {
        fix: 'Check the request settings (temperature, max tokens, extra body fields) and the context window; the message above is what the endpoint said.',
        cause: failure.cause,
        ...(status === undefined ? {} : { status }),
      },
      status,
    );
  }
  return new ModelUnavailableError(
    `The model "${model}" at ${baseUrl} did not answer after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${failure.reason}`,
    {
      fix: 'Check that the model server is running and reachable at the base URL, or raise the retry limits; then run again.',
      cause: failure.cause,
      ...(status === undefined ? {} : { status }),
    },
    status,
  );
}

export function createOpenAIChatModel(options: OpenAIChatModelOptions): LanguageModel {
  assertOpenAIChatModelOptions(options);
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...options.retry };
  const idleTimeoutMs = options.idleTimeoutMs ?? 180_000;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: options.apiKey ?? 'not-needed',
    // One retry policy, ours: the SDK's own retries would multiply with it,
    // could not restart a reply that broke mid-stream, and would not tell the
    // loop (and so the trace) that a retry happened.
    maxRetries: 0,
    timeout: idleTimeoutMs,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  function requestBody(request: ModelRequest): ChatCompletionCreateParamsStreaming {
    return {
      ...options.extraBody,
      model: options.model,
      // DeepAnalyze-8B takes execution results in messages of role `execute`,
      // which the SDK's types do not know; the endpoint gets them as they are.
      messages: request.messages.map(
        (message: ChatMessage) => message as unknown as ChatCompletionMessageParam,
      ),
      stream: true,
      ...(options.includeUsage === false ? {} : { stream_options: { include_usage: true } }),
      ...(request.stop.length > 0 ? { stop: [...request.stop] } : {}),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    };
  }

  async function* stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
    const body = requestBody(request);
    for (let attempt = 1; ; attempt += 1) {
      if (request.signal?.aborted) throw new CancelledError(request.signal.reason);
      const attemptController = new AbortController();
      const forwardAbort = () => attemptController.abort(request.signal?.reason);
      request.signal?.addEventListener('abort', forwardAbort, { once: true });
      let idleTimer: NodeJS.Timeout | undefined;
      let idleTimedOut = false;
      const armIdleTimer = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          idleTimedOut = true;
          attemptController.abort(new Error(`no data for ${idleTimeoutMs} ms`));
        }, idleTimeoutMs);
      };

      let text = '';
      let streamedText = false;
      let finishReason: string | null = null;
      let stopReason: string | number | null | undefined;
      let usage: { promptTokens: number; completionTokens: number } | null = null;
      let failure: unknown = null;
      let completed = false;
      try {
        armIdleTimer();
        const chunks = await client.chat.completions.create(body, { signal: attemptController.signal });
        for await (const raw of chunks) {
          clearTimeout(idleTimer);
          const parsed = chunkSchema.safeParse(raw);
          if (!parsed.success)
            throw new Error('The endpoint sent a chunk that is not a chat-completion chunk.');
          if (parsed.data.usage) {
            usage = {
              promptTokens: Math.round(parsed.data.usage.prompt_tokens),
              completionTokens: Math.round(parsed.data.usage.completion_tokens),
            };
          }
          const choice = parsed.data.choices?.[0];
          const content = choice?.delta?.content;
          if (typeof content === 'string' && content.length > 0) {
            text += content;
            streamedText = true;
            yield { type: 'text-delta', text: content };
          }
          if (choice?.finish_reason) {
            finishReason = choice.finish_reason;
            stopReason = choice.stop_reason;
          }
          armIdleTimer();
        }
        completed = true;
      } catch (error) {
        failure = error;
      } finally {
        clearTimeout(idleTimer);
        request.signal?.removeEventListener('abort', forwardAbort);
        // Also reached when the consumer stops reading early: end the request.
        if (!completed) attemptController.abort();
      }

      if (request.signal?.aborted) throw new CancelledError(request.signal.reason);
      // The SDK ends the stream quietly when its request is aborted, so an idle
      // timeout can look like a completed stream; so can a body cut without a
      // finish chunk. Only a finish reason means the reply is whole.
      if (failure === null && !idleTimedOut && finishReason !== null) {
        const closingTag = closingTagToAppend(text, finishReason, stopReason, request.stop);
        if (closingTag !== null) yield { type: 'text-delta', text: closingTag };
        if (usage !== null) yield { type: 'usage', ...usage };
        yield { type: 'finish', reason: finishReason };
        return;
      }

      const failed = describeFailure(failure, idleTimedOut, idleTimeoutMs);
      if (!failed.retryable || attempt > policy.maxRetries) {
        throw unavailableError(failed, attempt, baseUrl, options.model);
      }
      const delayMs = retryDelayMs(policy, attempt, failed.retryAfterMs);
      yield { type: 'retry', retry: attempt, delayMs, reason: failed.reason, discardText: streamedText };
      await sleep(delayMs, request.signal);
    }
  }

  return {
    id: options.model,
    contextWindowTokens: options.contextWindowTokens ?? 32_768,
    ...(options.maxTokens === undefined ? {} : { maxReplyTokens: options.maxTokens }),
    baseUrl,
    stream,
  };
}
