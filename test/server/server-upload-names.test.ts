import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer | null = null;

afterEach(async () => {
  await current?.close();
  current = null;
});

async function uploadNamed(server: TestServer, name: string): Promise<{ status: number; filename?: string }> {
  const upload = multipartUpload(name, 'a,1\n');
  const response = await rawRequest(
    server.url,
    'POST',
    '/v1/files',
    upload.headers,
    Buffer.from(upload.body, 'utf8'),
  );
  const body = JSON.parse(response.body) as { filename?: string };
  return { status: response.status, ...(body.filename === undefined ? {} : { filename: body.filename }) };
}

describe('upload names', () => {
  it('an upload name with a C1 control (a terminal CSI) or a Unicode line separator is refused, as the sandbox refuses such names', async () => {
    const server = await startTestServer();
    current = server;
    for (const name of ['x\u009b31m.csv', 'a\u2028b.csv', 'a\u2029b.csv', 'x\u0085.csv', 'x%C2%9B.csv']) {
      expect((await uploadNamed(server, name)).status, JSON.stringify(name)).toBe(400);
    }
    // Other non-ASCII names are names.
    expect(await uploadNamed(server, 'ventes é 2024.csv')).toEqual({
      status: 200,
      filename: 'ventes é 2024.csv',
    });
  });

  it('a name of 200 characters but more bytes than a file name may hold (NAME_MAX 255) is refused at upload, not a 500 when a thread uses it', async () => {
    const server = await startTestServer();
    current = server;
    const long = `${'\u{1F600}'.repeat(70)}.csv`;
    expect(long.length).toBeLessThanOrEqual(200);
    expect((await uploadNamed(server, long)).status).toBe(400);
    // A long name that fits still makes a thread (with room for a ` (2)` suffix).
    const fits = `${'é'.repeat(95)}.csv`;
    const upload = multipartUpload(fits, 'a,1\n');
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, Buffer.from(upload.body, 'utf8')))
        .body,
    ) as { id: string };
    const thread = await rawRequest(
      server.url,
      'POST',
      '/v1/threads',
      { 'content-type': 'application/json' },
      JSON.stringify({ file_ids: [file.id] }),
    );
    expect(thread.status).toBe(201);
  });
});
