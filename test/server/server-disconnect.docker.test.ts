import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Thread, Turn } from '../../src/server/index.ts';
import { containersOwnedBy } from './support/docker-containers.ts';
import {
  codeReply as code,
  readSse,
  startScriptedDockerServer,
  type ScriptedDockerServer,
} from './support/server-harness.ts';

/**
 * A streaming client that goes away cancels its turn, on the real sandbox with
 * the model over HTTP: the running cell stops, the model request in flight is
 * dropped, and no container is left.
 */
describe('a streaming completion whose client disconnects (real sandbox, model over HTTP)', () => {
  let server: ScriptedDockerServer;

  beforeAll(async () => {
    server = await startScriptedDockerServer();
  });

  afterAll(async () => {
    await server?.close();
    expect(await containersOwnedBy(process.pid)).toEqual([]);
  });

  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    for (let attempt = 0; attempt < 600; attempt += 1) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`never: ${what}`);
  };

  /** Starts a streaming completion, waits for `ready`, then drops the connection; returns the thread. */
  async function disconnectWhen(ready: (threadId: string) => Promise<boolean>): Promise<string> {
    const before = new Set(
      ((await (await fetch(`${server.url}/v1/threads`)).json()) as { data: Thread[] }).data.map((t) => t.id),
    );
    // A workspace with data (an empty one ends `no-data` before the model is asked).
    const form = new FormData();
    form.append('file', new Blob(['region,units\nnorth,10\nsouth,7\n']), 'sales.csv');
    const file = (await (await fetch(`${server.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-test',
        stream: true,
        messages: [{ role: 'user', content: 'Go.', file_ids: [file.id] }],
      }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    void readSse(response).catch(() => undefined);
    let threadId = '';
    await until('the thread exists', async () => {
      const threads = ((await (await fetch(`${server.url}/v1/threads`)).json()) as { data: Thread[] }).data;
      threadId = threads.find((thread) => !before.has(thread.id))?.id ?? '';
      return threadId !== '';
    });
    await until('the turn reached the point to disconnect at', () => ready(threadId));
    controller.abort();
    await until('the turn is cancelled', async () => {
      const turn = (await (await fetch(`${server.url}/v1/threads/${threadId}/turns/1`)).json()) as Turn;
      return turn.status === 'cancelled';
    });
    await until('the sandbox is given back', async () => {
      const thread = (await (await fetch(`${server.url}/v1/threads/${threadId}`)).json()) as Thread;
      return !thread.sandbox_open && (await containersOwnedBy(process.pid)).length === 0;
    });
    return threadId;
  }

  it('while a cell runs (time.sleep(600)): the cell stops, the turn is cancelled, no container is left', async () => {
    server.model.enqueue(code('import time\nprint("sleeping", flush=True)\ntime.sleep(600)'));
    const threadId = await disconnectWhen(async (id) => {
      const events = path.join(server.dataDir, 'threads', id, 'turns', '1', 'events.jsonl');
      return (await readFile(events, 'utf8').catch(() => '')).includes('"type":"execution-start"');
    });
    const turn = (await (await fetch(`${server.url}/v1/threads/${threadId}/turns/1`)).json()) as Turn;
    expect(turn.termination?.reason).toBe('cancelled');
  });

  it('while the model request hangs: the request is dropped (the turn ends cancelled, though the model never answers), no container is left', async () => {
    const requestsBefore = server.model.completionRequests.length;
    server.model.enqueue({ type: 'hang' });
    await disconnectWhen(async () => server.model.completionRequests.length > requestsBefore);
    expect(server.model.completionRequests.length).toBe(requestsBefore + 1);
  });
});
