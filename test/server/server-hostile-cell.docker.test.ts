import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Turn } from '../../src/server/index.ts';
import { containersOwnedBy } from './support/docker-containers.ts';
import { multipartUpload, rawRequest } from './support/raw-http.ts';
import {
  codeReply as code,
  startScriptedDockerServer,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

describe('hostile cell output served by datalyst serve (real sandbox)', () => {
  let server: ScriptedDockerServer;

  beforeAll(async () => {
    server = await startScriptedDockerServer({ maxConcurrentTurns: 1 });
  });

  afterAll(async () => {
    await server?.close();
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  it('symlinked, HTML and SVG artifacts, and a write to the input: no link is served, nothing is rendered inline, the upload is unchanged', async () => {
    const csv = 'region,units\nnorth,10\nsouth,7\n';
    const upload = multipartUpload('data.csv', csv);
    const file = JSON.parse(
      (await rawRequest(server.url, 'POST', '/v1/files', upload.headers, upload.body)).body,
    ) as {
      id: string;
    };
    server.model.enqueue(
      code(
        [
          'import os',
          "for target, name in [('/etc/passwd', 'passwd.csv'), ('/etc', 'etc-link'), ('data.csv', 'copy.csv')]:",
          '    os.symlink(target, name)',
          "open('x.html', 'w').write('<script>alert(document.domain)</script>')",
          "open('x.svg', 'w').write('<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>')",
          'try:',
          "    open('data.csv', 'a').write('tampered')",
          "    print('WROTE')",
          'except OSError as error:',
          "    print('refused', type(error).__name__)",
        ].join('\n'),
      ),
      { type: 'text' as const, text: '<Answer>Done.</Answer>' },
    );
    const completion = await rawRequest(
      server.url,
      'POST',
      '/v1/chat/completions',
      { 'content-type': 'application/json' },
      JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'go', file_ids: [file.id] }] }),
    );
    expect(completion.status).toBe(200);
    const body = JSON.parse(completion.body) as {
      choices: { message: { content: string; thread_id: string } }[];
    };
    const message = body.choices[0]?.message;
    const output = message?.content.split('<Execute>')[1] ?? '';
    // The cell's working copy takes the write (and comes back as its own artifact); the mounted input does not.
    expect(output).toContain('data.csv (created');

    const turn = JSON.parse(
      (await rawRequest(server.url, 'GET', `/v1/threads/${message?.thread_id}/turns/1`)).body,
    ) as Turn;
    expect(turn.artifacts.map((artifact) => artifact.path).sort()).toEqual(['data.csv', 'x.html', 'x.svg']);
    for (const artifact of turn.artifacts) {
      const served = await rawRequest(server.url, 'GET', new URL(artifact.url).pathname);
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe('application/octet-stream');
      expect(served.headers['content-disposition']).toMatch(/^attachment;/);
      expect(served.headers['x-content-type-options']).toBe('nosniff');
      expect(served.headers['content-security-policy']).toBe('sandbox');
    }
    for (const name of ['passwd.csv', 'copy.csv', 'etc-link/passwd']) {
      const link = await rawRequest(
        server.url,
        'GET',
        `/v1/threads/${message?.thread_id}/turns/1/artifacts/${name}`,
      );
      expect(link.status, name).toBe(404);
    }
    // The upload (and the workspace's hard link to its blob) is unchanged.
    const content = await rawRequest(server.url, 'GET', `/v1/files/${file.id}/content`);
    expect(createHash('sha256').update(content.body).digest('hex')).toBe(
      createHash('sha256').update(csv).digest('hex'),
    );
  });
});
