import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer[] = [];

afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const json = { 'content-type': 'application/json' };

describe('error bodies', () => {
  it('the report of a turn cancelled before it started is a 404, not a 500 naming the data folder', async () => {
    const server = await startTestServer({ maxConcurrentTurns: 1 });
    current.push(server);
    const busy = JSON.parse((await rawRequest(server.url, 'POST', '/v1/threads')).body) as { id: string };
    const queued = JSON.parse((await rawRequest(server.url, 'POST', '/v1/threads')).body) as { id: string };
    const slow = JSON.stringify({ question: 'slow' });
    expect((await rawRequest(server.url, 'POST', `/v1/threads/${busy.id}/turns`, json, slow)).status).toBe(
      202,
    );
    const hi = JSON.stringify({ question: 'hi' });
    expect((await rawRequest(server.url, 'POST', `/v1/threads/${queued.id}/turns`, json, hi)).status).toBe(
      202,
    );
    const cancelled = await rawRequest(server.url, 'POST', `/v1/threads/${queued.id}/turns/1/cancel`);
    expect(JSON.parse(cancelled.body)).toMatchObject({ status: 'cancelled', started_at: null });

    for (const route of [
      `/v1/threads/${queued.id}/turns/1/report`,
      `/v1/threads/${queued.id}/report?format=md`,
    ]) {
      const report = await rawRequest(server.url, 'GET', route);
      expect(report.status, route).toBe(404);
      expect(report.body).not.toContain(server.dataDir);
      expect(JSON.parse(report.body)).toMatchObject({ error: { code: 'NO_REPORT' } });
    }
    await rawRequest(server.url, 'POST', `/v1/threads/${busy.id}/turns/1/cancel`);
  });
});
