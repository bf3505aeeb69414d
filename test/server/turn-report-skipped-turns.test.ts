import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/index.ts';
import { rawRequest } from './support/raw-http.ts';
import { startTestServer, waitForTurnStatus, type TestServer } from './support/server-harness.ts';

/**
 * A turn's report is the thread as of that turn. The trace numbers only the
 * questions that reached the analysis, so a turn cancelled while it waited
 * for a slot shifts the trace's numbers against the server's: the report of
 * the server's turn n, cut at the trace's turn n, showed a later question.
 */
let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const json = { 'content-type': 'application/json' };

async function newThread(url: string): Promise<string> {
  return (JSON.parse((await rawRequest(url, 'POST', '/v1/threads')).body) as { id: string }).id;
}

async function ask(url: string, threadId: string, question: string): Promise<number> {
  const response = await rawRequest(
    url,
    'POST',
    `/v1/threads/${threadId}/turns`,
    json,
    JSON.stringify({ question }),
  );
  expect(response.status, response.body).toBe(202);
  return (JSON.parse(response.body) as { index: number }).index;
}

async function cancel(url: string, threadId: string, index: number): Promise<void> {
  const response = await rawRequest(url, 'POST', `/v1/threads/${threadId}/turns/${index}/cancel`);
  expect(JSON.parse(response.body)).toMatchObject({ status: 'cancelled' });
}

/** A question of `threadId` cancelled while another thread's slow turn holds the only slot. */
async function askAndCancelWhileQueued(url: string, busy: string, threadId: string, question: string) {
  const slow = await ask(url, busy, 'slow');
  await waitForTurnStatus(url, busy, slow, 'running');
  const queued = await ask(url, threadId, question);
  await cancel(url, threadId, queued);
  await cancel(url, busy, slow);
}

describe("the report of a thread's turns when some never reached the analysis", () => {
  it('is the thread as of each turn; a turn cancelled while queued reports the turns before it', async () => {
    server = await startTestServer({ maxConcurrentTurns: 1 });
    const { url } = server;
    const busy = await newThread(url);
    const thread = await newThread(url);
    await askAndCancelWhileQueued(url, busy, thread, 'first question');
    await waitForTurnStatus(url, thread, await ask(url, thread, 'second question'), 'finished');
    await askAndCancelWhileQueued(url, busy, thread, 'third question');
    await waitForTurnStatus(url, thread, await ask(url, thread, 'fourth question'), 'finished');

    const report = (route: string) => rawRequest(url, 'GET', `/v1/threads/${thread}/${route}`);
    const first = await report('turns/1/report');
    expect(first.status).toBe(404);
    expect(JSON.parse(first.body)).toMatchObject({ error: { code: 'NO_REPORT' } });

    const second = await report('turns/2/report');
    expect(second.status).toBe(200);
    expect(second.body).toContain('second question');
    expect(second.body).not.toContain('fourth question');
    // Turn 3 added nothing: the thread as of it is the thread as of turn 2.
    expect((await report('turns/3/report')).body).toBe(second.body);

    const fourth = await report('turns/4/report');
    expect(fourth.body).toContain('second question');
    expect(fourth.body).toContain('fourth question');
    expect((await report('report')).body).toBe(fourth.body);
    expect((await report('turns/2/report')).body).toBe(second.body);
    // The trace as JSON is the same cut.
    const trace = JSON.parse((await report('turns/2/report?format=json')).body) as {
      records: { type: string; turn?: number }[];
    };
    expect(trace.records.at(-1)).toMatchObject({ type: 'turn-end', turn: 1 });
  });

  it('is kept once rendered, and rendered again for another Datalyst version', async () => {
    server = await startTestServer();
    const { url } = server;
    const thread = await newThread(url);
    await waitForTurnStatus(url, thread, await ask(url, thread, 'only question'), 'finished');
    const report = () => rawRequest(url, 'GET', `/v1/threads/${thread}/turns/1/report`);
    expect((await report()).body).toContain('only question');
    const reports = path.join(server.server.threads.store.runDir(thread), 'reports');
    const [folder] = await readdir(reports);
    const outDir = path.join(reports, folder ?? '');
    const marker = (await readdir(outDir)).find((name) => name.startsWith('.rendered-')) ?? '';
    expect(await readFile(path.join(outDir, marker), 'utf8')).toBe(VERSION);
    // Kept: the file on disk is served, not rendered again.
    await writeFile(path.join(outDir, 'report.html'), 'kept');
    expect((await report()).body).toBe('kept');
    // Written by another version: rendered again.
    await writeFile(path.join(outDir, marker), '0.0.1');
    const again = await report();
    expect(again.body).toContain('only question');
    expect(again.body).not.toBe('kept');
  });
});
