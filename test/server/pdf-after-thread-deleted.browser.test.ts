import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
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
 * A PDF being printed when its thread was deleted was written into a recreated folder of the deleted
 * thread (`threads/<id>/run/reports/turn-1/report.pdf`): kept on disk, counted by the data quota, and
 * out of reach of the API (the thread is a 404), so no client could ever remove it.
 */
let server: TestServer | null = null;
let wrapperDir: string | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  if (wrapperDir !== null) await rm(wrapperDir, { recursive: true, force: true });
  wrapperDir = null;
});

describe('a PDF printed while its thread is deleted', () => {
  it('leaves nothing of the deleted thread on disk', async () => {
    // A Chromium that takes 2 s to start: the thread is deleted while its report waits for it.
    wrapperDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-slow-chromium-'));
    const chromium = path.join(wrapperDir, 'chromium');
    await writeFile(chromium, '#!/bin/sh\nsleep 2\nexec /usr/bin/chromium "$@"\n');
    await chmod(chromium, 0o755);
    server = await startTestServer({ chromiumPath: chromium });
    const threadId = await askOnNewThread(server.url, 'What is the mean?');
    await waitForTurnStatus(server.url, threadId, 1, 'finished');
    const printing = fetch(`${server.url}/v1/threads/${threadId}/turns/1/report?format=pdf`);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await rawRequest(server.url, 'DELETE', `/v1/threads/${threadId}`)).status).toBe(200);
    await (await printing).arrayBuffer().catch(() => undefined);
    const threadDir = path.join(server.dataDir, 'threads', threadId);
    // Removed again once the print has ended (in the background: the DELETE does not wait for the printer).
    for (let attempt = 0; attempt < 100 && existsSync(threadDir); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(existsSync(threadDir)).toBe(false);
    expect((await rawRequest(server.url, 'GET', `/v1/threads/${threadId}`)).status).toBe(404);
  });
});
