import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { threadProfileSchema } from '../../src/server/api-schemas.ts';
import { testProfile } from '../agent/support/fake-session.ts';
import { startTestServer, type TestServer } from './support/server-harness.ts';

/**
 * The cached profile (`profile.json` in the thread's folder) was parsed
 * outside the guard that tolerates a missing file: a file cut short (the
 * server stopped while writing it) made every later GET …/profile a 500,
 * for ever. A torn cache is profiled again.
 */
describe('GET /v1/threads/{id}/profile with a cached profile cut short', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('profiles the workspace again instead of failing', async () => {
    server = await startTestServer();
    const form = new FormData();
    form.append('purpose', 'assistants');
    form.append('file', new Blob(['region,total\nnorth,18\n']), 'sales.csv');
    const file = (await (await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const created = await fetch(`${server.url}/v1/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file_ids: [file.id] }),
    });
    const threadId = ((await created.json()) as { id: string }).id;
    await writeFile(path.join(server.dataDir, 'threads', threadId, 'profile.json'), '{"file_ids":["file-');
    const response = await fetch(`${server.url}/v1/threads/${threadId}/profile`);
    expect(response.status).toBe(200);
    expect(threadProfileSchema.parse(await response.json()).profile).toEqual(testProfile);
  });
});
