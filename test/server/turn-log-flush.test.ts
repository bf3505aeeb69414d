import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { TurnLog } from '../../src/server/turn-log.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const lines = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line.length > 0);

it('a live turn log reaches its file without waiting for the turn to end, and all of it at the end', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'datalyst-turn-log-'));
  dirs.push(dir);
  const file = path.join(dir, 'events.jsonl');
  const log = new TurnLog(file);
  log.append({ type: 'turn-queued', position: 0 });
  log.append({ type: 'turn-running', resumed: false, started_at: 1 });
  // Held back for a moment (one write for the burst), then written while the turn still runs.
  for (let attempt = 0; attempt < 100 && (await lines(file)).length < 2; attempt += 1)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect((await lines(file)).map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([1, 2]);
  log.append({ type: 'turn-done', status: 'finished', termination: null });
  await log.end();
  expect((await lines(file)).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
    'turn-queued',
    'turn-running',
    'turn-done',
  ]);
});
