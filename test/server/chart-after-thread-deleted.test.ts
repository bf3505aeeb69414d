import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.ts';
import {
  askOnNewThread,
  startTestServer,
  waitForTurnStatus,
  type TestServer,
} from './support/server-harness.ts';

/**
 * The chart route answered from its memory of drawn charts before it looked
 * for the thread: a deleted thread's chart was still served (and a spec kept
 * in memory was drawn again into a recreated folder of the deleted thread).
 */
let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('a chart of a deleted thread', () => {
  it('is a 404, and nothing of the thread is written again', async () => {
    server = await startTestServer();
    const thread = { id: await askOnNewThread(server.url, 'draw a chart') };
    await waitForTurnStatus(server.url, thread.id, 1, 'finished');
    const chartUrl = `${server.url}/v1/threads/${thread.id}/turns/1/charts/chart-1`;
    expect((await fetch(chartUrl)).status).toBe(200);
    expect((await rawRequest(server.url, 'DELETE', `/v1/threads/${thread.id}`)).status).toBe(200);
    expect((await fetch(chartUrl)).status).toBe(404);
    expect(existsSync(path.join(server.dataDir, 'threads', thread.id))).toBe(false);
  });
});
