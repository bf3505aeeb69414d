// What bench:server and bench:server-cpu share: the workspace and questions they ask,
// `datalyst serve` started in its own process, and a process's CPU time from /proc.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const QUESTIONS = [
  'Generate a data science report.',
  'Which region sells the most units?',
  'Any outliers in price?',
];
export const csv =
  'region,units,price\nnorth,10,2.5\nsouth,7,3.0\neast,12,2.0\nwest,5,4.5\nnorth,8,2.4\nsouth,9,3.1\n';

/** The value at quantile `q` of `values` (nearest rank). */
export const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};

/** CPU milliseconds (user + system) a process has used so far. */
export async function processCpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface ServeProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `datalyst serve --offline --port 0 --data-dir <dataDir> <args>` of `checkout` (this tree by default),
 * with `nodeArgs` before the entry; resolves with its URL once it says it is serving.
 */
export async function startServe(
  dataDir: string,
  args: readonly string[],
  options: { checkout?: string; nodeArgs?: readonly string[] } = {},
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      path.join(options.checkout ?? repoRoot, 'bin/datalyst.js'),
      'serve',
      '--offline',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
  });
  return {
    url,
    pid: child.pid ?? -1,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Reads a turn's SSE stream to `turn-done`; returns when `turn-running` and `turn-done` arrived. */
export async function followTurn(
  eventsUrl: string,
): Promise<{ runningAt: number; doneAt: number; status: string; seenAt: Map<string, number> }> {
  const seenAt = new Map<string, number>();
  const response = await fetch(eventsUrl);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let runningAt = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error('the event stream ended before turn-done');
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (data === undefined) continue;
      const event = JSON.parse(data.slice(6)) as { type: string; status?: string };
      if (event.type === 'turn-running') runningAt = performance.now();
      if (!seenAt.has(event.type)) seenAt.set(event.type, performance.now());
      if (event.type === 'turn-done') {
        await reader.cancel();
        return { runningAt, doneAt: performance.now(), status: event.status ?? '', seenAt };
      }
    }
  }
}
