import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer[] = [];

async function serve(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  current.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const port = (server: TestServer): string => new URL(server.url).port;

describe('a keyless loopback server and a hostile web page in the user browser', () => {
  it('DNS rebinding: a request whose Host is a foreign name is refused, so the page cannot read the files', async () => {
    const server = await serve();
    const upload = multipartUpload('private.csv', 'secret,1\n');
    const uploaded = await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body);
    expect(uploaded.status).toBe(200);
    const fileId = (JSON.parse(uploaded.body) as { id: string }).id;

    for (const route of ['/v1/files', `/v1/files/${fileId}/content`, '/v1/threads', '/openapi.json']) {
      const rebound = await rawRequest(server.url, 'GET', route, {
        host: `attacker.example:${port(server)}`,
      });
      expect(rebound.status, route).toBe(403);
      expect(rebound.body).not.toContain('secret');
      expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } });
    }
    // 127.0.0.1.attacker.example is a foreign name too.
    const lookalike = await rawRequest(server.url, 'GET', '/v1/files', {
      host: `127.0.0.1.attacker.example:${port(server)}`,
    });
    expect(lookalike.status).toBe(403);
  });

  it('CSRF: a cross-site simple-request upload or thread creation is refused and leaves nothing on disk', async () => {
    const server = await serve();
    const origin = { origin: 'https://attacker.example' };
    const upload = multipartUpload('planted.csv', 'x,1\n');
    const uploaded = await rawRequest(
      server.url,
      'POST',
      '/v1/files',
      { ...upload.headers, ...origin },
      upload.body,
    );
    expect(uploaded.status).toBe(403);
    expect(JSON.parse(uploaded.body)).toMatchObject({ error: { code: 'FORBIDDEN_ORIGIN' } });
    // A POST without a body is a simple request too.
    expect((await rawRequest(server.url, 'POST', '/v1/threads', origin)).status).toBe(403);
    // A sandboxed frame (or a privacy-stripped page) sends `Origin: null`.
    expect((await rawRequest(server.url, 'POST', '/v1/threads', { origin: 'null' })).status).toBe(403);
    expect(await readdir(path.join(server.dataDir, 'files', 'meta'))).toEqual([]);
    expect(await readdir(path.join(server.dataDir, 'threads'))).toEqual([]);
  });

  it('programs and pages served from this machine still get through', async () => {
    const server = await serve();
    const p = port(server);
    for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `LOCALHOST:${p}`, `[::1]:${p}`, '127.0.0.1']) {
      const listed = await rawRequest(server.url, 'GET', '/v1/files', { host });
      expect(listed.status, host).toBe(200);
    }
    for (const origin of [`http://127.0.0.1:${p}`, 'http://localhost:5173', `http://[::1]:${p}`]) {
      const created = await rawRequest(server.url, 'POST', '/v1/threads', { origin });
      expect(created.status, origin).toBe(201);
    }
    const upload = multipartUpload('mine.csv', 'a,1\n');
    const uploaded = await rawRequest(
      server.url,
      'POST',
      '/v1/files',
      { ...upload.headers, origin: `http://127.0.0.1:${p}` },
      upload.body,
    );
    expect(uploaded.status).toBe(200);
  });
});
