import { appendFile, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.ts';
import { askOnNewThread, readSse, startTestServer } from './support/server-harness.ts';

const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A data folder holding one thread with one finished turn, its server closed. */
async function oneFinishedTurn(): Promise<{ dataDir: string; thread: { id: string } }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-server-partial-'));
  dirs.push(dataDir);
  const first = await startTestServer({ dataDir });
  const thread = { id: await askOnNewThread(first.url, 'hi') };
  // Read to its end: the turn has finished.
  await rawRequest(first.url, 'GET', `/v1/threads/${thread.id}/turns/1/events`);
  await first.close();
  return { dataDir, thread };
}

describe('a server killed in the middle of writing an event', () => {
  it('the restarted server still ends the interrupted turn with turn-done after a partial last line', async () => {
    const { dataDir, thread } = await oneFinishedTurn();

    // As SIGKILL would leave it: the turn still `running`, its log cut inside a line, no turn-done.
    const turnDir = path.join(dataDir, 'threads', thread.id, 'turns', '1');
    const turn = JSON.parse(await readFile(path.join(turnDir, 'turn.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    await writeFile(
      path.join(turnDir, 'turn.json'),
      JSON.stringify({ ...turn, status: 'running', ended_at: null }),
    );
    const lines = (await readFile(path.join(turnDir, 'events.jsonl'), 'utf8')).trimEnd().split('\n');
    const kept = lines.filter((line) => !line.includes('"turn-done"'));
    await writeFile(path.join(turnDir, 'events.jsonl'), `${kept.join('\n')}\n`);
    await appendFile(path.join(turnDir, 'events.jsonl'), '{"seq":999,"type":"text-del');

    const second = await startTestServer({ dataDir });
    try {
      expect(second.server.interruptedOnStart).toBe(1);
      const { events } = await readSse(await fetch(`${second.url}/v1/threads/${thread.id}/turns/1/events`));
      const last = JSON.parse(events.at(-1)?.data ?? '{}') as {
        type?: string;
        status?: string;
        seq?: number;
      };
      expect(last).toMatchObject({ type: 'turn-done', status: 'interrupted', seq: kept.length + 1 });
    } finally {
      await second.close();
    }
  });

  it('a finished turn whose last events were lost gets its turn-done on restart, with its own status', async () => {
    const { dataDir, thread } = await oneFinishedTurn();

    // As a kill between saving the finished record and writing the last events leaves it.
    const turnDir = path.join(dataDir, 'threads', thread.id, 'turns', '1');
    const lines = (await readFile(path.join(turnDir, 'events.jsonl'), 'utf8')).trimEnd().split('\n');
    const kept = lines.filter((line) => !line.includes('"turn-done"') && !line.includes('"turn-end"'));
    await writeFile(path.join(turnDir, 'events.jsonl'), `${kept.join('\n')}\n{"seq":998,"type":"tu`);

    const second = await startTestServer({ dataDir });
    try {
      expect(second.server.interruptedOnStart).toBe(0);
      const { events } = await readSse(await fetch(`${second.url}/v1/threads/${thread.id}/turns/1/events`));
      expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({
        type: 'turn-done',
        status: 'finished',
        seq: kept.length + 1,
      });
    } finally {
      await second.close();
    }
  });

  it('an interrupted turn ended when its log was last written, not at the restart', async () => {
    const { dataDir, thread } = await oneFinishedTurn();
    const turnDir = path.join(dataDir, 'threads', thread.id, 'turns', '1');
    const turn = JSON.parse(await readFile(path.join(turnDir, 'turn.json'), 'utf8')) as {
      created_at: number;
    };
    const lines = (await readFile(path.join(turnDir, 'events.jsonl'), 'utf8')).trimEnd().split('\n');
    await writeFile(
      path.join(turnDir, 'events.jsonl'),
      `${lines.filter((line) => !line.includes('"turn-done"')).join('\n')}\n`,
    );
    // The server died three days ago, just after the turn's last event; it is restarted now.
    const askedAt = turn.created_at - 3 * 86_400;
    const diedAt = askedAt + 7;
    await writeFile(
      path.join(turnDir, 'turn.json'),
      JSON.stringify({
        ...turn,
        created_at: askedAt,
        started_at: askedAt + 1,
        status: 'running',
        ended_at: null,
      }),
    );
    await utimes(path.join(turnDir, 'events.jsonl'), diedAt, diedAt);

    const second = await startTestServer({ dataDir });
    try {
      const read = JSON.parse((await rawRequest(second.url, 'GET', `/v1/threads/${thread.id}`)).body) as {
        turns: { status: string; ended_at: number }[];
      };
      expect(read.turns[0]).toMatchObject({ status: 'interrupted', ended_at: diedAt });
    } finally {
      await second.close();
    }
  });
});
