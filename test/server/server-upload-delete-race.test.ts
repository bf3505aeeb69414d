import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

let current: TestServer | null = null;

afterEach(async () => {
  await current?.close();
  current = null;
});

describe('uploads share blobs by content', () => {
  it('an upload racing the delete of an older file with the same bytes keeps its bytes', async () => {
    const server = await startTestServer();
    current = server;
    const lost: number[] = [];
    // Before the fix about a quarter of these lost the new upload's blob.
    for (let attempt = 0; attempt < 40; attempt += 1) {
      const upload = multipartUpload('same.csv', `a,b\n${attempt},1\n`);
      const first = JSON.parse(
        (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
      ) as { id: string };
      const [second] = await Promise.all([
        rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body).then(
          (response) => JSON.parse(response.body) as { id: string },
        ),
        rawRequest(server.url, 'DELETE', `/v1/files/${first.id}`),
      ]);
      const content = await rawRequest(server.url, 'GET', `/v1/files/${second.id}/content`);
      if (content.status !== 200 || content.body !== `a,b\n${attempt},1\n`) lost.push(attempt);
    }
    expect(lost).toEqual([]);
  });
});
