import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LanguageModel, ModelChunk, ModelRequest, SandboxFactory } from '../../../src/index.ts';
import { startServer, type DatalystServer, type ServerOptions } from '../../../src/server/index.ts';
import { createFakeSandbox, printed, slowCell, type FakeSandbox } from '../../agent/support/fake-session.ts';

/**
 * A scripted model for server tests: a question containing "slow" gets a
 * cell that sleeps until cancelled; "write" gets a cell that writes a file;
 * any other question gets a quick cell; once the cell's output is back the
 * model answers. Each reply streams in small pieces, as a real model's does.
 */
export function scriptedModel(): LanguageModel {
  return {
    id: 'scripted-test-model',
    contextWindowTokens: 32_768,
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const last = request.messages.at(-1)?.content ?? '';
      // The question being answered: the latest user message that is not a cell's output.
      const instruction =
        request.messages.findLast(
          (message) => message.role === 'user' && !message.content.includes('cell-output'),
        )?.content ?? '';
      const reply = last.includes('cell-output')
        ? '<Answer>The mean is 42.</Answer>'
        : instruction.includes('slow')
          ? '<Analyze>Wait.</Analyze><Code>\nslow()\n</Code>'
          : instruction.includes('write')
            ? '<Analyze>Save it.</Analyze><Code>\nwrite()\n</Code>'
            : instruction.includes('chart')
              ? '<Analyze>Draw it.</Analyze><Code>\nchart()\n</Code>'
              : '<Analyze>Look at the data.</Analyze><Code>\nprint(42)\n</Code>';
      for (let at = 0; at < reply.length; at += 8) {
        if (request.signal?.aborted) throw request.signal.reason;
        yield { type: 'text-delta', text: reply.slice(at, at + 8) };
        await new Promise((resolve) => setImmediate(resolve));
      }
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

/** A vega-lite bar chart, as a cell that displays one reports it. */
export const scriptedChart = {
  id: 'chart-1',
  spec: {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    data: { values: [{ region: 'north', units: 18 }] },
    mark: 'bar',
    encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'units', type: 'quantitative' } },
  },
};

/** A fake sandbox: `slow()` waits (until aborted, at most 60 s); `write()` leaves out.csv as an artifact; `chart()` displays `scriptedChart`. */
export function scriptedSandbox(): FakeSandbox {
  const files = new Map<string, Uint8Array>([
    ['out.csv', new TextEncoder().encode('region,total\nnorth,18\n')],
  ]);
  return createFakeSandbox({
    files,
    run: (code, _index, signal) => {
      if (code.includes('slow()')) return slowCell(60_000, signal, printed('cell-output slow\n'));
      if (code.includes('write()'))
        return {
          ...printed('cell-output wrote out.csv\n'),
          files: [{ path: 'out.csv', change: 'created' as const, sizeBytes: 22 }],
        };
      if (code.includes('chart()')) return { ...printed('cell-output chart\n'), charts: [scriptedChart] };
      return printed('cell-output 42\n');
    },
  });
}

export interface TestServer {
  server: DatalystServer;
  url: string;
  dataDir: string;
  sandbox: FakeSandbox;
  /** The server's log lines (JSON), captured instead of going to stderr (unless the test passed its own `log.stream`). */
  logLines: string[];
  close(): Promise<void>;
}

export async function startTestServer(
  options: Partial<Omit<ServerOptions, 'engine'>> & { createSandbox?: SandboxFactory; dataDir?: string } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'datalyst-server-')));
  const sandbox = scriptedSandbox();
  const { createSandbox, ...rest } = options;
  const logLines: string[] = [];
  const server = await startServer({
    port: 0,
    modelId: 'scripted-test-model',
    maxConcurrentTurns: 2,
    maxQueuedTurns: 4,
    ...rest,
    log: { stream: { write: (line: string) => logLines.push(line) }, ...rest.log },
    dataDir,
    engine: { createModel: scriptedModel, createSandbox: createSandbox ?? sandbox.factory, profile: 'chat' },
  });
  return {
    server,
    url: server.url,
    dataDir,
    sandbox,
    logLines,
    async close() {
      await server.close();
      if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE body into events (`id`, parsed `data`), stopping after `limit` events when given. */
export async function readSse(
  response: Response,
  limit = Infinity,
): Promise<{ events: { id: string | null; data: string }[]; raw: string }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const events: { id: string | null; data: string }[] = [];
  let buffer = '';
  while (events.length < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    raw += text;
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1 && events.length < limit) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(':')) continue;
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      events.push({ id, data: data.join('\n') });
    }
  }
  await reader.cancel().catch(() => undefined);
  return { events, raw };
}
