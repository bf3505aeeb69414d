import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxFactory } from '../../src/index.ts';
import { threadProfileSchema, turnEventSchema } from '../../src/server/api-schemas.ts';
import { createFakeSandbox, testProfile } from '../agent/support/fake-session.ts';
import { readSse, startTestServer, type TestServer } from './support/server-harness.ts';

const API_KEY = 'profile-test-key-0123456789abcdef';

async function upload(server: TestServer, headers: Record<string, string> = {}): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new Blob(['region,total\nnorth,18\n']), 'sales.csv');
  const response = await fetch(`${server.url}/v1/files`, { method: 'POST', body: form, headers });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

async function createThread(server: TestServer, fileIds: string[], headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/v1/threads`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ file_ids: fileIds }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe('GET /v1/threads/{id}/profile: the files profiled before the first question', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('profiles the workspace in a sandbox session of its own, closed after; a second call reads it back', async () => {
    server = await startTestServer();
    const threadId = await createThread(server, [await upload(server)]);
    const response = await fetch(`${server.url}/v1/threads/${threadId}/profile`);
    expect(response.status).toBe(200);
    const body = threadProfileSchema.parse(await response.json());
    expect(body.thread_id).toBe(threadId);
    expect(body.profile).toEqual(testProfile);
    expect(server.sandbox.sessions).toHaveLength(1);
    expect(server.sandbox.sessions[0]?.closed).toBe(true);
    const again = threadProfileSchema.parse(
      await (await fetch(`${server.url}/v1/threads/${threadId}/profile`)).json(),
    );
    expect(again).toEqual(body);
    expect(server.sandbox.sessions).toHaveLength(1);
    // Two at once for a thread not profiled yet share one sandbox.
    const other = await createThread(server, [await upload(server)]);
    const both = await Promise.all(
      [1, 2].map(async () => (await fetch(`${server!.url}/v1/threads/${other}/profile`)).status),
    );
    expect(both).toEqual([200, 200]);
    expect(server.sandbox.sessions).toHaveLength(2);
    const openApi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(openApi.paths['/v1/threads/{threadId}/profile']).toBeDefined();
    expect(openApi.components.schemas.ThreadProfile).toBeDefined();
    expect(openApi.components.schemas.AnswerGrounding).toBeDefined();
  });

  it('runs at most one profile per core at once (each is a container); the others wait and all are answered', async () => {
    const sandbox = createFakeSandbox();
    let now = 0;
    let most = 0;
    const slow: SandboxFactory = async (options) => {
      const session = await sandbox.factory(options);
      return Object.assign(Object.create(session) as typeof session, {
        profileWorkspace: async () => {
          now += 1;
          most = Math.max(most, now);
          await new Promise((resolve) => setTimeout(resolve, 100));
          now -= 1;
          return testProfile;
        },
        close: () => session.close(),
      });
    };
    server = await startTestServer({ createSandbox: slow });
    const threads = [];
    for (let count = 0; count < os.availableParallelism() + 2; count++)
      threads.push(await createThread(server, [await upload(server)]));
    const statuses = await Promise.all(
      threads.map(async (id) => (await fetch(`${server!.url}/v1/threads/${id}/profile`)).status),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(os.availableParallelism());
    expect(sandbox.sessions.every((session) => session.closed)).toBe(true);
  });

  it('answers 404 for an unknown thread', async () => {
    server = await startTestServer();
    const response = await fetch(`${server.url}/v1/threads/thread-000000000000000000000000/profile`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it("sends the answer's numbers grounded by the report's rules with answer-end", async () => {
    server = await startTestServer();
    const threadId = await createThread(server, [await upload(server)]);
    const turn = await fetch(`${server.url}/v1/threads/${threadId}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What is the mean?' }),
    });
    expect(turn.status).toBe(202);
    const { events } = await readSse(await fetch(`${server.url}/v1/threads/${threadId}/turns/1/events`));
    const answer = events
      .map((event) => turnEventSchema.parse(JSON.parse(event.data)))
      .find((event) => event.type === 'answer-end');
    expect(answer).toMatchObject({
      answer: 'The mean is 42.',
      grounding: {
        segments: [
          {
            text: 'The mean is 42.',
            numbers: [{ text: '42', start: 12, end: 14, verified: true, outputId: 'E1', matchedText: '42' }],
          },
        ],
      },
    });
  });

  it('with an API key: the profile needs it, the web UI files do not', async () => {
    server = await startTestServer({ apiKey: API_KEY });
    const auth = { authorization: `Bearer ${API_KEY}` };
    const threadId = await createThread(server, [await upload(server, auth)], auth);
    expect((await fetch(`${server.url}/v1/threads/${threadId}/profile`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/threads/${threadId}/profile`, { headers: auth })).status).toBe(200);
    // The page must load to ask for the key; it holds no data. (404 when the UI is not built.)
    const page = await fetch(`${server.url}/`);
    expect(page.status).not.toBe(401);
    expect((await fetch(`${server.url}/assets/no-such-file.js`)).status).not.toBe(401);
    // Read only: a body sent to the page's address still needs the key.
    expect((await fetch(`${server.url}/`, { method: 'POST', body: 'x' })).status).toBe(401);
    // Anything else still needs it, a path that only looks like the UI's included.
    expect((await fetch(`${server.url}/assets/../v1/threads`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/threads?x=/assets/a.js`)).status).toBe(401);
  });
});
