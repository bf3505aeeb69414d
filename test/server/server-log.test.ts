import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxUnavailableError } from '../../src/errors/index.ts';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { askOnNewThread, startTestServer, type TestServer } from './support/server-harness.ts';

/** The server's error log: JSON lines, errors by default, never a secret, requests only when asked. */

let current: TestServer[] = [];
afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const apiKey = 'k'.repeat(8) + '-secret-server-key-0123456789';
const auth = { authorization: `Bearer ${apiKey}` };
const parsed = (server: TestServer) =>
  server.logLines.map((line) => JSON.parse(line) as Record<string, unknown> & { level: number; msg: string });

async function waitFor<T>(check: () => T | undefined): Promise<T> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('never happened');
}

describe('server log', () => {
  it('a 5xx is logged as one JSON line with its code and cause, and the API key appears nowhere', async () => {
    const server = await startTestServer({ apiKey });
    current.push(server);
    const upload = multipartUpload('gone.csv', 'a,1\n');
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', { ...upload.headers, ...auth }, upload.body)).body,
    ) as { id: string; sha256: string };
    // Requests that went well leave no line at the default level.
    expect(server.logLines).toEqual([]);
    await rm(path.join(server.dataDir, 'files', 'blobs', file.sha256));
    const content = await rawRequest(server.url, 'GET', `/v1/files/${file.id}/content`, auth);
    expect(content.status).toBe(500);
    const lines = parsed(server);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'request failed',
      statusCode: 500,
      err: { code: 'ENOENT', type: 'Error' },
      method: 'GET',
      url: `/v1/files/${file.id}/content`,
    });
    expect(server.logLines.join('')).not.toContain(apiKey);
    expect(server.logLines.join('').toLowerCase()).not.toContain('bearer');
  });

  it('at level info every request is logged, without its Authorization header; a secret inside an error message is replaced', async () => {
    const server = await startTestServer({ apiKey, log: { level: 'info', secrets: ['model-key-abcdef'] } });
    current.push(server);
    expect((await rawRequest(server.url, 'GET', '/v1/models', auth)).status).toBe(200);
    // The key sent where a thread id goes comes back in a 404's message: not in the log.
    expect((await rawRequest(server.url, 'GET', `/v1/threads/${apiKey}`, auth)).status).toBe(404);
    const lines = parsed(server);
    expect(lines.some((line) => line.msg === 'incoming request')).toBe(true);
    expect(lines.some((line) => line.msg === 'request completed')).toBe(true);
    const text = server.logLines.join('');
    expect(text).not.toContain(apiKey);
    expect(text).toContain('[redacted]');
    expect(text.toLowerCase()).not.toContain('bearer');
  });

  it('a turn whose sandbox cannot start is logged with the thread, the turn and the error code', async () => {
    const server = await startTestServer({
      createSandbox: () =>
        Promise.reject(new SandboxUnavailableError('Docker is not running.', { fix: 'Start Docker.' })),
    });
    current.push(server);
    const threadId = await askOnNewThread(server.url, 'hi');
    const line = await waitFor(() => parsed(server).find((entry) => entry.threadId === threadId));
    expect(line).toMatchObject({ level: 50, turn: 1, err: { code: 'SANDBOX_UNAVAILABLE' } });
  });

  it('level silent writes nothing, even for a 5xx', async () => {
    const server = await startTestServer({ log: { level: 'silent' } });
    current.push(server);
    const upload = multipartUpload('gone.csv', 'a,1\n');
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
    ) as { id: string; sha256: string };
    await rm(path.join(server.dataDir, 'files', 'blobs', file.sha256));
    expect((await rawRequest(server.url, 'GET', `/v1/files/${file.id}/content`)).status).toBe(500);
    expect(server.logLines).toEqual([]);
  });
});
