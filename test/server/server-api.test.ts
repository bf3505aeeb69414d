import { spawnSync } from 'node:child_process';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, DatalystError } from '../../src/errors/index.ts';
import type { LanguageModel, ModelRequest } from '../../src/index.ts';
import {
  chatCompletionChunkSchema,
  createServerApp,
  turnEventSchema,
  type Turn,
} from '../../src/server/index.ts';
import {
  readSse,
  scriptedModel,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

const csv = 'region,units\nnorth,10\nsouth,7\n';
let current: TestServer[] = [];

async function serve(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  current.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const clientFor = (server: TestServer, apiKey = 'unused') =>
  new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });

async function upload(server: TestServer, name = 'sales.csv', body = csv): Promise<string> {
  const file = await clientFor(server).files.create({
    file: await toFile(Buffer.from(body), name),
    purpose: 'assistants',
  });
  return file.id;
}

async function waitForTurn(
  server: TestServer,
  threadId: string,
  index: number,
  status: string,
): Promise<Turn> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const turn = (await (await fetch(`${server.url}/v1/threads/${threadId}/turns/${index}`)).json()) as Turn;
    if (turn.status === status) return turn;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`turn ${index} never reached ${status}`);
}

/** POST /v1/threads with these files; the thread as the server describes it. */
async function createThread(
  server: TestServer,
  fileIds: string[] = [],
): Promise<{ id: string; files: unknown[] }> {
  const response = await fetch(`${server.url}/v1/threads`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ file_ids: fileIds }),
  });
  return (await response.json()) as { id: string; files: unknown[] };
}

async function startSlowTurn(server: TestServer): Promise<{ threadId: string }> {
  const thread = await createThread(server);
  const response = await fetch(`${server.url}/v1/threads/${thread.id}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ question: 'a slow question' }),
  });
  expect(response.status).toBe(202);
  return { threadId: thread.id };
}

describe('datalyst serve: meta', () => {
  it('answers /health, lists the model, and serves an OpenAPI document built from the schemas', async () => {
    const server = await serve();
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({
      status: 'healthy',
      turns: { running: 0, queued: 0 },
    });
    const models = await clientFor(server).models.list();
    expect(models.data.map((model) => model.id)).toEqual(['scripted-test-model']);
    const openApi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(openApi.openapi).toBe('3.1.0');
    expect(Object.keys(openApi.paths)).toEqual(
      expect.arrayContaining([
        '/v1/files',
        '/v1/chat/completions',
        '/v1/threads/{threadId}/turns/{index}/events',
      ]),
    );
    expect(Object.keys(openApi.components.schemas)).toEqual(
      expect.arrayContaining([
        'FileObject',
        'ChatCompletionRequest',
        'ChatCompletionChunk',
        'Turn',
        'TurnEvent',
        'Thread',
      ]),
    );
  });
});

describe('datalyst serve: files', () => {
  it('stores uploads by content and serves them back with the openai client', async () => {
    const server = await serve();
    const client = clientFor(server);
    const first = await client.files.create({
      file: await toFile(Buffer.from(csv), 'sales.csv'),
      purpose: 'assistants',
    });
    const second = await client.files.create({
      file: await toFile(Buffer.from(csv), 'copy.csv'),
      purpose: 'user_data',
    });
    expect(first).toMatchObject({
      object: 'file',
      bytes: csv.length,
      filename: 'sales.csv',
      purpose: 'assistants',
    });
    expect(second.purpose).toBe('user_data');
    expect(first.id).not.toBe(second.id);
    expect((first as unknown as { sha256: string }).sha256).toBe(
      (second as unknown as { sha256: string }).sha256,
    );
    // Newest first, as OpenAI's list calls answer.
    expect((await client.files.list()).data.map((file) => file.id)).toEqual([second.id, first.id]);
    expect((await client.files.retrieve(first.id)).filename).toBe('sales.csv');
    expect(await (await client.files.content(first.id)).text()).toBe(csv);
    // Same bytes twice: one blob on disk.
    const blob = await readFile(
      path.join(server.dataDir, 'files', 'blobs', (first as unknown as { sha256: string }).sha256),
      'utf8',
    );
    expect(blob).toBe(csv);
    expect(await client.files.delete(first.id)).toMatchObject({ id: first.id, deleted: true });
    expect(await (await client.files.content(second.id)).text()).toBe(csv);
    await expect(client.files.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses wrong types (415), oversize files (413) and names that are paths (400)', async () => {
    const server = await serve({ maxFileBytes: 1024 });
    const form = (name: string, body: string) => {
      const data = new FormData();
      data.append('file', new Blob([body]), name);
      return fetch(`${server.url}/v1/files`, { method: 'POST', body: data });
    };
    const exe = await form('tool.exe', 'MZ');
    expect(exe.status).toBe(415);
    expect(((await exe.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const json = await fetch(`${server.url}/v1/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
    const xml = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<a/>',
    });
    expect(xml.status).toBe(415);
    const big = await form('big.csv', 'a'.repeat(4096));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toContain('1024');
    for (const name of ['../escape.csv', '/etc/passwd.csv', '..%2Fescape.csv', 'a\\b.csv', '.hidden.csv']) {
      const response = await form(name, csv);
      expect(response.status, name).toBe(400);
    }
    // Nothing refused was kept.
    expect((await clientFor(server).files.list()).data).toEqual([]);
  });

  it('answers 404 for unknown ids of every kind', async () => {
    const server = await serve();
    for (const url of [
      '/v1/files/file-000000000000000000000000',
      '/v1/files/not-an-id/content',
      '/v1/threads/thread-000000000000000000000000',
      '/v1/threads/thread-000000000000000000000000/turns/1/events',
      '/v1/nothing-here',
    ]) {
      const response = await fetch(`${server.url}${url}`);
      expect(response.status, url).toBe(404);
    }
    const completion = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'x',
        messages: [{ role: 'user', content: 'hi', file_ids: ['file-000000000000000000000000'] }],
      }),
    });
    expect(completion.status).toBe(404);
    expect((await (await fetch(`${server.url}/v1/threads`)).json()) as { data: unknown[] }).toMatchObject({
      data: [],
    });
  });

  it('says what is wrong with a malformed id or an empty question, and what one looks like', async () => {
    const server = await serve();
    const post = async (route: string, body: unknown) => {
      const response = await fetch(`${server.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        message: ((await response.json()) as { error: { message: string } }).error.message,
      };
    };
    const badThread = await post('/v1/chat/completions', {
      model: 'x',
      messages: [{ role: 'user', content: 'hi', thread_id: 'thread-nope' }],
    });
    expect(badThread.status).toBe(400);
    expect(badThread.message).toContain(
      'messages.0.thread_id: not a thread id (one looks like thread-0123456789abcdef01234567',
    );
    const badFile = await post('/v1/chat/completions', {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      file_ids: ['file-nope'],
    });
    expect(badFile.message).toContain(
      'file_ids.0: not a file id (one looks like file-0123456789abcdef01234567, from POST /v1/files)',
    );
    const thread = (await (await fetch(`${server.url}/v1/threads`, { method: 'POST' })).json()) as {
      id: string;
    };
    const blank = await post(`/v1/threads/${thread.id}/turns`, { question: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.message).toContain(
      'question: the question is empty or only spaces: put its text in `question`',
    );
    const missing = await post(`/v1/threads/${thread.id}/turns`, {});
    expect(missing.message).toContain('question: the question is missing: send it as text in `question`');
  });
});

describe('datalyst serve: DeepAnalyze-compatible chat completions', () => {
  it('answers with the tagged text, the <Execute> block, the thread and the generated files', async () => {
    const server = await serve();
    const fileId = await upload(server);
    const client = clientFor(server);
    const response = await client.chat.completions.create({
      model: 'DeepAnalyze-8B',
      messages: [{ role: 'user', content: 'please write the totals', file_ids: [fileId] } as never],
    });
    const message = response.choices[0]?.message as unknown as {
      content: string;
      thread_id: string;
      files: { name: string; url: string }[];
    };
    expect(message.content).toBe(
      '<Analyze>Save it.</Analyze><Code>\nwrite()\n</Code>\n<Execute>\n```\ncell-output wrote out.csv\n\n[files written: out.csv (created, 22 B)]\n```\n</Execute>\n<Answer>The mean is 42.</Answer>',
    );
    expect(message.thread_id).toMatch(/^thread-/);
    expect(message.files.map((file) => file.name)).toEqual(['out.csv', 'report-turn-1.html']);
    const artifact = await fetch(message.files[0]?.url ?? '');
    expect(artifact.status).toBe(200);
    expect(await artifact.text()).toBe('region,total\nnorth,18\n');
    expect((response as unknown as { attached_files: string[] }).attached_files).toEqual([fileId]);
    // The sandbox saw only this thread's files.
    expect(server.sandbox.sessions[0]?.openedWith.workspaceDir).toBe(
      path.join(server.dataDir, 'threads', message.thread_id, 'workspace'),
    );
  });

  it('streams chunks and ends with files and thread_id; a follow-up with thread_id stays in the thread', async () => {
    const server = await serve();
    const fileId = await upload(server);
    const client = clientFor(server);
    const stream = await client.chat.completions.create({
      model: 'DeepAnalyze-8B',
      stream: true,
      messages: [{ role: 'user', content: 'what is the mean?' }],
      file_ids: [fileId],
    } as never);
    let text = '';
    let last: unknown = null;
    for await (const chunk of stream as unknown as AsyncIterable<{
      choices: { delta: { content?: string } }[];
    }>) {
      chatCompletionChunkSchema.parse(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
      last = chunk;
    }
    expect(text).toContain('<Execute>\n```\ncell-output 42\n\n```\n</Execute>');
    const final = last as {
      choices: { delta: { thread_id: string; files: unknown[] }; finish_reason: string }[];
    };
    expect(final.choices[0]?.finish_reason).toBe('stop');
    const threadId = final.choices[0]?.delta.thread_id ?? '';
    expect(threadId).toMatch(/^thread-/);
    expect(final.choices[0]?.delta.files).toEqual([
      {
        name: 'report-turn-1.html',
        url: `${server.url}/v1/threads/${threadId}/turns/1/report?format=html`,
      },
    ]);

    const followUp = await client.chat.completions.create({
      model: 'DeepAnalyze-8B',
      messages: [{ role: 'user', content: 'and again?', thread_id: threadId } as never],
    });
    const followUpMessage = followUp.choices[0]?.message as unknown as {
      thread_id: string;
      files: { name: string }[];
    };
    expect(followUpMessage.thread_id).toBe(threadId);
    // Each turn's report has its own name: a client saving files by name keeps the first one.
    expect(followUpMessage.files.map((file) => file.name)).toEqual(['report-turn-2.html']);
    const thread = (await (await fetch(`${server.url}/v1/threads/${threadId}`)).json()) as {
      turns: Turn[];
      files: { id: string }[];
    };
    expect(thread.turns.map((turn) => [turn.index, turn.status, turn.termination?.reason])).toEqual([
      [1, 'finished', 'answered'],
      [2, 'finished', 'answered'],
    ]);
    expect(thread.files.map((file) => file.id)).toEqual([fileId]);
  });

  it('ends the reply with why there is no answer, streamed or not (the openai client shows content, not termination)', async () => {
    // A model that only ever thinks aloud: the turn stops for lack of progress, without an answer.
    const ponderer = (): LanguageModel => ({
      id: 'ponderer',
      contextWindowTokens: 32_768,
      async *stream() {
        yield { type: 'text-delta', text: '<Analyze>Let me think.</Analyze>' };
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const server = await serve({ createModel: ponderer });
    const fileId = await upload(server);
    const client = clientFor(server);
    const whole = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'what is the mean?', file_ids: [fileId] } as never],
    });
    const content = whole.choices[0]?.message.content ?? '';
    expect(content).toMatch(/^<Analyze>Let me think\.<\/Analyze>/);
    expect(content).toMatch(/\n\nNo answer \(no-progress\): .+$/);

    const stream = await client.chat.completions.create({
      model: 'x',
      stream: true,
      messages: [{ role: 'user', content: 'and the median?', file_ids: [fileId] } as never],
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    expect(streamed).toMatch(/\n\nNo answer \(no-progress\): .+$/);
  });

  it('cancels the turn when a streaming client disconnects', async () => {
    const server = await serve();
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', stream: true, messages: [{ role: 'user', content: 'a slow one' }] }),
      signal: controller.signal,
    });
    await readSse(response, 3);
    controller.abort();
    const threads = async () =>
      ((await (await fetch(`${server.url}/v1/threads`)).json()) as { data: { id: string }[] }).data;
    const threadId = (await threads())[0]?.id ?? '';
    const turn = await waitForTurn(server, threadId, 1, 'cancelled');
    expect(turn.termination?.reason).toBe('cancelled');
    // The sandbox goes back once the turn has ended.
    for (
      let attempt = 0;
      attempt < 100 && !server.sandbox.sessions.every((session) => session.closed);
      attempt += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.sandbox.sessions.length).toBe(1);
    expect(server.sandbox.sessions.every((session) => session.closed)).toBe(true);
  });
});

describe('datalyst serve: threads, turns and their events', () => {
  it('frames turn events as SSE with ids, and re-attaches after a dropped connection with Last-Event-ID', async () => {
    const server = await serve();
    const fileId = await upload(server);
    const thread = await createThread(server, [fileId]);
    expect(thread.files).toHaveLength(1);
    const turn = (await (
      await fetch(`${server.url}/v1/threads/${thread.id}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'what is the mean?' }),
      })
    ).json()) as Turn;
    expect(turn.index).toBe(1);
    expect(['queued', 'running']).toContain(turn.status);

    const first = await fetch(turn.events_url);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const head = await readSse(first, 4);
    expect(head.raw).toMatch(/^id: 1\ndata: \{.*\}\n\nid: 2\ndata: /);
    expect(head.events.map((event) => event.id)).toEqual(['1', '2', '3', '4']);
    const rest = await readSse(await fetch(turn.events_url, { headers: { 'Last-Event-ID': '4' } }));
    const all = [...head.events, ...rest.events].map((event) =>
      turnEventSchema.parse(JSON.parse(event.data)),
    );
    expect(all.map((event) => event.seq)).toEqual(all.map((_, index) => index + 1));
    expect(all[0]?.type).toBe('turn-queued');
    expect(all.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'turn-running',
        'run-start',
        'turn-start',
        'execution-end',
        'answer-end',
        'turn-end',
      ]),
    );
    expect(all.at(-1)).toMatchObject({
      type: 'turn-done',
      status: 'finished',
      termination: { reason: 'answered' },
    });
    // A finished turn replays from disk, from any point.
    const replay = await readSse(await fetch(`${turn.events_url}?after=${all.length - 1}`));
    expect(replay.events.map((event) => event.id)).toEqual([String(all.length)]);

    const report = await fetch(`${server.url}/v1/threads/${thread.id}/report?format=md`);
    expect(report.status).toBe(200);
    expect(report.headers.get('content-security-policy')).toMatch(/default-src 'none'.*; sandbox$/);
    expect(await report.text()).toContain('The mean is 42.');
  });

  it('joins a burst of text deltas into one event with the exact text, and takes a question asked the moment turn-done arrives', async () => {
    // A model that yields each reply at once, in 4-character pieces (as the offline analyst does).
    const reply = (request: ModelRequest) =>
      request.messages.at(-1)?.content.includes('cell-output') === true
        ? '<Answer>The mean is 42.</Answer>'
        : '<Analyze>Look at the data.</Analyze><Code>\nprint(42)\n</Code>';
    const bursty: LanguageModel = {
      id: 'bursty-model',
      contextWindowTokens: 32_768,
      async *stream(request) {
        const text = reply(request);
        for (let at = 0; at < text.length; at += 4)
          yield { type: 'text-delta', text: text.slice(at, at + 4) };
        yield { type: 'finish', reason: 'stop' };
      },
    };
    const server = await serve({ createModel: () => bursty });
    const fileId = await upload(server);
    const thread = await createThread(server, [fileId]);
    for (let index = 1; index <= 4; index += 1) {
      // Asked as soon as the previous turn's turn-done was read: never 409 while that turn closes its log.
      const posted = await fetch(`${server.url}/v1/threads/${thread.id}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: `question ${index}` }),
      });
      expect(posted.status).toBe(202);
      const { events_url } = (await posted.json()) as Turn;
      const events = (await readSse(await fetch(events_url))).events.map((event) =>
        turnEventSchema.parse(JSON.parse(event.data)),
      );
      expect(events.at(-1)).toMatchObject({ type: 'turn-done', status: 'finished' });
      const deltas = events.filter((event) => event.type === 'text-delta') as unknown as {
        tag: string;
        text: string;
      }[];
      // One event per step (analyze, code, answer) instead of one per 4-character piece, the text exact.
      expect(deltas.map((delta) => delta.tag)).toEqual(['analyze', 'code', 'answer']);
      expect(deltas.map((delta) => delta.text).join('')).toBe(
        'Look at the data.\nprint(42)\nThe mean is 42.',
      );
    }
  });

  it('cancels a running turn, refuses a second turn on a busy thread (409), and deletes threads', async () => {
    const server = await serve();
    const { threadId } = await startSlowTurn(server);
    await waitForTurn(server, threadId, 1, 'running');
    const busy = await fetch(`${server.url}/v1/threads/${threadId}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'another' }),
    });
    expect(busy.status).toBe(409);
    const cancelled = (await (
      await fetch(`${server.url}/v1/threads/${threadId}/turns/1/cancel`, { method: 'POST' })
    ).json()) as Turn & { cancelled: boolean };
    expect(cancelled).toMatchObject({
      cancelled: true,
      status: 'cancelled',
      termination: { reason: 'cancelled' },
    });
    expect((await fetch(`${server.url}/v1/threads/${threadId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/threads/${threadId}`)).status).toBe(404);
  });

  it('runs at most N turns, queues the next ones, and answers 429 with Retry-After past the queue', async () => {
    const server = await serve({ maxConcurrentTurns: 1, maxQueuedTurns: 1, retryAfterSeconds: 7 });
    const running = await startSlowTurn(server);
    await waitForTurn(server, running.threadId, 1, 'running');
    const queued = await startSlowTurn(server);
    const health = (await (await fetch(`${server.url}/health`)).json()) as {
      turns: { running: number; queued: number };
    };
    expect(health.turns).toEqual({ running: 1, queued: 1 });
    const refused = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('7');
    // The refused completion left no thread behind.
    expect(
      ((await (await fetch(`${server.url}/v1/threads`)).json()) as { data: unknown[] }).data,
    ).toHaveLength(2);
    await fetch(`${server.url}/v1/threads/${running.threadId}/turns/1/cancel`, { method: 'POST' });
    await waitForTurn(server, queued.threadId, 1, 'running');
    await fetch(`${server.url}/v1/threads/${queued.threadId}/turns/1/cancel`, { method: 'POST' });
  });

  it('refuses artifact paths that leave the artifacts folder, however they are spelt', async () => {
    const server = await serve();
    const response = await clientFor(server).chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'write it' }],
    });
    const threadId = (response.choices[0]?.message as unknown as { thread_id: string }).thread_id;
    const base = `${server.url}/v1/threads/${threadId}/turns/1/artifacts`;
    expect((await fetch(`${base}/out.csv`)).status).toBe(200);
    for (const attack of [
      '..%2f..%2fturn.json',
      '%2e%2e/%2e%2e/turn.json',
      '..%252f..%252fturn.json',
      'a/..%2f..%2f..%2fthread.json',
      '%2fetc%2fpasswd',
    ]) {
      const status = (await fetch(`${base}/${attack}`)).status;
      expect([400, 404], attack).toContain(status);
      expect(status, attack).not.toBe(200);
    }
    expect((await fetch(`${base}/missing.csv`)).status).toBe(404);
  });
});

describe('datalyst serve: idle threads and limits', () => {
  it("gives an idle thread's sandbox back and resumes the thread by replay on the next question", async () => {
    const server = await serve({ idleTimeoutMs: 50 });
    const client = clientFor(server);
    const first = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'mean?' }],
    });
    const threadId = (first.choices[0]?.message as unknown as { thread_id: string }).thread_id;
    for (
      let attempt = 0;
      attempt < 100 && server.sandbox.sessions.some((session) => !session.closed);
      attempt += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.sandbox.sessions.map((session) => session.closed)).toEqual([true]);
    const thread = (await (await fetch(`${server.url}/v1/threads/${threadId}`)).json()) as {
      sandbox_open: boolean;
    };
    expect(thread.sandbox_open).toBe(false);
    const next = await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'again', thread_id: threadId } as never],
    });
    expect(next.choices[0]?.message.content).toContain('<Answer>The mean is 42.</Answer>');
    // A fresh session, into which the first question's cell was replayed before the new one ran.
    expect(server.sandbox.sessions).toHaveLength(2);
    expect(server.sandbox.sessions[1]?.executed).toEqual(['print(42)', 'print(42)']);
    const events = await readSse(await fetch(`${server.url}/v1/threads/${threadId}/turns/2/events`));
    const types = events.events.map((event) => (JSON.parse(event.data) as { type: string }).type);
    expect(types).toEqual(expect.arrayContaining(['replay-start', 'replay-end']));
    expect(JSON.parse(events.events[1]?.data ?? '{}')).toMatchObject({ type: 'turn-running', resumed: true });
  });

  it("answers 413 with the limit when a thread's files would pass its byte limit, and keeps threads apart", async () => {
    const server = await serve({ maxThreadBytes: 40 });
    const small = await upload(server, 'small.csv', 'a,b\n1,2\n');
    const large = await upload(server, 'large.csv', `a,b\n${'1,2\n'.repeat(20)}`);
    const json = (body: unknown) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const refused = await fetch(`${server.url}/v1/threads`, json({ file_ids: [small, large] }));
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('40');
    const one = (await (await fetch(`${server.url}/v1/threads`, json({ file_ids: [small] }))).json()) as {
      id: string;
    };
    const other = (await (await fetch(`${server.url}/v1/threads`, json({ file_ids: [] }))).json()) as {
      id: string;
    };
    expect(await readdir(path.join(server.dataDir, 'threads', one.id, 'workspace'))).toEqual(['small.csv']);
    expect(await readdir(path.join(server.dataDir, 'threads', other.id, 'workspace'))).toEqual([]);
    // Another thread's artifacts are not reachable through this thread's URLs.
    const escape = await fetch(
      `${server.url}/v1/threads/${other.id}/turns/1/artifacts/..%2f..%2f..%2f${one.id}%2fthread.json`,
    );
    expect(escape.status).not.toBe(200);
  });

  it('gives a refused follow-up its place in the turn queue back (it stayed taken: a few 413s made every turn 429)', async () => {
    const server = await serve({ maxThreadBytes: 40, maxConcurrentTurns: 1, maxQueuedTurns: 1 });
    const small = await upload(server, 'small.csv', 'a,b\n1,2\n');
    const large = await upload(server, 'large.csv', `a,b\n${'1,2\n'.repeat(20)}`);
    const json = (body: unknown) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const thread = (await (await fetch(`${server.url}/v1/threads`, json({ file_ids: [small] }))).json()) as {
      id: string;
    };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await fetch(
        `${server.url}/v1/threads/${thread.id}/turns`,
        json({ question: 'Describe the data.', file_ids: [large] }),
      );
      expect(refused.status).toBe(413);
    }
    const asked = await fetch(
      `${server.url}/v1/threads/${thread.id}/turns`,
      json({ question: 'Describe the data.' }),
    );
    expect(asked.status).toBe(202);
    const { index } = (await asked.json()) as { index: number };
    await waitForTurnStatus(server.url, thread.id, index, 'finished');
  });
});

describe('datalyst serve: access', () => {
  it('refuses to start off the default loopback addresses without a key', async () => {
    const dataDir = (await serve()).dataDir;
    const attempt = createServerApp({
      dataDir,
      host: '127.0.0.2',
      modelId: 'x',
      engine: { createModel: scriptedModel },
    });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toSatisfy(
      (error: unknown) => DatalystError.isInstance(error) && error.code === 'CONFIG_INVALID',
    );
  });

  it('on 127.0.0.2 asks every call but /health for the bearer key (401 without it or with a wrong one)', async () => {
    const apiKey = 'k'.repeat(40);
    const server = await serve({ host: '127.0.0.2', apiKey });
    expect(server.url).toContain('127.0.0.2');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/files`)).status).toBe(401);
    expect(
      (await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${'k'.repeat(39)}x` } }))
        .status,
    ).toBe(401);
    expect((await fetch(`${server.url}/v1/files`, { headers: { authorization: apiKey } })).status).toBe(401);
    await expect(clientFor(server, 'wrong-key').models.list()).rejects.toMatchObject({ status: 401 });
    expect((await clientFor(server, apiKey).models.list()).data).toHaveLength(1);
  });
});

/** Makes the data folder's lock name a process that is gone, as a crash leaves it. */
async function playCrashedLock(dataDir: string): Promise<void> {
  const lockDir = path.join(dataDir, 'server.lock');
  const [generation] = (await readdir(lockDir)).filter((name) => /^\d+\.json$/.test(name));
  if (generation === undefined) throw new Error('no lock');
  const lock = JSON.parse(await readFile(path.join(lockDir, generation), 'utf8')) as Record<string, unknown>;
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  await writeFile(path.join(lockDir, generation), JSON.stringify({ ...lock, pid: gone }));
}

describe('datalyst serve: persistence', () => {
  it('keeps files and finished turns across a restart and marks the turn that was running as interrupted', async () => {
    // Not closed (a crash is what it plays): its folder goes once the second server, which uses it too, has closed.
    const first = await startTestServer();
    onTestFinished(() => rm(first.dataDir, { recursive: true, force: true }));
    const fileId = await upload(first);
    const done = await clientFor(first).chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'mean?', file_ids: [fileId] } as never],
    });
    const doneThread = (done.choices[0]?.message as unknown as { thread_id: string }).thread_id;
    const { threadId } = await startSlowTurn(first);
    await waitForTurn(first, threadId, 1, 'running');
    // A crashed server writes nothing more; this one, still running, writes the turn's first events (flushed
    // every TURN_LOG_FLUSH_MS) until its cell starts, then nothing until the cell ends: had those lines come
    // after the second server's turn-done, the log would end with them (1 run in 5).
    const firstEvents = path.join(first.dataDir, 'threads', threadId, 'turns', '1', 'events.jsonl');
    await expect
      .poll(() => readFile(firstEvents, 'utf8').catch(() => ''), { timeout: 10_000 })
      .toContain('"type":"execution-start"');
    // A second server on the same folder is what a restart after a crash sees: the first never ended its turn,
    // and its lock names a process that is gone (a dead pid put in it, as a crash leaves it).
    await playCrashedLock(first.dataDir);
    const second = await serve({ dataDir: first.dataDir });
    expect(second.server.interruptedOnStart).toBe(1);
    await first.server.app.close();
    expect(await (await clientFor(second).files.content(fileId)).text()).toBe(csv);
    const finished = (await (await fetch(`${second.url}/v1/threads/${doneThread}`)).json()) as {
      turns: Turn[];
    };
    expect(finished.turns[0]).toMatchObject({ status: 'finished', answer: 'The mean is 42.' });
    const interrupted = (await (await fetch(`${second.url}/v1/threads/${threadId}/turns/1`)).json()) as Turn;
    expect(interrupted).toMatchObject({ status: 'interrupted', termination: { reason: 'interrupted' } });
    const events = await readSse(await fetch(interrupted.events_url));
    // When it began is kept although the running turn's record was never saved: its turn-running event says.
    const running = events.events
      .map((event) => JSON.parse(event.data) as { type: string; started_at?: number })
      .find((event) => event.type === 'turn-running');
    expect(running?.started_at).toEqual(expect.any(Number));
    expect(interrupted.started_at).toBe(running?.started_at);
    expect(interrupted.ended_at).toBeGreaterThanOrEqual(interrupted.started_at ?? Infinity);
    expect(JSON.parse(events.events.at(-1)?.data ?? '{}')).toMatchObject({
      type: 'turn-done',
      status: 'interrupted',
    });
    // The thread goes on.
    const next = await clientFor(second).chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'again', thread_id: threadId } as never],
    });
    expect(next.choices[0]?.message.content).toContain('<Answer>The mean is 42.</Answer>');
    first.server.threads.cancel(threadId, 1);
  });
});
