import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer | null = null;
const dirs: string[] = [];

afterEach(async () => {
  await current?.close();
  current = null;
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('thread folders without a record', () => {
  it('a thread folder left without thread.json (killed while creating it) does not make GET /v1/threads a 404', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-server-orphan-'));
    dirs.push(dataDir);
    // What a kill between `mkdir workspace` and writing thread.json leaves.
    await mkdir(path.join(dataDir, 'threads', `thread-${'ab'.repeat(12)}`, 'workspace'), { recursive: true });
    current = await startTestServer({ dataDir });
    const created = await rawRequest(current.url, 'POST', '/v1/threads');
    expect(created.status).toBe(201);
    const listed = await rawRequest(current.url, 'GET', '/v1/threads');
    expect(listed.status).toBe(200);
    const ids = (JSON.parse(listed.body) as { data: { id: string }[] }).data.map((thread) => thread.id);
    expect(ids).toEqual([(JSON.parse(created.body) as { id: string }).id]);
  });

  it('a delete racing a question on the same thread leaves no thread folder behind', async () => {
    const server = await startTestServer();
    current = server;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const thread = JSON.parse((await rawRequest(server.url, 'POST', '/v1/threads')).body) as { id: string };
      const [, deleted] = await Promise.all([
        rawRequest(
          server.url,
          'POST',
          `/v1/threads/${thread.id}/turns`,
          { 'content-type': 'application/json' },
          JSON.stringify({ question: 'hi' }),
        ),
        rawRequest(server.url, 'DELETE', `/v1/threads/${thread.id}`),
      ]);
      expect(deleted.status).toBe(200);
    }
    // Turns that were started finish (or are cancelled) in the background.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await readdir(path.join(server.dataDir, 'threads'))).toEqual([]);
  });
});

describe('a refused thread creation', () => {
  it('a thread refused with 413 (its files over maxThreadBytes) leaves no empty thread behind', async () => {
    const server = await startTestServer({ maxThreadBytes: 10 });
    current = server;
    const upload = multipartUpload('big.csv', 'a,b\n1,2\n3,4\n');
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
    ) as {
      id: string;
    };
    const refused = await rawRequest(
      server.url,
      'POST',
      '/v1/threads',
      { 'content-type': 'application/json' },
      JSON.stringify({ file_ids: [file.id] }),
    );
    expect(refused.status).toBe(413);
    expect(JSON.parse((await rawRequest(server.url, 'GET', '/v1/threads')).body)).toMatchObject({ data: [] });
    expect(await readdir(path.join(server.dataDir, 'threads'))).toEqual([]);
  });
});
