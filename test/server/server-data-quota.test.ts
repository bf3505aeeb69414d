import { afterEach, describe, expect, it } from 'vitest';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

/** One byte limit on the whole data folder: uploads and new turns get 507 with the limit once it is reached. */

let current: TestServer[] = [];
afterEach(async () => {
  await Promise.all(current.map((server) => server.close()));
  current = [];
});

const json = { 'content-type': 'application/json' };

async function upload(server: TestServer, name: string, bytes: number) {
  const form = multipartUpload(name, `a\n${'1\n'.repeat(Math.floor((bytes - 2) / 2))}`);
  const response = await rawRequest(server.url, 'POST', '/v1/files', form.headers, form.body);
  return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown> };
}

describe('the data folder limit', () => {
  it('an upload past the limit is refused with 507 naming the limit, nothing of it is kept, and deleting makes room again', async () => {
    const limit = 64 * 1024;
    const server = await startTestServer({ maxDataBytes: limit });
    current.push(server);
    const first = await upload(server, 'first.csv', 40 * 1024);
    expect(first.status).toBe(200);
    // 40 KiB stored: 30 KiB more do not fit, though the per-file limit allows them.
    const second = await upload(server, 'second.csv', 30 * 1024);
    expect(second.status).toBe(507);
    expect(second.body).toMatchObject({
      error: {
        code: 'DATA_DIR_FULL',
        type: 'server_error',
        message: expect.stringContaining(`(limit ${limit} bytes)`),
        fix: expect.stringContaining('--max-data-gb'),
      },
    });
    expect(JSON.stringify(second.body)).not.toContain(server.dataDir);
    const files = JSON.parse((await rawRequest(server.url, 'GET', '/v1/files')).body) as { data: unknown[] };
    expect(files.data).toHaveLength(1);
    // The operator sees it too.
    expect(server.logLines.some((line) => line.includes('DATA_DIR_FULL'))).toBe(true);

    expect((await rawRequest(server.url, 'DELETE', `/v1/files/${String(first.body.id)}`)).status).toBe(200);
    expect((await upload(server, 'second.csv', 30 * 1024)).status).toBe(200);
  });

  it('a full data folder takes no new turn (507) and no new upload, and says how full it is', async () => {
    const limit = 32 * 1024;
    const server = await startTestServer({ maxDataBytes: limit });
    current.push(server);
    // Fills the folder to its limit exactly: the next byte does not fit.
    const filled = await upload(server, 'big.csv', 31 * 1024);
    expect(filled.status).toBe(200);
    const thread = JSON.parse(
      (
        await rawRequest(
          server.url,
          'POST',
          '/v1/threads',
          json,
          JSON.stringify({ file_ids: [filled.body.id] }),
        )
      ).body,
    ) as { id: string };
    const first = await rawRequest(
      server.url,
      'POST',
      `/v1/threads/${thread.id}/turns`,
      json,
      '{"question":"hi"}',
    );
    // Room was left for one turn; it ran and wrote its logs and run folder (fake sandbox, scripted model).
    expect(first.status).toBe(202);
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const turn = JSON.parse(
        (await rawRequest(server.url, 'GET', `/v1/threads/${thread.id}/turns/1`)).body,
      ) as {
        status: string;
      };
      if (turn.status !== 'queued' && turn.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const late = await upload(server, 'late.csv', 2 * 1024);
    expect(late.status).toBe(507);
    const refused = await rawRequest(
      server.url,
      'POST',
      `/v1/threads/${thread.id}/turns`,
      json,
      '{"question":"again"}',
    );
    expect(refused.status).toBe(507);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: 'DATA_DIR_FULL', message: expect.stringContaining(`limit ${limit} bytes`) },
    });
  });
});
