import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { containersOwnedBy } from './support/docker-containers.ts';
import { answerReply as answer, killServeProcesses, startServeProcess } from './support/server-harness.ts';

afterAll(killServeProcesses);

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never: ${what}`);
}

it('`datalyst serve --warm 1`: a new thread gets the pool’s started container, and the pool starts the next one', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-warm-'));
  const model = await startFakeOpenAIServer({ script: [answer('Two regions.')] });
  try {
    const { child, url } = await startServeProcess(dataDir, model.baseUrl, ['--warm', '1']);
    const pid = child.pid ?? -1;
    // Before any request: one container, started by the pool.
    const [warm] = await until('the pool started a container', async () => {
      const owned = await containersOwnedBy(pid);
      return owned.length === 1 ? owned : undefined;
    });
    const form = new FormData();
    form.append('file', new Blob(['region,units\nnorth,10\nsouth,7\n']), 'sales.csv');
    const file = (await (await fetch(`${url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const reply = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'How many regions?', file_ids: [file.id] }],
      }),
    });
    expect(reply.status).toBe(200);
    const { choices } = (await reply.json()) as { choices: { message: { thread_id: string } }[] };
    const threadId = choices[0]?.message.thread_id ?? '';
    // The thread holds the pool's container; the pool has started another for the next thread.
    const next = await until('the pool started the next container', async () => {
      const owned = await containersOwnedBy(pid);
      return owned.length === 2 && owned.includes(warm ?? '') ? owned.find((id) => id !== warm) : undefined;
    });
    // Deleting the thread removes the container it was given: the pool's first one.
    expect((await fetch(`${url}/v1/threads/${threadId}`, { method: 'DELETE' })).status).toBe(200);
    await until('the thread’s container is removed', async () => {
      const owned = await containersOwnedBy(pid);
      return !owned.includes(warm ?? '') ? true : undefined;
    });
    expect(await containersOwnedBy(pid)).toEqual([next]);
    child.kill('SIGTERM');
    await once(child, 'exit');
    expect(await containersOwnedBy(pid)).toEqual([]);
  } finally {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
