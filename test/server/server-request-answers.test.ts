import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.ts';
import { startTestServer, waitForTurnStatus, type TestServer } from './support/server-harness.ts';

// What a first-time API user met: lists in an unexpected order, errors that named the wrong thing.

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const errorOf = (body: string) =>
  (JSON.parse(body) as { error: { code: string; message: string; fix: string } }).error;

async function upload(url: string, name: string, body: string): Promise<{ status: number; body: string }> {
  const form = new FormData();
  form.append('file', new Blob([body]), name);
  const response = await fetch(`${url}/v1/files`, { method: 'POST', body: form });
  return { status: response.status, body: await response.text() };
}

describe('the server answers a first-time API user', () => {
  it('lists threads and files newest first, also those made within one second', async () => {
    server = await startTestServer();
    const { url } = server;
    const threads: string[] = [];
    for (let n = 0; n < 3; n += 1)
      threads.push((JSON.parse((await rawRequest(url, 'POST', '/v1/threads')).body) as { id: string }).id);
    const listed = JSON.parse((await rawRequest(url, 'GET', '/v1/threads')).body) as {
      data: { id: string }[];
    };
    expect(listed.data.map((thread) => thread.id)).toEqual([...threads].reverse());

    const files: string[] = [];
    for (const name of ['a.csv', 'b.csv', 'c.csv'])
      files.push((JSON.parse((await upload(url, name, `x\n${name}\n`)).body) as { id: string }).id);
    const fileList = JSON.parse((await rawRequest(url, 'GET', '/v1/files')).body) as {
      data: { id: string }[];
    };
    expect(fileList.data.map((file) => file.id)).toEqual([...files].reverse());
  });

  it('a file over the limit: 413 naming the limit and the setting that raises it', async () => {
    server = await startTestServer({ maxFileBytes: 1024 * 1024 });
    const big = await upload(server.url, 'big.csv', 'a\n'.repeat(600_000));
    expect(big.status).toBe(413);
    const error = errorOf(big.body);
    expect(error.message).toContain('1048576 bytes');
    expect(error.fix).toContain('1 MiB');
    expect(error.fix).toContain('--max-file-mb');
  });

  it('a text/plain body is a 415 (JSON or multipart only), not a 400 about its fields', async () => {
    server = await startTestServer();
    const plain = await rawRequest(
      server.url,
      'POST',
      '/v1/threads',
      { 'content-type': 'text/plain' },
      '{"file_ids": []}',
    );
    expect(plain.status).toBe(415);
    expect(errorOf(plain.body).fix).toContain('application/json');
  });

  it('an unknown artifact is named by its path, and a thread with no ended turn has no report yet', async () => {
    server = await startTestServer();
    const { url } = server;
    const thread = (JSON.parse((await rawRequest(url, 'POST', '/v1/threads')).body) as { id: string }).id;
    const report = await rawRequest(url, 'GET', `/v1/threads/${thread}/report`);
    expect(report.status).toBe(404);
    expect(errorOf(report.body)).toMatchObject({ code: 'NO_REPORT' });
    expect(errorOf(report.body).message).toContain('no turn that has ended yet');

    const asked = await rawRequest(
      url,
      'POST',
      `/v1/threads/${thread}/turns`,
      { 'content-type': 'application/json' },
      JSON.stringify({ question: 'anything' }),
    );
    expect(asked.status).toBe(202);
    await waitForTurnStatus(url, thread, 1, 'finished');
    const artifact = await rawRequest(
      url,
      'GET',
      `/v1/threads/${thread}/turns/1/artifacts/plots/missing.png`,
    );
    expect(artifact.status).toBe(404);
    expect(errorOf(artifact.body).message).toBe('No artifact at "plots/missing.png" in this thread.');
    expect(errorOf(artifact.body).fix).toContain('artifacts');
  });
});
