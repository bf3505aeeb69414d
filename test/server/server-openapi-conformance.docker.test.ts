import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorFor } from '../support/json-schema-validator.ts';
import { rawRequest } from './support/raw-http.ts';
import {
  answerReply as answer,
  codeReply as code,
  readSse,
  startScriptedDockerServer,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

/**
 * Real answers, turns run in the real sandbox, checked against the schemas of
 * the served /openapi.json as a generated client would check them. The final
 * streamed chunk carried a `termination` the ChatCompletionChunk schema did
 * not have (and it forbids extra fields): strict clients rejected it.
 */

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
  components: object;
}

let server: ScriptedDockerServer;
let document: OpenApiDocument;

/** The schema the document gives for this answer, with the document's components beside it for its $refs. */
function check(path: string, method: string, status: string, type: string, value: unknown): string[] {
  const schema = document.paths[path]?.[method]?.responses[status]?.content?.[type]?.schema;
  if (schema === undefined) return [`no ${type} schema for ${method} ${path} ${status}`];
  return validatorFor({ ...schema, components: document.components })(value);
}

const json = 'application/json';
const sse = 'text/event-stream';

async function upload(): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob(['region,units\nnorth,10\nsouth,7\n']), 'sales.csv');
  const response = await fetch(`${server.url}/v1/files`, { method: 'POST', body: form });
  const body: unknown = await response.json();
  expect(check('/v1/files', 'post', '200', json, body)).toEqual([]);
  return (body as { id: string }).id;
}

beforeAll(async () => {
  server = await startScriptedDockerServer();
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenApiDocument;
});

afterAll(async () => {
  await server?.close();
});

describe('the served /openapi.json describes what the server sends', () => {
  it('a streamed completion: every chunk, the final one with termination and generated_files included', async () => {
    const fileId = await upload();
    server.model.enqueue(code("print(open('sales.csv').read())"), answer('North sold 10.'));
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-test',
        stream: true,
        messages: [{ role: 'user', content: 'Units by region?', file_ids: [fileId] }],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events } = await readSse(response);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data) as Record<string, unknown>);
    const final = chunks.at(-1) as { termination?: unknown; generated_files?: unknown };
    expect(final.termination).toMatchObject({ reason: 'answered' });
    expect(final.generated_files).toBeInstanceOf(Array);
    // The component a generated client decodes every chunk with (its additionalProperties is false).
    const chunkSchema = validatorFor({
      $ref: '#/components/schemas/ChatCompletionChunk',
      components: document.components,
    });
    expect(chunkSchema(final)).toEqual([]);
    for (const chunk of chunks) expect(check('/v1/chat/completions', 'post', '200', sse, chunk)).toEqual([]);
  });

  it('a completion, the file list, the thread, its turn and the turn’s events', async () => {
    const fileId = await upload();
    server.model.enqueue(code('print(6 * 7)'), answer('42.'));
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'Six times seven?', file_ids: [fileId] }],
      }),
    });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as { choices: { message: { thread_id: string } }[] };
    expect(check('/v1/chat/completions', 'post', '200', json, completion)).toEqual([]);
    const threadId = completion.choices[0]?.message.thread_id ?? '';

    const get = async (path: string): Promise<unknown> => {
      const answered = await fetch(`${server.url}${path}`);
      expect(answered.status).toBe(200);
      return answered.json();
    };
    expect(check('/health', 'get', '200', json, await get('/health'))).toEqual([]);
    expect(check('/v1/models', 'get', '200', json, await get('/v1/models'))).toEqual([]);
    expect(check('/v1/files', 'get', '200', json, await get('/v1/files'))).toEqual([]);
    expect(check('/v1/threads', 'get', '200', json, await get('/v1/threads'))).toEqual([]);
    const thread = await get(`/v1/threads/${threadId}`);
    expect(check('/v1/threads/{threadId}', 'get', '200', json, thread)).toEqual([]);
    const turn = await get(`/v1/threads/${threadId}/turns/1`);
    expect(check('/v1/threads/{threadId}/turns/{index}', 'get', '200', json, turn)).toEqual([]);

    const events = await readSse(await fetch(`${server.url}/v1/threads/${threadId}/turns/1/events`));
    expect(events.events.length).toBeGreaterThan(5);
    for (const event of events.events) {
      const problems = check(
        '/v1/threads/{threadId}/turns/{index}/events',
        'get',
        '200',
        sse,
        JSON.parse(event.data),
      );
      expect(problems, event.data.slice(0, 200)).toEqual([]);
    }
    // The cell's start by the server's clock, so that a client attaching mid-cell counts from it.
    const parsed = events.events.map((event) => JSON.parse(event.data) as Record<string, unknown>);
    const running = parsed.find((event) => event.type === 'turn-running');
    const cellStart = parsed.find((event) => event.type === 'execution-start');
    expect(typeof cellStart?.started_ms).toBe('number');
    expect(Number(cellStart?.started_ms)).toBeGreaterThanOrEqual(Number(running?.started_at) * 1000);
    expect(Number(cellStart?.started_ms)).toBeLessThanOrEqual(Date.now());
  });

  it('error bodies: an unknown thread, a bad body, an unknown route, a body of the wrong type', async () => {
    const answers = [
      await rawRequest(server.url, 'GET', '/v1/threads/thread-000000000000000000000000'),
      await rawRequest(
        server.url,
        'POST',
        '/v1/threads',
        { 'content-type': 'application/json' },
        JSON.stringify({ file_ids: 'no' }),
      ),
      await rawRequest(server.url, 'GET', '/v1/nowhere'),
      await rawRequest(server.url, 'POST', '/v1/threads', { 'content-type': 'text/plain' }, 'hello'),
    ];
    for (const answered of answers) {
      expect(answered.status).toBeGreaterThanOrEqual(400);
      expect(check('/v1/threads', 'post', '4XX', json, JSON.parse(answered.body))).toEqual([]);
    }
  });

  it('documents the chart route, /health’s body and the report formats as an enum', () => {
    expect(document.paths['/v1/threads/{threadId}/turns/{index}/charts/{chartId}']?.get).toBeDefined();
    expect(document.paths['/health']?.get?.responses['200']?.content?.[json]?.schema).toBeDefined();
    const report = document.paths['/v1/threads/{threadId}/turns/{index}/report']?.get as unknown as {
      parameters: { name: string; schema: { enum?: string[] } }[];
    };
    expect(report.parameters.find((parameter) => parameter.name === 'format')?.schema.enum).toEqual([
      'html',
      'md',
      'ipynb',
      'json',
      'pdf',
    ]);
  });
});
