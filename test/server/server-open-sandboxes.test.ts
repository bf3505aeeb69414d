import { afterEach, describe, expect, it } from 'vitest';
import type { Turn } from '../../src/server/index.ts';
import { rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer | null = null;

afterEach(async () => {
  await current?.close();
  current = null;
});

const json = { 'content-type': 'application/json' };

async function askAndWait(server: TestServer, threadId: string, question: string): Promise<Turn> {
  const posted = await rawRequest(
    server.url,
    'POST',
    `/v1/threads/${threadId}/turns`,
    json,
    JSON.stringify({ question }),
  );
  expect(posted.status).toBe(202);
  const { index } = JSON.parse(posted.body) as Turn;
  // The events stream ends with turn-done.
  await rawRequest(server.url, 'GET', `/v1/threads/${threadId}/turns/${index}/events`);
  return JSON.parse(
    (await rawRequest(server.url, 'GET', `/v1/threads/${threadId}/turns/${index}`)).body,
  ) as Turn;
}

describe('sandboxes held by idle threads', () => {
  it('idle threads without limit: many threads each asked once keep no more than maxOpenSandboxes sandboxes open', async () => {
    // The idle timeout alone (10 minutes by default) let every thread keep a live container: 20 threads, 20 kernels.
    const server = await startTestServer({ maxOpenSandboxes: 2 });
    current = server;
    const ids: string[] = [];
    for (let thread = 0; thread < 5; thread += 1) {
      const created = JSON.parse((await rawRequest(server.url, 'POST', '/v1/threads')).body) as {
        id: string;
      };
      ids.push(created.id);
      expect((await askAndWait(server, created.id, 'hi')).status).toBe('finished');
    }
    const open = () => server.sandbox.sessions.filter((session) => !session.closed).length;
    for (let attempt = 0; attempt < 200 && open() > 2; attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.sandbox.sessions.length).toBe(5);
    expect(open()).toBe(2);
    // The oldest thread gave its sandbox back and resumes by replay on its next question.
    const again = await askAndWait(server, ids[0] as string, 'hi again');
    expect(again.status).toBe('finished');
    const events = await rawRequest(server.url, 'GET', `/v1/threads/${ids[0]}/turns/2/events`);
    expect(events.body).toContain('"resumed":true');
  });
});
