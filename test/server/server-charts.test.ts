import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

/** `GET …/turns/{n}/charts/{id}`: a chart an execution-end named is drawn; any other id is a 404 at once. */

let current: TestServer[] = [];
afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const json = { 'content-type': 'application/json' };

async function askOn(server: TestServer, question: string): Promise<string> {
  const thread = JSON.parse((await rawRequest(server.url, 'POST', '/v1/threads')).body) as { id: string };
  const turn = await rawRequest(
    server.url,
    'POST',
    `/v1/threads/${thread.id}/turns`,
    json,
    JSON.stringify({ question }),
  );
  expect(turn.status).toBe(202);
  return thread.id;
}

async function waitForStatus(server: TestServer, threadId: string, wanted: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const turn = JSON.parse(
      (await rawRequest(server.url, 'GET', `/v1/threads/${threadId}/turns/1`)).body,
    ) as {
      status: string;
    };
    if (turn.status === wanted) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`turn 1 never became ${wanted}`);
}

describe('chart route', () => {
  it('an unknown chart id of a running turn is a 404 while the turn still runs (it was held until the turn ended)', async () => {
    const server = await startTestServer();
    current.push(server);
    const threadId = await askOn(server, 'a slow question');
    await waitForStatus(server, threadId, 'running');
    // Without the fix this request waited for turn-done, which a slow cell delays by up to 60 s: the test timed out.
    const chart = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/charts/chart-9`, {
      signal: AbortSignal.timeout(20_000),
    });
    expect(chart.status).toBe(404);
    expect(await chart.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const turn = JSON.parse(
      (await rawRequest(server.url, 'GET', `/v1/threads/${threadId}/turns/1`)).body,
    ) as {
      status: string;
    };
    expect(turn.status).toBe('running');
    await rawRequest(server.url, 'POST', `/v1/threads/${threadId}/turns/1/cancel`);
  });

  it('a chart the turn displayed is drawn as SVG; an unknown id and an unknown turn of that thread are 404', async () => {
    const server = await startTestServer();
    current.push(server);
    const threadId = await askOn(server, 'draw a chart');
    await waitForStatus(server, threadId, 'finished');
    const chart = await fetch(`${server.url}/v1/threads/${threadId}/turns/1/charts/chart-1`);
    expect(chart.status).toBe(200);
    expect(chart.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await chart.text()).toContain('<svg');
    expect((await fetch(`${server.url}/v1/threads/${threadId}/turns/1/charts/chart-2`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/threads/${threadId}/turns/7/charts/chart-1`)).status).toBe(404);
  });
});
