import { afterEach, describe, expect, it } from 'vitest';
import { closingTagToAppend, createOpenAIChatModel } from '../../src/agent/openai-chat-model.ts';
import type { ModelChunk, ModelRequest } from '../../src/agent/language-model.ts';
import type { DatalystError } from '../../src/errors/index.ts';
import { CancelledError, ModelUnavailableError } from '../../src/errors/index.ts';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
} from '../support/fake-openai-server.ts';

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(options: FakeOpenAIServerOptions): Promise<FakeOpenAIServer> {
  server = await startFakeOpenAIServer(options);
  return server;
}

const request: ModelRequest = {
  messages: [{ role: 'user', content: '# Instruction\nHi\n\n# Data\n' }],
  stop: ['</Code>', '</Answer>'],
};

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function textOf(chunks: readonly ModelChunk[]): string {
  let text = '';
  for (const chunk of chunks) {
    if (chunk.type === 'retry' && chunk.discardText) text = '';
    if (chunk.type === 'text-delta') text += chunk.text;
  }
  return text;
}

const fastRetry = { maxRetries: 3, initialDelayMs: 5, maxDelayMs: 2_000 };

describe('OpenAI chat model over HTTP', () => {
  it('streams a reply, stops at </Code> and re-appends the tag (vLLM stop_reason)', async () => {
    const fake = await serve({
      script: [
        {
          type: 'text',
          text: '<Analyze>plan</Analyze>\n<Code>\nprint(1)\n</Code>\n<Execute>made up</Execute>',
          chunkChars: 3,
        },
      ],
    });
    const model = createOpenAIChatModel({
      baseUrl: fake.baseUrl,
      model: 'deepanalyze-8b',
      apiKey: 'secret',
      temperature: 0.5,
      maxTokens: 4096,
      extraBody: { top_k: 20, add_generation_prompt: false },
    });
    const chunks = await collect(
      model.stream({
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: '<Code>print(0)</Code>' },
          { role: 'execute', content: '0' },
        ],
        stop: ['</Code>', '</Answer>'],
      }),
    );
    expect(textOf(chunks)).toBe('<Analyze>plan</Analyze>\n<Code>\nprint(1)\n</Code>');
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(chunks.some((chunk) => chunk.type === 'usage')).toBe(true);

    const body = fake.completionRequests[0]?.body;
    expect(body).toMatchObject({
      model: 'deepanalyze-8b',
      stream: true,
      stop: ['</Code>', '</Answer>'],
      temperature: 0.5,
      max_tokens: 4096,
      top_k: 20,
      add_generation_prompt: false,
    });
    expect(body?.messages?.map((message) => message.role)).toEqual(['user', 'assistant', 'execute']);
    expect(fake.completionRequests[0]?.headers.authorization).toBe('Bearer secret');
  });

  it('re-appends the tag when the server does not say which stop string it hit (OpenAI-like)', async () => {
    const fake = await serve({
      script: [{ type: 'text', text: '<Answer>42</Answer> trailing', sendStopReason: false }],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'gpt' });
    expect(textOf(await collect(model.stream(request)))).toBe('<Answer>42</Answer>');
  });

  it('reads odd usage counts leniently instead of failing the reply', async () => {
    const fake = await serve({
      script: [
        { type: 'text', text: '<Answer>x</Answer>', usage: { promptTokens: 10.6, completionTokens: -1 } },
      ],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm' });
    const chunks = await collect(model.stream(request));
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({
      type: 'usage',
      promptTokens: 11,
      completionTokens: 0,
    });
  });

  it('appends nothing when the reply ran out of tokens inside a tag', async () => {
    const fake = await serve({ script: [{ type: 'text', text: '<Code>\nprint(', finishReason: 'length' }] });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'gpt' });
    const chunks = await collect(model.stream(request));
    expect(textOf(chunks)).toBe('<Code>\nprint(');
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('retries a 429 after the time Retry-After asks for, then succeeds', async () => {
    const fake = await serve({
      script: [
        { type: 'error', status: 429, retryAfter: '1', message: 'slow down' },
        { type: 'text', text: '<Answer>ok</Answer>' },
      ],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm', retry: fastRetry });
    const chunks = await collect(model.stream(request));
    expect(chunks[0]).toMatchObject({ type: 'retry', retry: 1, delayMs: 1000, discardText: false });
    expect(textOf(chunks)).toBe('<Answer>ok</Answer>');
    expect(fake.completionRequests).toHaveLength(2);
    const waited = (fake.completionRequests[1]?.at ?? 0) - (fake.completionRequests[0]?.at ?? 0);
    expect(waited).toBeGreaterThanOrEqual(990);
  });

  it('caps a long Retry-After at maxDelayMs', async () => {
    const fake = await serve({
      script: [
        { type: 'error', status: 503, retryAfter: '3600' },
        { type: 'text', text: '<Answer>ok</Answer>' },
      ],
    });
    const model = createOpenAIChatModel({
      baseUrl: fake.baseUrl,
      model: 'm',
      retry: { ...fastRetry, maxDelayMs: 20 },
    });
    const chunks = await collect(model.stream(request));
    expect(chunks[0]).toMatchObject({ type: 'retry', delayMs: 20 });
  });

  it('gives up on a 500 storm with ModelUnavailableError after maxRetries', async () => {
    const fake = await serve({ script: [], whenExhausted: { type: 'error', status: 500, message: 'boom' } });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm', retry: fastRetry });
    const error = await collect(model.stream(request)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error).toMatchObject({ code: 'MODEL_UNAVAILABLE', fault: 'third-party', status: 500 });
    expect((error as DatalystError).message).toContain('4 attempts');
    expect(fake.completionRequests).toHaveLength(4);
  });

  it('says the model does not exist on a 404, without retrying', async () => {
    const fake = await serve({ models: ['deepanalyze-8b'] });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'no-such-model', retry: fastRetry });
    const error = await collect(model.stream(request)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error).toMatchObject({ status: 404 });
    expect((error as DatalystError).message).toContain('no-such-model');
    expect((error as DatalystError).fix).toContain('/models');
    expect(fake.completionRequests).toHaveLength(1);
  });

  it('does not retry a 400 and reports what the endpoint said', async () => {
    const fake = await serve({
      script: [{ type: 'error', status: 400, message: 'max_tokens is too large' }],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm', retry: fastRetry });
    const error = await collect(model.stream(request)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_UNAVAILABLE', status: 400 });
    expect((error as Error).message).toContain('max_tokens is too large');
    expect(fake.completionRequests).toHaveLength(1);
  });

  it('starts the reply over when the stream is cut mid-text or the connection resets', async () => {
    const fake = await serve({
      script: [
        { type: 'text', text: '<Analyze>first try</Analyze>', cut: { afterChars: 12, how: 'end' } },
        { type: 'text', text: '<Analyze>second try</Analyze>', cut: { afterChars: 5, how: 'reset' } },
        { type: 'reset' },
        { type: 'text', text: '<Analyze>third</Analyze><Answer>done</Answer>' },
      ],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm', retry: fastRetry });
    const chunks = await collect(model.stream(request));
    const retries = chunks.filter((chunk) => chunk.type === 'retry');
    expect(retries.map((retry) => retry.discardText)).toEqual([true, true, false]);
    expect(textOf(chunks)).toBe('<Analyze>third</Analyze><Answer>done</Answer>');
  });

  it('abandons a request that sends nothing for idleTimeoutMs and retries', async () => {
    const fake = await serve({ script: [{ type: 'hang' }, { type: 'text', text: '<Answer>late</Answer>' }] });
    const model = createOpenAIChatModel({
      baseUrl: fake.baseUrl,
      model: 'm',
      retry: fastRetry,
      idleTimeoutMs: 200,
    });
    const chunks = await collect(model.stream(request));
    expect(chunks[0]).toMatchObject({ type: 'retry', reason: expect.stringContaining('200 ms') });
    expect(textOf(chunks)).toBe('<Answer>late</Answer>');
  });

  it('reports an endpoint that refuses connections as unavailable', async () => {
    const fake = await serve({});
    const baseUrl = fake.baseUrl;
    await fake.close();
    server = undefined;
    const model = createOpenAIChatModel({
      baseUrl,
      model: 'm',
      retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 },
    });
    const error = await collect(model.stream(request)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as DatalystError).message).toContain('2 attempts');
  });

  it('throws CancelledError when the signal aborts mid-stream', async () => {
    const fake = await serve({
      script: [{ type: 'text', text: 'x'.repeat(200), chunkChars: 1, chunkDelayMs: 10 }],
    });
    const model = createOpenAIChatModel({ baseUrl: fake.baseUrl, model: 'm' });
    const controller = new AbortController();
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const chunk of model.stream({ ...request, signal: controller.signal })) {
        seen.push(chunk);
        if (seen.length === 3) controller.abort();
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CancelledError);
    expect(fake.completionRequests).toHaveLength(1);
  });
});

describe('closingTagToAppend', () => {
  const stop = ['</Code>', '</Answer>'];
  it('uses vLLM stop_reason when present', () => {
    expect(closingTagToAppend('<Code>x', 'stop', '</Code>', stop)).toBe('</Code>');
    expect(closingTagToAppend('<Code>x', 'stop', null, stop)).toBeNull();
    expect(closingTagToAppend('<Code>x', 'length', '</Code>', stop)).toBeNull();
  });
  it('falls back to the open tag when the server does not say', () => {
    expect(closingTagToAppend('<Answer>x', 'stop', undefined, stop)).toBe('</Answer>');
    expect(closingTagToAppend('<Code>a</Code><Answer>x</Answer>', 'stop', undefined, stop)).toBeNull();
    expect(closingTagToAppend('<Analyze>only</Analyze>', 'stop', undefined, stop)).toBeNull();
  });
});
