import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { createOfflineAnalyst } from '../../src/index.ts';
import { startServer, type Turn } from '../../src/server/index.ts';
import { containersOwnedBy } from './support/docker-containers.ts';

const csv = 'region,units,price\nnorth,10,2.5\nsouth,7,3.0\neast,12,2.0\nwest,5,4.5\n';

it('50 concurrent mixed requests (uploads, completions, turns cancelled at once): no error but the promised 429s, no container left', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-load-'));
  const server = await startServer({
    dataDir,
    port: 0,
    modelId: 'datalyst-offline-analyst',
    engine: { createModel: () => createOfflineAnalyst() },
    maxConcurrentTurns: 2,
    maxQueuedTurns: 4,
    retryAfterSeconds: 3,
  });
  try {
    const upload = async () => {
      const form = new FormData();
      form.append('file', new Blob([csv]), 'sales.csv');
      return fetch(`${server.url}/v1/files`, { method: 'POST', body: form });
    };
    const seed = (await (await upload()).json()) as { id: string };
    const json = (body: unknown) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const completion = () =>
      fetch(
        `${server.url}/v1/chat/completions`,
        json({ model: 'x', messages: [{ role: 'user', content: 'Summarise.', file_ids: [seed.id] }] }),
      );
    const cancelled = async () => {
      const thread = (await (
        await fetch(`${server.url}/v1/threads`, json({ file_ids: [seed.id] }))
      ).json()) as {
        id: string;
      };
      const turn = await fetch(
        `${server.url}/v1/threads/${thread.id}/turns`,
        json({ question: 'Anything?' }),
      );
      if (turn.status !== 202) return turn;
      const { index } = (await turn.json()) as Turn;
      return fetch(`${server.url}/v1/threads/${thread.id}/turns/${index}/cancel`, { method: 'POST' });
    };
    const requests = [
      ...Array.from({ length: 20 }, upload),
      ...Array.from({ length: 20 }, completion),
      ...Array.from({ length: 10 }, cancelled),
    ];
    const responses = await Promise.all(requests);
    const statuses = responses.map((response) => response.status);
    const tally = Object.fromEntries(
      [...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length]),
    );
    console.log('[load] statuses', tally);
    expect(
      statuses.every((status) => status === 200 || status === 429),
      JSON.stringify(tally),
    ).toBe(true);
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
    const refused = responses.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused) expect(response.headers.get('retry-after')).toBe('3');
    // Every answered completion ended (answered), every cancelled turn says so.
    for (const response of responses.slice(20, 40).filter((entry) => entry.status === 200)) {
      const body = (await response.json()) as { termination: { reason: string } };
      expect(body.termination.reason).toBe('answered');
    }
    for (const response of responses.slice(40).filter((entry) => entry.status === 200)) {
      expect(((await response.json()) as Turn).status).toBe('cancelled');
    }
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({
      turns: { running: 0, queued: 0 },
    });
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  expect(await containersOwnedBy(process.pid)).toEqual([]);
});
