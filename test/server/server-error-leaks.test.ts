import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
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

  it('a 500 names no host path and stays a JSON error, on a download route too', async () => {
    const server = await startTestServer();
    current.push(server);
    const upload = multipartUpload('gone.csv', 'a,1\n');
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
    ) as {
      id: string;
      sha256: string;
    };
    // The blob vanishes under the file object (a disk fault, an operator's rm).
    await rm(path.join(server.dataDir, 'files', 'blobs', file.sha256));
    const attach = await rawRequest(
      server.url,
      'POST',
      '/v1/threads',
      json,
      JSON.stringify({ file_ids: [file.id] }),
    );
    const content = await rawRequest(server.url, 'GET', `/v1/files/${file.id}/content`);
    for (const response of [attach, content]) {
      expect(response.status).toBe(500);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['content-disposition']).toBeUndefined();
      expect(response.body).not.toContain(server.dataDir);
      expect(JSON.parse(response.body)).toMatchObject({ error: { type: 'server_error' } });
    }
  });

  it('a 413 names the limit that was passed: the JSON body limit, or the form limits, not the file size', async () => {
    const server = await startTestServer({ maxJsonBytes: 4096 });
    current.push(server);
    const big = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(8192) }] });
    const json413 = await rawRequest(server.url, 'POST', '/v1/chat/completions', json, big);
    expect(json413.status).toBe(413);
    expect(JSON.parse(json413.body)).toMatchObject({ error: { fix: expect.stringContaining('4096 bytes') } });

    const boundary = 'B';
    let form = '';
    for (let field = 0; field < 12; field += 1)
      form += `--${boundary}\r\nContent-Disposition: form-data; name="f${field}"\r\n\r\nv\r\n`;
    form += `--${boundary}--\r\n`;
    const fields413 = await rawRequest(
      server.url,
      'POST',
      '/v1/files',
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      form,
    );
    expect(fields413.status).toBe(413);
    expect(JSON.parse(fields413.body)).toMatchObject({
      error: { fix: expect.stringContaining('8 short fields') },
    });
  });
});
