import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Thread, Turn } from '../../src/server/index.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { containersOwnedBy } from './support/docker-containers.ts';
import {
  answerReply as answer,
  codeReply as code,
  killServeProcesses,
  readSse,
  startServeProcess as startServe,
} from './support/server-harness.ts';
const csv = 'region,units\nnorth,10\nsouth,7\neast,12\n';

afterAll(killServeProcesses);

async function completion(url: string, body: unknown): Promise<{ content: string; thread_id: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const json = (await response.json()) as { choices: { message: { content: string; thread_id: string } }[] };
  return json.choices[0]?.message as { content: string; thread_id: string };
}

it('SIGKILL mid-turn, then a restart: files and finished turns are there, the turn is marked interrupted, the thread resumes, no container is left', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-serve-kill-'));
  const model = await startFakeOpenAIServer({
    script: [
      code(
        "import pandas as pd\nsales = pd.read_csv('sales.csv')\ntotal = int(sales['units'].sum())\nprint(total)",
      ),
      answer('29 units.'),
      code('import time\ntime.sleep(600)'),
    ],
  });
  try {
    const first = await startServe(dataDir, model.baseUrl);
    const form = new FormData();
    form.append('file', new Blob([csv]), 'sales.csv');
    const file = (await (await fetch(`${first.url}/v1/files`, { method: 'POST', body: form })).json()) as {
      id: string;
    };
    const done = await completion(first.url, {
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'How many units?', file_ids: [file.id] }],
    });
    expect(done.content).toContain('<Execute>\n```\n29\n');
    const threadId = done.thread_id;

    // The second question runs a cell that sleeps; the server is killed while it runs.
    const turn = (await (
      await fetch(`${first.url}/v1/threads/${threadId}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'Wait a while.' }),
      })
    ).json()) as Turn;
    expect(turn.index).toBe(2);
    // Kill only once the sleeping cell is running (its execution-start is in the turn's event log on disk).
    const eventsFile = path.join(dataDir, 'threads', threadId, 'turns', '2', 'events.jsonl');
    for (let attempt = 0; attempt < 600; attempt += 1) {
      const log = await readFile(eventsFile, 'utf8').catch(() => '');
      if (log.includes('"type":"execution-start"')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const killedPid = first.child.pid ?? -1;
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    expect((await containersOwnedBy(killedPid)).length).toBeGreaterThan(0);

    model.enqueue(code('print(total + 1)'), answer('30.'));
    const second = await startServe(dataDir, model.baseUrl);
    // The new server removed the containers of the killed one.
    expect(await containersOwnedBy(killedPid)).toEqual([]);
    expect(await (await fetch(`${second.url}/v1/files/${file.id}/content`)).text()).toBe(csv);
    const thread = (await (await fetch(`${second.url}/v1/threads/${threadId}`)).json()) as Thread;
    expect(thread.turns.map((entry) => [entry.index, entry.status])).toEqual([
      [1, 'finished'],
      [2, 'interrupted'],
    ]);
    expect(thread.turns[0]?.answer).toBe('29 units.');
    // The interrupted turn still says when it began (from its log: a running turn's record is not saved).
    expect(thread.turns[1]?.started_at).toBeGreaterThanOrEqual(thread.turns[0]?.ended_at ?? Infinity);

    // The thread resumes: the first turn's cells are replayed, so `total` exists again.
    const resumed = await completion(second.url, {
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'One more?', thread_id: threadId }],
    });
    expect(resumed.content).toContain('<Execute>\n```\n30\n');
    const third = await readSse(await fetch(`${second.url}/v1/threads/${threadId}/turns/3/events`));
    const types = third.events.map((event) => (JSON.parse(event.data) as { type: string }).type);
    expect(types).toEqual(
      expect.arrayContaining(['turn-running', 'replay-start', 'replay-end', 'turn-done']),
    );
    expect(JSON.parse(third.events[1]?.data ?? '{}')).toMatchObject({ type: 'turn-running', resumed: true });

    const secondPid = second.child.pid ?? -1;
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
    expect(await containersOwnedBy(secondPid)).toEqual([]);
  } finally {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
